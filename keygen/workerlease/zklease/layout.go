package zklease

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Paths. Leaf's: /snowflake/{name}/forever/{ip}:{port}-{10-digit sequence},
// persistent sequential, the sequence being the worker id. zklease's own,
// beside them (Leaf never reads it): /snowflake/{name}/shardkey/{ip}:{port},
// persistent, holding the holder record, whose ephemeral sequential
// children lock-{sequence} are the lock of that ip:port.
const (
	rootPath    = "/snowflake"
	foreverDir  = "forever"
	holdersDir  = "shardkey"
	lockPrefix  = "lock-"
	seqDigits   = 10 // ZooKeeper's sequence suffix: %010d
	leafSlackMs = int64(LeafReportInterval/time.Millisecond) + 1000
)

func namePath(name string) string         { return rootPath + "/" + name }
func foreverPath(name string) string      { return namePath(name) + "/" + foreverDir }
func holdersPath(name string) string      { return namePath(name) + "/" + holdersDir }
func holderPath(name, addr string) string { return holdersPath(name) + "/" + addr }

// endpoint is the data of a Leaf node, in the JSON Leaf's Jackson writes
// and reads: exactly these three properties (Leaf's ObjectMapper fails on
// unknown ones), port a string, timestamp Unix milliseconds.
type endpoint struct {
	IP        string `json:"ip"`
	Port      string `json:"port"`
	Timestamp int64  `json:"timestamp"`
}

func (e endpoint) encode() []byte {
	b, _ := json.Marshal(e) // three plain fields: cannot fail
	return b
}

