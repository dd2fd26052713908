package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
)

// The vectors below were computed by a Java 17 program (quoted in
// README.md) with java.util.Calendar, java.lang.String/Long.hashCode,
// Math.abs((long) hashCode) % n and BigInteger.mod: the arithmetic of
// ShardingSphere's SnowflakeKeyGenerateAlgorithm, HashModShardingAlgorithm
// and ModShardingAlgorithm.
const (
	epochUTCMillis = 1477958400000 // 2016-11-01 00:00 in a JVM whose zone is UTC
	epochCSTMillis = 1477929600000 // 2016-11-01 00:00 in a JVM in Asia/Shanghai (+08:00)
	issuedMillis   = 1710506096789 // 2024-03-15T12:34:56.789Z
	knownIDCST     = 975496530788118570
)

func TestEpochs(t *testing.T) {
	if got := keygen.ShardingSphereEpoch.UnixMilli(); got != epochUTCMillis {
		t.Errorf("keygen.ShardingSphereEpoch = %d ms, want %d (Java, UTC)", got, epochUTCMillis)
	}
	l, err := keygen.LayoutFor("SNOWFLAKE", keygen.Props{"epoch": "2016-11-01T00:00:00+08:00"})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Epoch.UnixMilli(); got != epochCSTMillis {
		t.Errorf("+08:00 epoch = %d ms, want %d (Java, Asia/Shanghai)", got, epochCSTMillis)
	}
}

func TestDecodeShardingSphereID(t *testing.T) {
	issued := time.UnixMilli(issuedMillis)
	for _, c := range []struct {
		epoch string
		id    int64
	}{
		{"2016-11-01T00:00:00Z", KnownID},
		{"2016-11-01T00:00:00+08:00", knownIDCST},
	} {
		// The layout by hand: 41 bits of ms since the epoch, 10 of worker, 12 of sequence.
		if got := c.id >> 22; got != issuedMillis-mustLayout(t, c.epoch).Epoch.UnixMilli() {
			t.Errorf("%d: time field %d", c.id, got)
		}
		if w, s := c.id>>12&(1<<10-1), c.id&(1<<12-1); w != 7 || s != 42 {
			t.Errorf("%d: worker %d sequence %d by hand, want 7, 42", c.id, w, s)
		}
		// keygen's decoding agrees.
		l := mustLayout(t, c.epoch)
		p, err := l.Decompose(c.id)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Time.Equal(issued) || p.Worker != 7 || p.Sequence != 42 || p.Datacenter != 0 || p.ClockBack != 0 {
			t.Errorf("epoch %s: Decompose(%d) = %+v, want %s worker 7 sequence 42", c.epoch, c.id, p, issued.UTC())
		}
		id, err := l.Compose(keygen.Parts{Time: issued, Worker: 7, Sequence: 42})
		if err != nil || id != c.id {
			t.Errorf("epoch %s: Compose = %d, %v; want %d", c.epoch, id, err, c.id)
		}
	}
	// The wrong epoch reads a +08:00 JVM's key eight hours late.
	p, err := mustLayout(t, "2016-11-01T00:00:00Z").Decompose(knownIDCST)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Time.Sub(issued); d != 8*time.Hour {
		t.Errorf("+08:00 key read with the UTC epoch is off by %s, want 8h", d)
	}
}

