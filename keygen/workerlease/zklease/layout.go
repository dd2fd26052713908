package zklease

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
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

func decodeEndpoint(b []byte) (endpoint, error) {
	var e endpoint
	if err := json.Unmarshal(b, &e); err != nil {
		return endpoint{}, fmt.Errorf("zklease: node data %q is not Leaf's endpoint JSON: %w", b, err)
	}
	return e, nil
}

// parseNode splits a forever node's name into its ip:port and worker id,
// as Leaf reads it (Leaf splits at '-'; a name it cannot read is refused
// here too).
func parseNode(name string) (addr string, worker int64, err error) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || strings.Count(name, "-") != 1 {
		return "", 0, fmt.Errorf("zklease: node %q is not Leaf's ip:port-sequence", name)
	}
	w, err := strconv.ParseInt(name[i+1:], 10, 32) // Leaf: Integer.parseInt
	if err != nil || w < 0 {
		return "", 0, fmt.Errorf("zklease: node %q has no sequence Leaf can read", name)
	}
	return name[:i], w, nil
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

func decodeRecord(b []byte, r *record) bool {
	return len(b) > 0 && json.Unmarshal(b, r) == nil
}

// ceilMs is t in Unix milliseconds, rounded up.
func ceilMs(ns int64) int64 {
	ms := ns / int64(time.Millisecond)
	if ns%int64(time.Millisecond) > 0 {
		ms++
	}
	return ms
}

// msTime is Unix milliseconds as a time; 0 or less is the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
