package xa

import (
	"encoding/hex"
	"math"
	"strings"
	"testing"
	"time"
)

func TestGTRIDRoundTripsAndFitsMySQLLimit(t *testing.T) {
	cases := []struct {
		ms, id int64
		nonce  uint64
	}{{1, 1, 0}, {1, 1, 1<<nonceBits - 1}, {maxMillis - 1, math.MaxInt64, 0},
		{maxMillis - 1, math.MaxInt64, 1<<nonceBits - 1}, {1795000000000, 1234567890123, 42}}
	for _, tc := range cases {
		tag := "00112233445566ff"
		g := formatGTRID(tag, tc.ms, tc.id, tc.nonce)
		if len(g) > maxGTRID {
			t.Fatalf("%q is %d bytes, over MySQL's %d", g, len(g), maxGTRID)
		}
		p, err := parseGTRID(g)
		if err != nil {
			t.Fatalf("parse %q: %v", g, err)
		}
		if p.Tag != tag || p.Millis != tc.ms || p.ID != tc.id || p.Nonce != tc.nonce {
			t.Fatalf("parse %q = %+v, want %s %d %d %d", g, p, tag, tc.ms, tc.id, tc.nonce)
		}
		if !p.Born().Equal(time.UnixMilli(tc.ms)) {
			t.Fatalf("Born %v", p.Born())
		}
	}
}

func TestParseGTRIDRefusesOtherFormats(t *testing.T) {
	good := formatGTRID("0123abcd0123abcd", 1795000000000, 99, 7)
	parts := strings.Split(good, ":")
	ms, tx := parts[2], parts[3]
	if good != "sk1:0123abcd0123abcd:mwm0nk74:2r0000000007" {
		t.Fatalf("layout of %q", good)
	}
	bad := []string{
		"", "sk1:", "sk2:0123abcd:" + ms + ":" + tx, "sk1:0123ABCD0123ABCD:" + ms + ":" + tx, "sk1:0123abcd0123abc:" + ms + ":" + tx,
		"sk1:0123abcd0123abcd:" + strings.ToUpper(ms) + ":" + tx, "sk1:0123abcd0123abcd:0" + ms + ":" + tx, "sk1:0123abcd0123abcd::" + tx,
		"sk1:0123abcd0123abcd:" + ms + tx, "sk1:0123abcd0123abcd:" + ms + ":" + tx[len(tx)-nonceLen:], "sk1:0123abcd0123abcd:" + ms + ":0" + tx,
		"sk1:0123abcd0123abcd:" + ms + ":" + strings.ToUpper(tx), "sk1:0123abcd0123abcd:" + ms + ":" + tx + ":x",
		"sk1:0123abcd0123abcd:zzzzzzzzzz:" + tx,                                  // time past maxMillis
		"sk1:0123abcd0123abcd:" + ms + ":zzzzzzzzzzzzzz" + tx[len(tx)-nonceLen:], // id overflows int64
		"sk1:0123abcd0123abcd:" + ms + ":1zzzzzzzzzz",                            // nonce ≥ 2^48
		good + ":ds0", "xid-from-someone-else",
	}
	for _, s := range bad {
		if _, err := parseGTRID(s); err == nil {
			t.Errorf("parseGTRID(%q) accepted", s)
		}
	}
}

func TestLogIDsAreSixteenRandomHexDigits(t *testing.T) {
	a, err := newLogID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newLogID()
	if len(a) != tagLen || !isLowerHex(a) || a == b {
		t.Fatalf("log ids %q, %q", a, b)
	}
	if _, err := parseGTRID(formatGTRID(a, 1, 1, 1)); err != nil {
		t.Fatalf("a GTRID under log id %s: %v", a, err)
	}
}

func TestPGGIDRoundTripsAndRejectsForeignGIDs(t *testing.T) {
	g := formatGTRID("deadbeefdeadbeef", 1795000000000, 5, 6)
	gid := pgGID(g, "ds_0.a-b")
	gt, p, src, ok := parsePGGID(gid)
	if !ok || gt != g || src != "ds_0.a-b" || p.ID != 5 {
		t.Fatalf("parsePGGID(%q) = %q %+v %q %v", gid, gt, p, src, ok)
	}
	for _, s := range []string{g, g + ":", g + ":bad name", "other:gid:ds0", "sk1:deadbeefdeadbeef:1:x:ds0"} {
		if _, _, _, ok := parsePGGID(s); ok {
			t.Errorf("parsePGGID(%q) accepted", s)
		}
	}
}

func TestMySQLXIDIsHexLiteralsAndRecoverRowRoundTrips(t *testing.T) {
	g := formatGTRID("deadbeefdeadbeef", 1795000000000, 5, 6)
	xid := mysqlXID(g, "ds1")
	want := "X'" + hex.EncodeToString([]byte(g)) + "',X'" + hex.EncodeToString([]byte("ds1")) + "',7564081"
	if xid != want {
		t.Fatalf("xid %s, want %s", xid, want)
	}
	data := []byte(g + "ds1")
	gt, _, src, ok := parseMySQLXID(FormatID, int64(len(g)), 3, data)
	if !ok || gt != g || src != "ds1" {
		t.Fatalf("parseMySQLXID = %q %q %v", gt, src, ok)
	}
	if _, _, _, ok := parseMySQLXID(1, int64(len(g)), 3, data); ok {
		t.Error("another formatID accepted")
	}
	if _, _, _, ok := parseMySQLXID(FormatID, int64(len(g)), 2, data); ok {
		t.Error("lengths not matching the data accepted")
	}
	if _, _, _, ok := parseMySQLXID(FormatID, 3, int64(len(g)), []byte("ds1"+g)); ok {
		t.Error("swapped gtrid and bqual accepted")
	}
}

func TestValidSourceName(t *testing.T) {
	for _, s := range []string{"ds0", "a.b-c_D9", strings.Repeat("x", MaxSourceName)} {
		if !ValidSourceName(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", "a b", "a:b", "a'b", "é", strings.Repeat("x", MaxSourceName+1)} {
		if ValidSourceName(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

// FuzzParseGTRID: whatever parses formats back to the same text, and
// never panics.
func FuzzParseGTRID(f *testing.F) {
	f.Add(formatGTRID("0123abcd0123abcd", 1, 1, 0))
	f.Add(formatGTRID("ffffffffffffffff", maxMillis-1, math.MaxInt64, 1<<nonceBits-1))
	f.Add("sk1:0000000000000000:1:")
	f.Add("sk1:0123abcd0123abcd:1:00000000000")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseGTRID(s)
		if err != nil {
			return
		}
		if back := formatGTRID(p.Tag, p.Millis, p.ID, p.Nonce); back != s {
			t.Fatalf("parse(%q) = %+v formats back as %q", s, p, back)
		}
		if len(s) > maxGTRID {
			t.Fatalf("accepted %d bytes", len(s))
		}
	})
}

func FuzzParsePGGID(f *testing.F) {
	f.Add(pgGID(formatGTRID("0123abcd0123abcd", 1, 1, 0), "ds0"))
	f.Add("sk1:0123abcd0123abcd:1:1:ds0")
	f.Fuzz(func(t *testing.T, s string) {
		g, p, src, ok := parsePGGID(s)
		if !ok {
			return
		}
		if pgGID(g, src) != s || formatGTRID(p.Tag, p.Millis, p.ID, p.Nonce) != g || !ValidSourceName(src) {
			t.Fatalf("parsePGGID(%q) = %q %q does not round-trip", s, g, src)
		}
	})
}
