package shardconf

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

func atLayout(t *testing.T, typ string, props keygen.Props) *keygen.Layout {
	t.Helper()
	l, err := keygen.LayoutFor(typ, props)
	if err != nil {
		t.Fatal(err)
	}
	return &l
}

func atKey(t *testing.T, l *keygen.Layout, p keygen.Parts) int64 {
	t.Helper()
	id, err := l.Compose(p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestSnowflakeBits(t *testing.T) {
	l := atLayout(t, "SNOWFLAKE", keygen.Props{"datacenter-bits": "3"}) // 41 | dc 3 | worker 7 | seq 12
	targets := atNames("t_", 4)
	compile := func(props map[string]string, targets []string) shardFunc {
		t.Helper()
		f, err := atTrySpec(algoSpec{typ: "SNOWFLAKE_BITS", props: props, targets: targets, keyLayout: l})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	at := time.Date(2024, 3, 15, 10, 0, 0, 0, time.UTC)
	key := atKey(t, l, keygen.Parts{Time: at, Datacenter: 5, Worker: 99, Sequence: 4093})

	seq := compile(nil, targets) // sequence, all 12 bits, count = 4 targets
	wantSeq := fmt.Sprintf("t_%d", 4093%4)
	for _, c := range []struct {
		v    any
		want string
	}{
		{key, wantSeq},
		{keygen.ID(key), wantSeq},
		{fmt.Sprint(key), wantSeq},
		{int64(0), "t_0"},
		{int64(-1), "error"},
		{int64(math.MaxInt64), "t_3"}, // 63 bits used: every int64 >= 0 is a key
		{uint64(math.MaxUint64), "error"},
		{"x", "error"},
		{1.5, "error"},
		{at, "error"},
	} {
		if got := atName(t, seq, targets, c.v); got != c.want {
			t.Errorf("sequence %v -> %q, want %q", c.v, got, c.want)
		}
	}
	if got := atRange(t, seq, targets, key, true, key+10, true); got != strings.Join(targets, ",") {
		t.Errorf("sequence range: %q", got)
	}

	for _, c := range []struct {
		props map[string]string
		want  int64
	}{
		{map[string]string{"field": "worker"}, 99 % 4},
		{map[string]string{"field": "WORKER", "bits": "2"}, (99 & 3) % 4},
		{map[string]string{"field": "datacenter", "sharding-count": "3"}, 5 % 3},
		{map[string]string{"field": "sequence", "bits": "3"}, (4093 & 7) % 4},
		{map[string]string{"field": "time", "bits": "10"}, (at.UnixMilli() - l.Epoch.UnixMilli()) & 1023 % 4},
	} {
		ts := targets
		if c.props["sharding-count"] == "3" {
			ts = targets[:3]
		}
		f := compile(c.props, ts)
		if got, want := atName(t, f, ts, key), fmt.Sprintf("t_%d", c.want); got != want {
			t.Errorf("%v: %q, want %q", c.props, got, want)
		}
	}

	// Time field: a key range is a time range.
	tf := compile(map[string]string{"field": "time"}, targets)
	k0 := atKey(t, l, keygen.Parts{Time: at})
	k1 := atKey(t, l, keygen.Parts{Time: at.Add(time.Millisecond), Sequence: 4095})
	k3 := atKey(t, l, keygen.Parts{Time: at.Add(3 * time.Millisecond)})
	ts0 := at.UnixMilli() - l.Epoch.UnixMilli()
	name := func(ts int64) string { return fmt.Sprintf("t_%d", ts%4) }
	for _, c := range []struct {
		lo, hi     any
		loIn, hiIn bool
		want       string
	}{
		{k0, k0 + 5, true, true, name(ts0)},
		{k0, k1, true, true, strings.Join(atSorted(name(ts0), name(ts0+1)), ",")},
		{k0, k1 + 1, true, false, strings.Join(atSorted(name(ts0), name(ts0+1)), ",")},
		{k0, k3, true, false, strings.Join(atSorted(name(ts0), name(ts0+1), name(ts0+2)), ",")},
		{k0, k3, true, true, strings.Join(targets, ",")},
		{nil, k0, true, true, strings.Join(targets, ",")},
		{k3, k0, true, true, ""},
		{int64(-5), int64(-1), true, true, ""},
		{uint64(math.MaxUint64), nil, true, true, ""},
		{"x", k0, true, true, "error"},
	} {
		if got := atRange(t, tf, targets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("time range %v..%v: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	// Low bits of time wrap: with 2 bits, timestamps ...11 and ...00 are
	// neighbours.
	tw := compile(map[string]string{"field": "time", "bits": "2"}, targets)
	var kw int64
	for d := 0; ; d++ {
		k := atKey(t, l, keygen.Parts{Time: at.Add(time.Duration(d) * time.Millisecond)})
		if (k>>22)&3 == 3 {
			kw = k
			break
		}
	}
	if got := atRange(t, tw, targets, kw, true, kw+(1<<22), true); got != "t_0,t_3" {
		t.Errorf("wrapping time bits: %q", got)
	}
}

func atSorted(names ...string) []string {
	m := map[string]bool{}
	var out []string
	for _, n := range names {
		if !m[n] {
			m[n] = true
			out = append(out, n)
		}
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestSnowflakeBitsLayouts(t *testing.T) {
	// SNOWFLAKE_JS: 53 bits, a backup bit between time and worker.
	js := atLayout(t, "SNOWFLAKE_JS", nil)
	targets := atNames("t_", 16)
	f, err := atTrySpec(algoSpec{typ: "SNOWFLAKE_BITS", props: map[string]string{"field": "worker"}, targets: targets, keyLayout: js})
	if err != nil {
		t.Fatal(err)
	}
	key := atKey(t, js, keygen.Parts{Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Worker: 11, Backup: true, Sequence: 7})
	if got := atName(t, f, targets, key); got != "t_11" {
		t.Errorf("JS worker: %q", got)
	}
	if got := atName(t, f, targets, int64(1)<<53); got != "error" {
		t.Errorf("above 53 bits: %q", got)
	}
	if got := atRange(t, f, targets, int64(1)<<53, true, nil, true); got != "" {
		t.Errorf("range above the layout: %q", got)
	}
	// UID: 31-bit seconds, 19-bit worker, 13-bit sequence.
	uid := atLayout(t, "UID", nil)
	f, err = atTrySpec(algoSpec{typ: "SNOWFLAKE_BITS", props: map[string]string{"bits": "4"}, targets: targets, keyLayout: uid})
	if err != nil {
		t.Fatal(err)
	}
	key = atKey(t, uid, keygen.Parts{Timestamp: 12345, Worker: 77, Sequence: 8191})
	if got := atName(t, f, targets, key); got != "t_15" {
		t.Errorf("UID sequence: %q", got)
	}
}

func TestSnowflakeBitsErrors(t *testing.T) {
	l := atLayout(t, "SNOWFLAKE", nil) // no datacenter bits
	targets := atNames("t_", 4)
	try := func(props map[string]string, targets []string, layout *keygen.Layout) error {
		_, err := atTrySpec(algoSpec{typ: "SNOWFLAKE_BITS", props: props, targets: targets, keyLayout: layout})
		return err
	}
	atErrContains(t, try(nil, targets, nil), "SNOWFLAKE_BITS needs the table's keyGenerateStrategy to name a Snowflake-family key generator")
	atPropErr(t, try(map[string]string{"field": "dc"}, targets, l), "field")
	atPropErr(t, try(map[string]string{"field": "datacenter"}, targets, l), "field")
	atPropErr(t, try(map[string]string{"bits": "13"}, targets, l), "bits")
	atPropErr(t, try(map[string]string{"bits": "0"}, targets, l), "bits")
	atPropErr(t, try(map[string]string{"sharding-count": "0"}, targets, l), "sharding-count")
	atPropErr(t, try(map[string]string{"bits": "2", "sharding-count": "5"}, atNames("t_", 5), l), "sharding-count")
	atPropErr(t, try(map[string]string{"sharding-volume": "5"}, targets, l), "sharding-volume")
	if err := try(map[string]string{"sharding-count": "5"}, targets, l); err != nil {
		t.Errorf("sharding-count above the targets: %v", err)
	}
	atErrContains(t, try(nil, []string{"t_2", "t_3"}, l), "sharding-count 2 but no target ends in any shard's suffix")
	bad := *l
	bad.TimeBits = 60
	atErrContains(t, try(nil, targets, &bad), "SNOWFLAKE_BITS")
}

func TestSnowflakeBitsNoAllocs(t *testing.T) {
	l := atLayout(t, "SNOWFLAKE", nil)
	f, err := atTrySpec(algoSpec{typ: "SNOWFLAKE_BITS", props: map[string]string{"field": "time", "bits": "8"}, targets: atNames("t_", 16), keyLayout: l})
	if err != nil {
		t.Fatal(err)
	}
	v := value{kind: kindInt, i: 1331042935696789505}
	if n := testing.AllocsPerRun(1000, func() { _, _ = f.one(v) }); n != 0 {
		t.Errorf("%v allocs per run", n)
	}
}

func TestSnowflakeInterval(t *testing.T) {
	l := atLayout(t, "SNOWFLAKE", nil)
	targets := atMonthly("t_order_", 2024, 1, 12)
	compile := func(props map[string]string, targets []string) shardFunc {
		t.Helper()
		f, err := atTrySpec(algoSpec{typ: "SNOWFLAKE_INTERVAL", props: props, targets: targets, keyLayout: l})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	key := func(tm time.Time) int64 { return atKey(t, l, keygen.Parts{Time: tm, Worker: 3, Sequence: 9}) }
	f := compile(map[string]string{"sharding-suffix-pattern": "yyyyMM"}, targets)
	cst := compile(map[string]string{"sharding-suffix-pattern": "yyyyMM", "time-zone": "+08:00"}, targets)
	endOfMarch := time.Date(2024, 3, 31, 20, 0, 0, 0, time.UTC) // April 1st in +08:00
	for _, c := range []struct {
		f    shardFunc
		v    any
		want string
	}{
		{f, key(time.Date(2024, 3, 15, 10, 0, 0, 0, time.UTC)), "t_order_202403"},
		{f, keygen.ID(key(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))), "t_order_202403"},
		{f, fmt.Sprint(key(time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC))), "t_order_202402"},
		{f, key(endOfMarch), "t_order_202403"},
		{cst, key(endOfMarch), "t_order_202404"},
		{f, key(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), ""},
		{f, key(time.Date(2023, 12, 31, 0, 0, 0, 0, time.UTC)), ""},
		{f, int64(-1), "error"},
		{f, "2024-03-01", "error"},
		{f, time.Now(), "error"},
	} {
		if got := atName(t, c.f, targets, c.v); got != c.want {
			t.Errorf("SNOWFLAKE_INTERVAL %v -> %q, want %q", c.v, got, c.want)
		}
	}
	feb10 := key(time.Date(2024, 2, 10, 0, 0, 0, 0, time.UTC))
	apr2 := key(time.Date(2024, 4, 2, 0, 0, 0, 0, time.UTC))
	may1 := atKey(t, l, keygen.Parts{Time: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}) // the first key of May
	for _, c := range []struct {
		lo, hi     any
		loIn, hiIn bool
		want       string
	}{
		{feb10, apr2, true, true, "t_order_202402,t_order_202403,t_order_202404"},
		{feb10, may1, true, false, "t_order_202402,t_order_202403,t_order_202404"},
		{feb10, may1, true, true, "t_order_202402,t_order_202403,t_order_202404,t_order_202405"},
		{apr2, nil, true, true, strings.Join(targets[3:], ",")},
		{nil, feb10, true, true, "t_order_202401,t_order_202402"},
		{nil, nil, true, true, strings.Join(targets, ",")},
		{apr2, feb10, true, true, ""},
		{int64(-10), int64(-1), true, true, ""},
		{int64(0), feb10, true, true, "t_order_202401,t_order_202402"},
		{uint64(math.MaxUint64), nil, true, true, ""},
		{feb10, uint64(math.MaxUint64), true, true, strings.Join(targets[1:], ",")},
		{"x", nil, true, true, "error"},
	} {
		if got := atRange(t, f, targets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("SNOWFLAKE_INTERVAL range %v..%v: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}

	// Days, and a pattern with literals; non-matching targets are ignored.
	days := []string{"t_order", "t_2024_03_14", "t_2024_03_15", "t_2024_03_16"}
	f = compile(map[string]string{"sharding-suffix-pattern": "yyyy_MM_dd"}, days)
	if got := atName(t, f, days, key(time.Date(2024, 3, 15, 23, 0, 0, 0, time.UTC))); got != "t_2024_03_15" {
		t.Errorf("days: %q", got)
	}
	// Yearly tables named yyyyMM with MONTHS... no: YEARS with a month
	// pattern routes to the January table.
	yearly := []string{"t_202401", "t_202501"}
	f = compile(map[string]string{"sharding-suffix-pattern": "yyyyMM", "datetime-interval-unit": "YEARS"}, yearly)
	if got := atName(t, f, yearly, key(time.Date(2024, 8, 1, 0, 0, 0, 0, time.UTC))); got != "t_202401" {
		t.Errorf("yearly: %q", got)
	}
	// A finer unit than the pattern: days with a month pattern is monthly.
	f = compile(map[string]string{"sharding-suffix-pattern": "yyyyMM", "datetime-interval-unit": "days"}, targets)
	if got := atName(t, f, targets, key(time.Date(2024, 8, 9, 0, 0, 0, 0, time.UTC))); got != "t_order_202408" {
		t.Errorf("days unit, month pattern: %q", got)
	}
	if loc, err := time.LoadLocation("Asia/Shanghai"); err == nil {
		_ = loc
		f = compile(map[string]string{"sharding-suffix-pattern": "yyyyMM", "time-zone": "Asia/Shanghai"}, targets)
		if got := atName(t, f, targets, key(endOfMarch)); got != "t_order_202404" {
			t.Errorf("Asia/Shanghai: %q", got)
		}
	}
}

func TestSnowflakeIntervalErrors(t *testing.T) {
	l := atLayout(t, "SNOWFLAKE", nil)
	targets := atMonthly("t_", 2024, 1, 12)
	try := func(props map[string]string, targets []string, layout *keygen.Layout) error {
		_, err := atTrySpec(algoSpec{typ: "SNOWFLAKE_INTERVAL", props: props, targets: targets, keyLayout: layout})
		return err
	}
	atErrContains(t, try(map[string]string{"sharding-suffix-pattern": "yyyyMM"}, targets, nil),
		"SNOWFLAKE_INTERVAL needs the table's keyGenerateStrategy to name a Snowflake-family key generator")
	for _, c := range []struct {
		props map[string]string
		key   string
	}{
		{map[string]string{}, "sharding-suffix-pattern"},
		{map[string]string{"sharding-suffix-pattern": "yyyyMMddHH"}, "sharding-suffix-pattern"},
		{map[string]string{"sharding-suffix-pattern": "MMdd"}, "sharding-suffix-pattern"},
		{map[string]string{"sharding-suffix-pattern": "yyyyM"}, "sharding-suffix-pattern"},
		{map[string]string{"sharding-suffix-pattern": "yyyyMMM"}, "sharding-suffix-pattern"},
		{map[string]string{"sharding-suffix-pattern": "yyyyMMQQ"}, "sharding-suffix-pattern"}, // a quarter cannot be read back
		{map[string]string{"sharding-suffix-pattern": "yyyyQQ"}, "sharding-suffix-pattern"},
		{map[string]string{"sharding-suffix-pattern": "yyyyMM", "datetime-interval-unit": "WEEKS"}, "datetime-interval-unit"},
		{map[string]string{"sharding-suffix-pattern": "yyyyMM", "time-zone": "Mars/Olympus"}, "time-zone"},
		{map[string]string{"sharding-suffix-pattern": "yyyyMM", "time-zone": "+25:00"}, "time-zone"},
		{map[string]string{"sharding-suffix-pattern": "yyyyMM", "field": "time"}, "field"},
	} {
		atPropErr(t, try(c.props, targets, l), c.key)
	}
	atErrContains(t, try(map[string]string{"sharding-suffix-pattern": "yyyy_MM"}, targets, l), "no target ends in a \"yyyy_MM\" suffix")
	atErrContains(t, try(map[string]string{"sharding-suffix-pattern": "yyyyMM"}, []string{"a_202401", "b_202401"}, l), "a_202401 and b_202401")
}