// decodeEndpoint reads a forever node's data. Leaf's Jackson reads a
// missing timestamp as 0, an id never used; here the data must carry ip,
// port and a positive timestamp, or it says nothing sure about the id's
// last use (null, {}, a hand edit, another tool's data).
func decodeEndpoint(b []byte) (endpoint, error) {
	var e struct {
		IP        *string `json:"ip"`
		Port      *string `json:"port"`
		Timestamp *int64  `json:"timestamp"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return endpoint{}, fmt.Errorf("node data %q is not Leaf's endpoint JSON: %v", b, err)
	}
	switch {
	case e.IP == nil || e.Port == nil || e.Timestamp == nil:
		return endpoint{}, fmt.Errorf("node data %q lacks ip, port or timestamp", b)
	case *e.Timestamp <= 0:
		return endpoint{}, fmt.Errorf("node data %q has no positive timestamp", b)
	}
	return endpoint{IP: *e.IP, Port: *e.Port, Timestamp: *e.Timestamp}, nil
}

// parseNode splits a forever node's name into its ip:port and worker id.
// It accepts only the names ZooKeeper gives: one '-' and exactly the 10
// digits of its sequence. Leaf also reads "ip:port-5" or "ip:port-+5" as
// id 5 (leafID), which is how a node made by hand can name an id another
// node has.
func parseNode(name string) (addr string, worker int64, err error) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || strings.Count(name, "-") != 1 {
		return "", 0, fmt.Errorf("zklease: node %q is not Leaf's ip:port-sequence", name)
	}
	seq := name[i+1:]
	if len(seq) != seqDigits || strings.Trim(seq, "0123456789") != "" {
		return "", 0, fmt.Errorf("zklease: node %q does not end in ZooKeeper's 10-digit sequence", name)
	}
	w, err := strconv.ParseInt(seq, 10, 32) // Leaf: Integer.parseInt
	if err != nil {
		return "", 0, fmt.Errorf("zklease: node %q has a sequence beyond Leaf's int", name)
	}
	return name[:i], w, nil
}

// leafID is how Leaf's SnowflakeZookeeperHolder reads a forever node's
// name: Java's split("-") (trailing empty pieces dropped), the first piece
// the ip:port, Integer.parseInt of the second the worker id. readable is
// false when Leaf cannot read an id from it (its start then fails).
func leafID(name string) (addr string, id int64, readable bool) {
	pieces := strings.Split(name, "-")
	for len(pieces) > 0 && pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	if len(pieces) < 2 {
		return "", -1, false
	}
	addr = pieces[0]
	id, ok := javaParseInt(pieces[1])
	return addr, id, ok
}

// javaParseInt is Java's Integer.parseInt(s) for s without '-' (the
// separator): an optional '+', then decimal digits of any script that
// Character.digit reads from one UTF-16 unit, up to 2^31-1.
func javaParseInt(s string) (int64, bool) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return -1, false
	}
	var n int64
	for _, r := range s {
		d, ok := decimalDigit(r)
		if !ok {
			return -1, false
		}
		if n = n*10 + int64(d); n > math.MaxInt32 {
			return -1, false
		}
	}
	return n, true
}

// decimalDigit is the value of a decimal digit (Unicode Nd) of the Basic
// Multilingual Plane. Unicode assigns Nd only in contiguous runs 0..9, so
// the value is the distance from the start of its run, modulo 10 (some
// runs follow one another).
func decimalDigit(r rune) (int, bool) {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0'), true
	case r > 0xFFFF || !unicode.Is(unicode.Nd, r):
		return 0, false // Java reads a supplementary digit as two units, neither a digit
	}
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10, true
}

// record is zklease's holder record of an ip:port: what the next holder
// needs to know about the last one. Leaf never reads it.
type record struct {
	// Worker is the worker id (the forever node's sequence) held.
	Worker int64 `json:"worker"`
	// ValidityMs is how long past a report the holder's lease lasted:
	// after an unclean end, keys may carry times up to this past the
	// node's last timestamp.
	ValidityMs int64 `json:"validity_ms"`
	// ClosedVersion is the forever node's data version the holder's clean
	// Close wrote (its timestamp then covers every key issued); -1 while
	// held or after an unclean end.
	ClosedVersion int32 `json:"closed_version"`
	// Holder names the last holder (host, pid); for reading only.
	Holder string `json:"holder,omitempty"`
}

func (r record) encode() []byte {
	b, _ := json.Marshal(r)
	return b
}

// decodeRecord reads the holder record. Empty data is no record (the node
// as Acquire creates it, before its first report wrote one: present is
// false). Anything else must be the record zklease writes, every field
// but holder present, or it is an error: a record read as zeros would
// claim a clean release (closed_version 0) or a validity of nothing.
func decodeRecord(b []byte) (r record, present bool, err error) {
	if len(b) == 0 {
		return record{}, false, nil
	}
	var s struct {
		Worker        *int64  `json:"worker"`
		ValidityMs    *int64  `json:"validity_ms"`
		ClosedVersion *int32  `json:"closed_version"`
		Holder        *string `json:"holder"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return record{}, true, fmt.Errorf("holder record %q is not zklease's JSON: %v", b, err)
	}
	switch {
	case s.Worker == nil || s.ValidityMs == nil || s.ClosedVersion == nil:
		return record{}, true, fmt.Errorf("holder record %q lacks worker, validity_ms or closed_version", b)
	case *s.Worker < 0 || *s.ValidityMs <= 0 || *s.ClosedVersion < -1:
		return record{}, true, fmt.Errorf("holder record %q has a negative worker, no positive validity_ms or a closed_version below -1", b)
	}
	r = record{Worker: *s.Worker, ValidityMs: *s.ValidityMs, ClosedVersion: *s.ClosedVersion}
	if s.Holder != nil {
		r.Holder = *s.Holder
	}
	return r, true, nil
}

// ceilMs is t in Unix milliseconds, rounded up.
func ceilMs(ns int64) int64 {
	ms := ns / int64(time.Millisecond)
	if ns%int64(time.Millisecond) > 0 {
		ms++
	}
	return ms
}

// durationMs is d in whole milliseconds, rounded up: a validity stored for
// the next holder (holder record, cache file) never falls short of the one
// the holder kept, which may end between two milliseconds.
func durationMs(d time.Duration) int64 { return ceilMs(int64(d)) }

// msTime is Unix milliseconds as a time; 0 or less is the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