func mustLayout(t *testing.T, epoch string) keygen.Layout {
	t.Helper()
	l, err := keygen.LayoutFor("SNOWFLAKE", keygen.Props{"epoch": epoch})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The rule file's generator, run at the known ID's millisecond as worker 7,
// issues keys that differ from the Java key only in the sequence.
func TestGeneratedKeysMatchTheJavaLayout(t *testing.T) {
	clock := keygentest.NewClock(time.UnixMilli(issuedMillis))
	r, err := newRouter("7", "2016-11-01T00:00:00Z", keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	col, gen, ok := r.KeyGenerator("t_order")
	if !ok || col != "order_id" {
		t.Fatalf("KeyGenerator(t_order) = %q, %v", col, ok)
	}
	for i := 0; i < 5; i++ {
		k, err := gen.NextKey(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		id := k.(int64)
		if id&^(1<<12-1) != KnownID&^(1<<12-1) {
			t.Errorf("key %d: time and worker %d, want %d", id, id>>12, KnownID>>12)
		}
	}
}

func TestHashModStrings(t *testing.T) {
	r, err := newRouter("900", "2016-11-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s     string
		hash  int32 // Java's String.hashCode (for the record)
		table int   // Math.abs((long) hash) % 3
	}{
		{"alice@example.com", 2145772861, 1},
		{"bob@example.com", 467379442, 1},
		{"Alice@example.com", 1789535517, 0},   // case matters
		{"李雷@example.cn", -1465318746, 0},      // UTF-16 code units
		{"😀", 1772899, 1},                      // a surrogate pair
		{"polygenelubricants", -2147483648, 2}, // Integer.MIN_VALUE: abs after widening to long
		{"", 0, 0},
	} {
		ts, err := r.Route("t_user", shardconf.Eq("email", c.s))
		if err != nil {
			t.Fatalf("%q: %v", c.s, err)
		}
		if want := fmt.Sprintf("ds_0.t_user_%d", c.table); len(ts) != 1 || ts[0].String() != want {
			t.Errorf("email %q (hashCode %d) -> %v, want %s", c.s, c.hash, ts, want)
		}
	}
}

func TestHashModAndModLongs(t *testing.T) {
	r, err := newRouter("900", "2016-11-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v          int64
		hash       int32 // Java's Long.hashCode (for the record)
		hashMod5   int   // HASH_MOD 5: t_account_N
		mod2, mod4 int   // MOD 2 (data source), MOD 4 (table): BigInteger.mod
	}{
		{7, 7, 2, 1, 3},
		{42, 42, 2, 0, 2},
		{-5, 4, 4, 1, 3},
		{1<<32 + 5, 4, 4, 1, 1},
		{KnownID, 684280634, 4, 0, 2},
		{1331112646153367553, 1014595559, 4, 1, 1},
		{-1 << 63, -2147483648, 3, 0, 0},
		{1<<63 - 1, -2147483648, 3, 1, 3},
	} {
		ts, err := r.Route("t_account", shardconf.Eq("account_id", c.v))
		if err != nil {
			t.Fatalf("%d: %v", c.v, err)
		}
		if want := fmt.Sprintf("ds_0.t_account_%d", c.hashMod5); len(ts) != 1 || ts[0].String() != want {
			t.Errorf("account_id %d (Long.hashCode %d) -> %v, want %s", c.v, c.hash, ts, want)
		}
		ts, err = r.Route("t_order", shardconf.Eq("user_id", c.v), shardconf.Eq("order_id", c.v))
		if err != nil {
			t.Fatalf("%d: %v", c.v, err)
		}
		if want := fmt.Sprintf("ds_%d.t_order_%d", c.mod2, c.mod4); len(ts) != 1 || ts[0].String() != want {
			t.Errorf("user_id = order_id = %d -> %v, want %s", c.v, ts, want)
		}
	}
}

// ShardingSphere hashes a SQL literal that fits an int as an Integer
// (Integer.hashCode(-5) = -5, so HASH_MOD 5 gives 0), but a value bound with
// setLong as a Long (Long.hashCode(-5) = 4, so 4). shardconf hashes every
// integer as a Long, whatever its Go type: the two agree for 0..2^31-1.
func TestIntegersHashAsJavaLong(t *testing.T) {
	r, err := newRouter("900", "2016-11-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{int(-5), int32(-5), int64(-5)} {
		ts, err := r.Route("t_account", shardconf.Eq("account_id", v))
		if err != nil || len(ts) != 1 || ts[0].Table != "t_account_4" {
			t.Errorf("account_id %T(-5) -> %v, %v; want t_account_4 (Long.hashCode)", v, ts, err)
		}
	}
}

func TestMissingShardingKey(t *testing.T) {
	r, err := newRouter("900", "2016-11-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Route("t_order", shardconf.Eq("order_id", int64(1))); err == nil {
		t.Error("t_order without user_id routed")
	}
}

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), "900", "2016-11-01T00:00:00Z", KnownID, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"decode 975375734832918570: time 2024-03-15T12:34:56.789Z, worker 7, sequence 42",
		"worker 900",
		"t_user email=alice@example.com -> [ds_0.t_user_1]",
		"t_user email=polygenelubricants -> [ds_0.t_user_2]",
		"t_account account_id=-5 -> [ds_0.t_account_4]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
