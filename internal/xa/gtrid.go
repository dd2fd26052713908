package xa

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Identifiers. A GTRID is "sk1:<logtag>:<ms>:<txid>": logtag is the 16
// hex digits of the random id the decision log holds (see logIDKey), so a
// branch names the one log that decides it; ms is the base36 of the Unix
// millisecond the transaction began (its age, whatever generator issued
// the id), and txid is the base36 of a keygen id followed by nonceLen
// base36 digits of a 48-bit random nonce (ids alone repeat across
// processes sharing a worker id). All lower case, at most
// 4+16+1+9+1+13+10 = 54 bytes.
const (
	gtridPrefix = "sk1:"
	tagLen      = 16
	nonceLen    = 10
	nonceBits   = 48
	// FormatID is the XA formatID of shardkey's MySQL branches ("sk1").
	FormatID = 0x736b31
	// MaxSourceName is the longest data source name 2PC accepts (MySQL's
	// bqual limit).
	MaxSourceName = 64
	maxGTRID      = 64      // MySQL's gtrid limit
	maxMillis     = 1 << 46 // year 4199: keeps ms to 9 base36 digits
	// logIDKey is the gtrid column of the log's own row, outcome 'I',
	// whose branches column holds the log id. It is no GTRID.
	logIDKey = "sk1:log-id"
)

var errBadGTRID = errors.New("not a shardkey GTRID")

// newLogID returns 16 random hex digits.
func newLogID() (string, error) {
	var b [tagLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("xa: log id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// newNonce returns 48 random bits.
func newNonce() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[2:]); err != nil {
		return 0, fmt.Errorf("xa: nonce: %w", err)
	}
	return binary.BigEndian.Uint64(b[:]), nil
}

// formatGTRID builds the GTRID begun at Unix millisecond ms (0 < ms <
// maxMillis) with id (> 0) and nonce (< 2^48) under tag.
func formatGTRID(tag string, ms, id int64, nonce uint64) string {
	n := strconv.FormatUint(nonce, 36)
	return gtridPrefix + tag + ":" + strconv.FormatInt(ms, 36) + ":" + strconv.FormatInt(id, 36) +
		strings.Repeat("0", nonceLen-len(n)) + n
}

// gtridParts are the fields of a parsed GTRID.
type gtridParts struct {
	Tag    string
	Millis int64 // Unix milliseconds the transaction began
	ID     int64
	Nonce  uint64
}

// Born is the time the transaction began.
func (p gtridParts) Born() time.Time { return time.UnixMilli(p.Millis) }

// parseGTRID reads a GTRID formatGTRID wrote; only the canonical spelling
// is accepted, so parse and format round-trip both ways.
func parseGTRID(s string) (gtridParts, error) {
	bad := func(what string) (gtridParts, error) {
		return gtridParts{}, fmt.Errorf("%w: %q: %s", errBadGTRID, s, what)
	}
	rest, ok := strings.CutPrefix(s, gtridPrefix)
	if !ok || len(rest) < tagLen+1 || rest[tagLen] != ':' || !isLowerHex(rest[:tagLen]) {
		return bad("prefix or logtag")
	}
	msPart, tx, ok := strings.Cut(rest[tagLen+1:], ":")
	ms, err := strconv.ParseInt(msPart, 36, 64)
	if !ok || !canonical36(msPart) || err != nil || ms <= 0 || ms >= maxMillis {
		return bad("time")
	}
	if len(tx) < 1+nonceLen || !canonical36(tx) {
		return bad("id")
	}
	idPart, noncePart := tx[:len(tx)-nonceLen], tx[len(tx)-nonceLen:]
	id, err := strconv.ParseInt(idPart, 36, 64)
	if err != nil || id <= 0 {
		return bad("id")
	}
	nonce, err := strconv.ParseUint(noncePart, 36, 64)
	if err != nil || nonce >= 1<<nonceBits {
		return bad("nonce")
	}
	return gtridParts{Tag: rest[:tagLen], Millis: ms, ID: id, Nonce: nonce}, nil
}

// canonical36 is lower-case base36 without a leading zero.
func canonical36(s string) bool { return s != "" && s[0] != '0' && isBase36(s) }

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isBase36(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// ValidSourceName tells whether a data source name can name a 2PC branch:
// 1 to MaxSourceName bytes of [A-Za-z0-9_.-] (it is spliced into a
// PostgreSQL gid literal and is a MySQL bqual).
func ValidSourceName(name string) bool {
	if name == "" || len(name) > MaxSourceName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// PostgresGID is the gid of gtrid's branch on a PostgreSQL data source
// (for tools and tests that must spell it as xa does).
func PostgresGID(gtrid, source string) string { return pgGID(gtrid, source) }

// MySQLXID is the xid of gtrid's branch on a MySQL data source, as SQL
// (XA COMMIT <xid>), for tools and tests that must spell it as xa does.
func MySQLXID(gtrid, source string) string { return mysqlXID(gtrid, source) }

// pgGID is the PostgreSQL gid of gtrid's branch on source: unique in the
// cluster even when two data sources share it.
func pgGID(gtrid, source string) string { return gtrid + ":" + source }

// parsePGGID splits a gid pgGID built; ok is false for any other gid.
func parsePGGID(gid string) (gtrid string, p gtridParts, source string, ok bool) {
	i := strings.LastIndexByte(gid, ':')
	if i < 0 || !ValidSourceName(gid[i+1:]) {
		return "", gtridParts{}, "", false
	}
	p, err := parseGTRID(gid[:i])
	if err != nil {
		return "", gtridParts{}, "", false
	}
	return gid[:i], p, gid[i+1:], true
}

// mysqlXID is the xid of gtrid's branch on source as SQL: hex literals,
// so no quoting is ever needed.
func mysqlXID(gtrid, source string) string {
	return "X'" + hex.EncodeToString([]byte(gtrid)) + "',X'" + hex.EncodeToString([]byte(source)) + "'," + strconv.Itoa(FormatID)
}

// parseMySQLXID reads one XA RECOVER row (formatID, gtrid_length,
// bqual_length, data); ok is false for a branch that is not shardkey's.
func parseMySQLXID(formatID, gtridLen, bqualLen int64, data []byte) (gtrid string, p gtridParts, source string, ok bool) {
	if formatID != FormatID || gtridLen < 0 || bqualLen < 0 || gtridLen+bqualLen != int64(len(data)) {
		return "", gtridParts{}, "", false
	}
	gtrid, source = string(data[:gtridLen]), string(data[gtridLen:])
	if !ValidSourceName(source) {
		return "", gtridParts{}, "", false
	}
	p, err := parseGTRID(gtrid)
	if err != nil {
		return "", gtridParts{}, "", false
	}
	return gtrid, p, source, true
}
