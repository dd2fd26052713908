package shardconf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ---- AUTO_INTERVAL ----

// Java 17: (int) Math.ceil(Double.parseDouble(new DecimalFormat("0.00")
// .format((double) s / seconds))), before clamping.
var atJavaAutoPartitions = []struct{ s, seconds, p int64 }{
	{0, 4, 0}, {1, 4, 1}, {4, 4, 1}, {5, 4, 2}, {16, 4, 4}, {17, 4, 5}, {-1, 4, 0},
	{201, 200, 1}, {601, 200, 3}, {4004, 1000, 4}, {4005, 1000, 4}, {4006, 1000, 5},
	{1, 8, 1}, {8001, 8, 1001}, {259631, 86400, 3}, {259632, 86400, 3}, {259633, 86400, 4},
	{864001, 86400, 10}, {360017, 3600, 100}, {360018, 3600, 100}, {360019, 3600, 101},
	{7, 1400, 1}, {8, 1400, 1}, {1407, 1400, 1}, {1408, 1400, 2}, {2807, 1400, 2}, {2808, 1400, 3},
	{1000000007, 200000000, 5}, {10005, 2000, 5}, {10010, 2000, 5}, {10011, 2000, 6},
}

// atAutoRef is the Java computation done with decimal text, as Java does.
func atAutoRef(s, seconds int64) int64 {
	text := strconv.FormatFloat(float64(s)/float64(seconds), 'f', 2, 64)
	f, _ := strconv.ParseFloat(text, 64)
	return max(int64(math.Ceil(f)), 0)
}

func TestAutoIntervalPartitionMath(t *testing.T) {
	for _, c := range atJavaAutoPartitions {
		a := &autoIntervalAlgorithm{seconds: c.seconds, tables: 1 << 40}
		if got := a.partition(c.s); int64(got) != c.p {
			t.Errorf("partition(%d s / %d): %d, Java %d", c.s, c.seconds, got, c.p)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		seconds := rng.Int64N(1_000_000) + 1
		var s int64
		switch i % 3 {
		case 0:
			s = rng.Int64N(1 << 40)
		case 1: // next to a boundary
			s = rng.Int64N(10000)*seconds + rng.Int64N(seconds/100+2) - seconds/200
		default:
			s = rng.Int64N(100 * seconds)
		}
		a := &autoIntervalAlgorithm{seconds: seconds, tables: 1 << 50}
		if got, want := int64(a.partition(s)), atAutoRef(s, seconds); got != want {
			t.Fatalf("partition(%d / %d) = %d, decimal reference %d", s, seconds, got, want)
		}
	}
}

func TestAutoInterval(t *testing.T) {
	targets := atNames("t_order_", 6)
	props := map[string]string{"datetime-lower": "2020-01-01 00:00:00", "datetime-upper": "2020-01-01 00:00:16", "sharding-seconds": "4"}
	f := atCompile(t, "AUTO_INTERVAL", props, targets)
	plus8 := time.FixedZone("+08", 8*3600)
	for _, c := range []struct {
		v    any
		want string
	}{
		{"2020-01-01 00:00:00", "t_order_0"},
		{"2020-01-01 00:00:01", "t_order_1"},
		{"2020-01-01 00:00:04", "t_order_1"},
		{"2020-01-01 00:00:05", "t_order_2"},
		{"2020-01-01 00:00:16", "t_order_4"},
		{"2020-01-01 00:00:17", "t_order_5"},
		{"2019-12-31 23:59:59", "t_order_0"},
		{"2021-01-01 00:00:00", "t_order_5"},
		{"2020-01-01 00:00:05.999", "t_order_2"}, // java.sql.Timestamp's toString
		{"2020-01-01 00:00:05xyz", "t_order_2"},  // parsed from position 0
		{time.Date(2020, 1, 1, 0, 0, 5, 999, plus8), "t_order_2"},
		{time.Date(2020, 1, 1, 0, 0, 9, 0, time.UTC), "t_order_3"},
		{"2020-01-01", "error"},
		{"2020-01-01T00:00:05", "error"}, // a LocalDateTime's toString fails in Java too
		{5, "error"},
	} {
		if got := atName(t, f, targets, c.v); got != c.want {
			t.Errorf("AUTO_INTERVAL %v -> %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		lo, hi     any
		loIn, hiIn bool
		want       string
	}{
		{"2020-01-01 00:00:02", "2020-01-01 00:00:09", true, true, "t_order_1,t_order_2,t_order_3"},
		{nil, "2020-01-01 00:00:04", true, true, "t_order_0,t_order_1"},
		{nil, "2020-01-01 00:00:08", true, false, "t_order_0,t_order_1,t_order_2"}, // bound types ignored, as Java
		{"2020-01-01 00:00:13", nil, true, true, "t_order_4,t_order_5"},
		{"2020-01-01 00:00:13", "2020-01-01 00:00:02", true, true, ""},
		{nil, nil, true, true, strings.Join(targets, ",")},
		{"bad", nil, true, true, "error"},
	} {
		if got := atRange(t, f, targets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("AUTO_INTERVAL %v..%v: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	// 17 seconds / 4 = 4 (long division) + 2 = 6 tables; trailing text in
	// datetime-upper is ignored as Java's parse from position 0 ignores it.
	props["datetime-upper"] = "2020-01-01 00:00:17.0"
	atCompile(t, "AUTO_INTERVAL", props, targets)
	// A day per table over a year.
	days := atNames("t_", 368)
	f = atCompile(t, "AUTO_INTERVAL", map[string]string{"datetime-lower": "2024-01-01 00:00:00", "datetime-upper": "2025-01-01 00:00:00", "sharding-seconds": "86400"}, days)
	for _, c := range []struct {
		v    string
		want string
	}{
		{"2024-01-01 00:07:11", "t_0"}, // 431 s: 0.0050 of a day rounds to 0.00
		{"2024-01-01 00:07:13", "t_1"},
		{"2024-01-02 00:00:00", "t_1"},
		{"2024-01-02 00:07:11", "t_1"},
		{"2024-01-02 00:07:12", "t_1"}, // 1.005 rounds to 1.00 (binary 1.00499...)
		{"2024-01-02 00:07:13", "t_2"},
		{"2024-12-31 12:00:00", "t_366"},
	} {
		if got := atName(t, f, days, c.v); got != c.want {
			t.Errorf("AUTO_INTERVAL daily %v -> %q, want %q", c.v, got, c.want)
		}
	}
}

func TestAutoIntervalErrors(t *testing.T) {
	targets := atNames("t_", 6)
	ok := map[string]string{"datetime-lower": "2020-01-01 00:00:00", "datetime-upper": "2020-01-01 00:00:16", "sharding-seconds": "4"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range ok {
			m[a] = b
		}
		if v == "-" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		props map[string]string
		key   string
	}{
		{with("datetime-lower", "-"), "datetime-lower"},
		{with("datetime-lower", "2020/01/01 00:00:00"), "datetime-lower"},
		{with("datetime-lower", "2020-01-01 00:00:00.0"), "datetime-lower"},
		{with("datetime-upper", "-"), "datetime-upper"},
		{with("datetime-upper", "tomorrow"), "datetime-upper"},
		{with("datetime-upper", "2019-01-01 00:00:00"), "datetime-upper"},
		{with("sharding-seconds", "-"), "sharding-seconds"},
		{with("sharding-seconds", "0"), "sharding-seconds"},
		{with("sharding-seconds", "4s"), "sharding-seconds"},
		{with("datetime-pattern", "yyyy"), "datetime-pattern"},
	} {
		_, err := atTry("AUTO_INTERVAL", c.props, targets)
		atPropErr(t, err, c.key)
	}
	atGaps(t, "AUTO_INTERVAL", ok, targets[:5], "t_5 (shard 5: times after 2020-01-01 00:00:16)")
}

// ---- the pattern engine ----

func TestIntervalPatterns(t *testing.T) {
	at := time.Date(2024, 1, 5, 7, 8, 9, 123456789, time.UTC)
	// Java 17: LocalDateTime.of(2024, 1, 5, 7, 8, 9, 123456789).format(ofPattern(p))
	for p, want := range map[string]string{
		"yyyy'年'MM''dd'o''clock'": "2024年01'05o'clock",
		"yyyyMMdd":                "20240105",
		"yyyy_MM":                 "2024_01",
		"uuuu-MM-dd HH:mm:ss.SSS": "2024-01-05 07:08:09.123",
		"yy":                      "24",
		"yyyy-M-d H:m:s":          "2024-1-5 7:8:9",
		"yyyy-MM-dd HH:mm:ss.S":   "2024-01-05 07:08:09.1",
		"'t_'yyyy":                "t_2024",
		"yyyy/MM/dd":              "2024/01/05",
	} {
		c, err := ivCompile(p)
		if err != nil {
			t.Errorf("%q: %v", p, err)
			continue
		}
		if got := string(c.format(nil, at)); got != want {
			t.Errorf("%q formats %q, Java %q", p, got, want)
		}
	}
	for _, p := range []string{"yyyy-MM-dd EEE", "MMM", "yyy", "yyyyy", "yyyy[MM]", "yyyy'", "yyyyMMyyyy", "hh", "yyyy-MM-dd a"} {
		if _, err := ivCompile(p); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
	// Java 17 LocalDateTime.parse(text, ofPattern(p)) (SMART).
	for _, c := range []struct{ text, pattern, want string }{
		{"2024-01-15 10", "yyyy-MM-dd HH", "2024-01-15T10:00:00"},
		{"2024-01-15 24:00", "yyyy-MM-dd HH:mm", "2024-01-16T00:00:00"},
		{"2024-01-15 10:00", "yyyy-M-d H:m", "2024-01-15T10:00:00"},
		{"2023-02-30 00:00", "yyyy-MM-dd HH:mm", "2023-02-28T00:00:00"},
		{"2023-02-31 00:00", "yyyy-MM-dd HH:mm", "2023-02-28T00:00:00"},
		{"20240115", "yyyyMMdd", "2024-01-15T00:00:00"},
		{"24-01-15", "yy-MM-dd", "2024-01-15T00:00:00"},
		{"2024-01-15 10:00:00", "yyyy-MM-dd HH", "error"},
		{"2024-01-15", "yyyy-MM-dd HH:mm:ss", "error"},
		{"2024-01-15 10:00:00.5", "yyyy-MM-dd HH:mm:ss.SSS", "error"},
		{"0000-01-15 10:00", "yyyy-MM-dd HH:mm", "error"},
		{"2024-1-15 10:00", "yyyy-MM-dd HH:mm", "error"},
		{" 2024-01-15 10:00", "yyyy-MM-dd HH:mm", "error"},
		{"+2024-01-15 10:00", "yyyy-MM-dd HH:mm", "error"},
		{"12024-01-15 10:00", "yyyy-MM-dd HH:mm", "error"},
		{"2023-13-01 00:00", "yyyy-MM-dd HH:mm", "error"},
		{"2023-02-32 00:00", "yyyy-MM-dd HH:mm", "error"},
		{"2023-02-01 24:01", "yyyy-MM-dd HH:mm", "error"},
	} {
		p, err := ivCompile(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got := "error"
		if tm, _, err := p.parse(c.text); err == nil {
			got = tm.Format("2006-01-02T15:04:05")
		}
		if got != c.want {
			t.Errorf("parse %q with %q: %s, Java %s", c.text, c.pattern, got, c.want)
		}
	}
}

// ---- INTERVAL ----

func atMonthly(prefix string, year, from, to int) []string {
	var out []string
	for m := from; m <= to; m++ {
		out = append(out, fmt.Sprintf("%s%d%02d", prefix, year, m))
	}
	return out
}

func TestIntervalMonthly(t *testing.T) {
	targets := atMonthly("t_order_", 2021, 1, 12)
	f := atCompile(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yyyy-MM-dd HH:mm:ss", "datetime-lower": "2021-01-01 00:00:00", "datetime-upper": "2021-12-31 23:59:59",
		"sharding-suffix-pattern": "yyyyMM", "datetime-interval-amount": "1", "datetime-interval-unit": "MONTHS",
	}, targets)
	plus8 := time.FixedZone("+08", 8*3600)
	for _, c := range []struct {
		v    any
		want string
	}{
		{"2021-03-15 10:00:00", "t_order_202103"},
		{time.Date(2021, 3, 15, 10, 0, 0, 0, time.UTC), "t_order_202103"},
		{time.Date(2021, 4, 1, 1, 0, 0, 0, plus8), "t_order_202104"}, // its own wall clock
		{"2021-01-01 00:00:00", "t_order_202101"},
		{"2021-12-31 23:59:59", "t_order_202112"},
		{"2020-12-31 23:59:59", ""},
		{"2022-01-01 00:00:00", ""},
		{"2021-03-15 10", "t_order_202103"},           // shorter: the pattern cut to "yyyy-MM-dd HH"
		{"2021-03-15 10:00:00.123", "t_order_202103"}, // longer: cut to the pattern's length
		{"2021-02-30 00:00:00", "t_order_202102"},     // SMART
		{"2021-01-31 24:00:00", "t_order_202102"},     // SMART
		{"2021-03-15", "error"},                       // no hour: LocalDateTime.parse fails
		{"2021-03-15T10:00:00", "error"},
		{"2021-13-01 00:00:00", "error"},
		{3.5, "error"},
	} {
		if got := atName(t, f, targets, c.v); got != c.want {
			t.Errorf("INTERVAL %v -> %q, want %q", c.v, got, c.want)
		}
	}
	all := strings.Join(targets, ",")
	for _, c := range []struct {
		lo, hi     any
		loIn, hiIn bool
		want       string
	}{
		{"2021-03-15 00:00:00", "2021-05-01 00:00:00", true, true, "t_order_202103,t_order_202104,t_order_202105"},
		{"2021-03-15 00:00:00", "2021-05-01 00:00:00", true, false, "t_order_202103,t_order_202104"},
		{"2021-03-15 00:00:00", time.Date(2021, 5, 1, 0, 0, 0, 500, time.UTC), true, false, "t_order_202103,t_order_202104,t_order_202105"},
		{"2021-03-15 00:00:00", "2021-05-01 00:00:00.5", true, false, "t_order_202103,t_order_202104,t_order_202105"},
		{"2021-03-31 23:59:59", "2021-04-01 00:00:00", false, true, "t_order_202103,t_order_202104"}, // (23:59:59, 00:00] holds 23:59:59.5
		{"2021-11-15 00:00:00", nil, true, true, "t_order_202111,t_order_202112"},
		{nil, "2021-02-01 00:00:00", true, false, "t_order_202101"},
		{nil, nil, true, true, all},
		{"2021-05-01 00:00:00", "2021-03-01 00:00:00", true, true, ""},
		{"2021-05-01 00:00:00", "2021-05-01 00:00:00", true, false, ""},
		{"2021-05-01 00:00:00", "2021-05-01 00:00:00", true, true, "t_order_202105"},
		{"2022-03-01 00:00:00", nil, true, true, ""}, // Java's Range.range throws here
		{"2019-03-01 00:00:00", "2020-03-01 00:00:00", true, true, ""},
		{"2019-03-01 00:00:00", "2021-01-15 00:00:00", true, true, "t_order_202101"},
		{"garbage", nil, true, true, "error"},
	} {
		if got := atRange(t, f, targets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("INTERVAL %v..%v (%v,%v): %q, want %q", c.lo, c.hi, c.loIn, c.hiIn, got, c.want)
		}
	}
	// Only some months have tables: loaded, the other months reported.
	half := targets[:6]
	atGaps(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yyyy-MM-dd HH:mm:ss", "datetime-lower": "2021-01-01 00:00:00", "datetime-upper": "2021-12-31 23:59:59",
		"sharding-suffix-pattern": "yyyyMM", "datetime-interval-unit": "Months",
	}, half, "intervals [2021-07-01 00:00:00, 2022-01-01 00:00:00) (6 intervals, suffixes 202107 to 202112)")
}

func TestIntervalSteps(t *testing.T) {
	// Two days at a time: intervals start 01, 03, 05, 07, 09 (11 is after
	// the upper bound, so the last interval ends on the 11th).
	days := []string{"t_20210101", "t_20210103", "t_20210105", "t_20210107", "t_20210109"}
	f := atCompile(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yyyy-MM-dd", "datetime-lower": "2021-01-01", "datetime-upper": "2021-01-10",
		"sharding-suffix-pattern": "yyyyMMdd", "datetime-interval-amount": "2", "datetime-interval-unit": "days",
	}, days)
	for _, c := range []struct {
		v    any
		want string
	}{
		{"2021-01-02", "t_20210101"},
		{"2021-01-10", "t_20210109"},
		{"2021-01-10 23:00", "t_20210109"},
		{"2021-01-11", ""},
		{"2020-12-31", ""},
		{"2021-01", "error"}, // the pattern cut to "yyyy-MM" gives no day
		{20210104, "error"},  // "20210104" is cut-pattern "yyyy-MM-" text: no match, as in Java
		{time.Date(2021, 1, 6, 23, 59, 0, 0, time.UTC), "t_20210105"},
	} {
		if got := atName(t, f, days, c.v); got != c.want {
			t.Errorf("2-day %v -> %q, want %q", c.v, got, c.want)
		}
	}
	if got := atRange(t, f, days, "2021-01-02", false, "2021-01-05", false); got != "t_20210101,t_20210103" {
		t.Errorf("2-day open range: %q", got)
	}

	// Month steps clamp the day and stay clamped (Java 17: 01-31, 02-29,
	// 03-29, 04-29).
	clamp := []string{"t_20240131", "t_20240229", "t_20240329", "t_20240429"}
	f = atCompile(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yyyy-MM-dd", "datetime-lower": "2024-01-31", "datetime-upper": "2024-04-30",
		"sharding-suffix-pattern": "yyyyMMdd", "datetime-interval-unit": "Months",
	}, clamp)
	for v, want := range map[string]string{"2024-03-28": "t_20240229", "2024-03-29": "t_20240329", "2024-01-30": "", "2024-05-28": "t_20240429", "2024-05-29": ""} {
		if got := atName(t, f, clamp, v); got != want {
			t.Errorf("clamped months %v -> %q, want %q", v, got, want)
		}
	}

	// Hours, with the enum spelling of a unit.
	hours := []string{"t_00", "t_12"}
	f = atCompile(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yyyy-MM-dd HH:mm", "datetime-lower": "2024-01-01 00:00", "datetime-upper": "2024-01-01 23:59",
		"sharding-suffix-pattern": "HH", "datetime-interval-unit": "HALF_DAYS",
	}, hours)
	if got := atName(t, f, hours, "2024-01-01 13:30"); got != "t_12" {
		t.Errorf("half days: %q", got)
	}
}

func TestIntervalTypes(t *testing.T) {
	// YearMonth: pattern yyyyMM.
	months := []string{"t_2021_01", "t_2021_02", "t_2021_03", "t_2021_04", "t_2021_05", "t_2021_06"}
	f := atCompile(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yyyyMM", "datetime-lower": "202101", "datetime-upper": "202106",
		"sharding-suffix-pattern": "yyyy_MM", "datetime-interval-unit": "Months",
	}, months)
	for _, c := range []struct {
		v    any
		want string
	}{
		{"202103", "t_2021_03"},
		{time.Date(2021, 4, 20, 13, 0, 0, 0, time.UTC), "t_2021_04"},
		{202105, "t_2021_05"},
		{"2021", "error"}, // cut to "yyyy": no month
		{"202107", ""},
	} {
		if got := atName(t, f, months, c.v); got != c.want {
			t.Errorf("YearMonth %v -> %q, want %q", c.v, got, c.want)
		}
	}
	// Year.
	years := []string{"t_2020", "t_2021", "t_2022", "t_2023"}
	f = atCompile(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yyyy", "datetime-lower": "2020", "datetime-upper": "2023",
		"sharding-suffix-pattern": "yyyy", "datetime-interval-unit": "Years",
	}, years)
	if got := atName(t, f, years, time.Date(2022, 6, 1, 0, 0, 0, 0, time.UTC)); got != "t_2022" {
		t.Errorf("Year: %q", got)
	}
	if got := atRange(t, f, years, "2021", true, nil, true); got != "t_2021,t_2022,t_2023" {
		t.Errorf("Year range: %q", got)
	}
	// yy: a time formats to two digits and parses back as 20yy.
	yy := []string{"t_2101", "t_2102", "t_2103"}
	f = atCompile(t, "INTERVAL", map[string]string{
		"datetime-pattern": "yy-MM-dd", "datetime-lower": "21-01-01", "datetime-upper": "21-03-01",
		"sharding-suffix-pattern": "yyMM", "datetime-interval-unit": "Months",
	}, yy)
	if got := atName(t, f, yy, time.Date(1921, 2, 10, 0, 0, 0, 0, time.UTC)); got != "t_2102" {
		t.Errorf("yy: %q", got)
	}
}

func TestIntervalDefaultUpper(t *testing.T) {
	now := func() time.Time { return time.Date(2021, 3, 15, 12, 0, 0, 0, time.Local) }
	targets := atMonthly("t_", 2021, 1, 4)
	props := map[string]string{
		"datetime-pattern": "yyyy-MM-dd HH:mm:ss", "datetime-lower": "2021-01-01 00:00:00",
		"sharding-suffix-pattern": "yyyyMM", "datetime-interval-unit": "Months",
	}
	f, err := atTrySpec(algoSpec{typ: "INTERVAL", props: props, targets: targets, now: now})
	if err != nil {
		t.Fatal(err)
	}
	if got := atName(t, f, targets, "2021-03-31 00:00:00"); got != "t_202103" {
		t.Errorf("before now's interval end: %q", got)
	}
	if got := atName(t, f, targets, "2021-04-01 00:00:00"); got != "" {
		t.Errorf("after now's interval: %q", got)
	}
	props["datetime-lower"] = "2021-06-01 00:00:00"
	_, err = atTrySpec(algoSpec{typ: "INTERVAL", props: props, targets: targets, now: now})
	atPropErr(t, err, "datetime-lower")
}

func TestIntervalErrors(t *testing.T) {
	targets := atMonthly("t_", 2021, 1, 12)
	base := map[string]string{
		"datetime-pattern": "yyyy-MM-dd HH:mm:ss", "datetime-lower": "2021-01-01 00:00:00", "datetime-upper": "2021-12-31 23:59:59",
		"sharding-suffix-pattern": "yyyyMM", "datetime-interval-unit": "Months",
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, c := range []struct {
		props map[string]string
		key   string
	}{
		{with("datetime-pattern", "-"), "datetime-pattern"},
		{with("datetime-lower", "-"), "datetime-lower"},
		{with("sharding-suffix-pattern", "-"), "sharding-suffix-pattern"},
		{with("sharding-suffix-pattern", ""), "sharding-suffix-pattern"},
		{with("datetime-interval-amount", "0"), "datetime-interval-amount"},
		{with("datetime-interval-amount", "-1"), "datetime-interval-amount"},
		{with("datetime-interval-unit", "Fortnights"), "datetime-interval-unit"},
		{with("datetime-interval-unit", "Eras"), "datetime-interval-unit"},
		{with("datetime-interval-unit", "Forever"), "datetime-interval-unit"},
		{with("datetime-lower", "2021/01/01 00:00:00"), "datetime-lower"},
		{with("datetime-upper", "2020-12-31 00:00:00"), "datetime-upper"},
		{with("datetime-pattern", "MM-dd", "datetime-lower", "01-01", "datetime-upper", "12-31"), "datetime-pattern"},
		// a time of day cannot give a year, nor step by Months
		{with("datetime-pattern", "HH:mm", "datetime-lower", "00:00", "datetime-upper", "23:59"), "sharding-suffix-pattern"},
		{with("datetime-pattern", "HH:mm", "datetime-lower", "00:00", "datetime-upper", "23:59", "sharding-suffix-pattern", "HH"), "datetime-interval-unit"},
		{with("datetime-pattern", "M", "datetime-lower", "1", "datetime-upper", "9", "sharding-suffix-pattern", "MM"), "datetime-pattern"},
		{with("datetime-pattern", "HH:ss", "datetime-lower", "00:00", "datetime-upper", "23:59", "sharding-suffix-pattern", "HH"), "datetime-pattern"},
		{with("datetime-pattern", "yyyyQQ", "datetime-lower", "202101", "datetime-upper", "202104"), "datetime-pattern"},
		{with("datetime-pattern", "yyyy-MM-dd EEE"), "datetime-pattern"},
		{with("sharding-suffix-pattern", "yyyyMMM"), "sharding-suffix-pattern"},
		// a YearMonth cannot add the default DAYS, nor give a day
		{with("datetime-pattern", "yyyyMM", "datetime-lower", "202101", "datetime-upper", "202112", "datetime-interval-unit", "-"), "datetime-interval-unit"},
		{with("datetime-pattern", "yyyyMM", "datetime-lower", "202101", "datetime-upper", "202112", "datetime-interval-unit", "Hours"), "datetime-interval-unit"},
		{with("datetime-pattern", "yyyyMM", "datetime-lower", "202101", "datetime-upper", "202112", "sharding-suffix-pattern", "yyyyMMdd"), "sharding-suffix-pattern"},
		{with("sharding-count", "4"), "sharding-count"},
	} {
		_, err := atTry("INTERVAL", c.props, targets)
		atPropErr(t, err, c.key)
	}
	_, err := atTry("INTERVAL", with("sharding-suffix-pattern", "MM"), []string{"a_01", "b_01", "a_02"})
	atErrContains(t, err, "several targets end in (a_01, b_01)")
	_, err = atTry("INTERVAL", with("sharding-suffix-pattern", "yyyy_MM"), targets)
	atErrContains(t, err, "no target ends in the suffix of any interval")
	_, err = atTry("INTERVAL", with("datetime-interval-unit", "Seconds"), targets)
	atErrContains(t, err, "more than 1048576 intervals")
	if _, err := atTry("INTERVAL", with("datetime-interval-unit", "HalfDays", "sharding-suffix-pattern", "yyyyMM"), targets); err != nil {
		t.Errorf("HalfDays: %v", err)
	}
}

func TestIntervalRangeOpenAboveReachesRowsPastDatetimeUpper(t *testing.T) {
	// The last interval [2024-03-01, 2024-04-01) runs past datetime-upper
	// 2024-03-15: a row at 2024-03-20 is placed in t_202403, so a range
	// open above from there must read t_202403 (ShardingSphere substitutes
	// datetime-upper for the open side and throws; it was answered empty).
	tables := []string{"t_202401", "t_202402", "t_202403"}
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd", "2024-01-01", "2024-03-15", "yyyyMM", 1, "Months"), tables)
	if got := atName(t, f, tables, "2024-03-20"); got != "t_202403" {
		t.Fatalf("2024-03-20 -> %q, want t_202403", got)
	}
	for _, c := range []struct {
		lo   any
		loIn bool
		want string
	}{
		{"2024-03-20", true, "t_202403"},
		{"2024-03-16", false, "t_202403"},
		{"2024-03-31", true, "t_202403"},
		{"2024-04-01", true, ""}, // past the last interval: no row can be there
		{"2024-02-10", true, "t_202402,t_202403"},
	} {
		if got := atRange(t, f, tables, c.lo, c.loIn, nil, false); got != c.want {
			t.Errorf("> %v (inclusive %v) = %q, want %q", c.lo, c.loIn, got, c.want)
		}
	}
	// The default datetime-upper is now at load: rows written later in the
	// last interval are found by "t >= later".
	p := ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2024-01-01 00:00:00", "", "yyyyMM", 1, "Months")
	delete(p, "datetime-upper")
	f, err := atTrySpec(algoSpec{typ: "INTERVAL", props: p, targets: tables,
		now: func() time.Time { return time.Date(2024, 3, 2, 9, 0, 0, 0, time.Local) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := atName(t, f, tables, "2024-03-28 10:00:00"); got != "t_202403" {
		t.Fatalf("2024-03-28 10:00:00 -> %q, want t_202403", got)
	}
	if got := atRange(t, f, tables, "2024-03-28 00:00:00", true, nil, false); got != "t_202403" {
		t.Errorf(">= 2024-03-28 with datetime-upper now (2024-03-02) = %q, want t_202403", got)
	}
	// A month-only pattern: its last interval [05, 07) runs past upper 06.
	months := []string{"t_01", "t_03", "t_05"}
	f = atCompile(t, "INTERVAL", ssIntervalProps("MM", "01", "06", "MM", 2, "Months"), months)
	if got := atRange(t, f, months, "06", true, nil, false); got != "t_05" {
		t.Errorf("month >= 06 = %q, want t_05", got)
	}
}

func TestIntervalExclusiveLowerBoundKeepsRowsFinerThanThePattern(t *testing.T) {
	// A timestamp column under datetime-pattern yyyyMM: a row at
	// 2020-02-10 04:47 reads as 2020-02 and lives in t_02. "k > 2020-02-01
	// 00:00:00 AND k <= 2020-02-10 05:00" holds it; both ends read 2020-02,
	// which an exclusive lower end emptied (as Java's (2020-02..2020-02] is).
	tables := []string{"t_08", "t_11", "t_02"}
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyyMM", "201908", "202004", "MM", 3, "Months"), tables)
	row := time.Date(2020, 2, 10, 4, 47, 0, 0, time.UTC)
	if got := atName(t, f, tables, row); got != "t_02" {
		t.Fatalf("%v -> %q, want t_02", row, got)
	}
	lo := time.Date(2020, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, hi := range []time.Time{time.Date(2020, 2, 10, 5, 0, 0, 0, time.UTC), time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC)} {
		if got := atRange(t, f, tables, lo, false, hi, true); got != "t_02" {
			t.Errorf("(%v, %v] = %q, want t_02", lo, hi, got)
		}
		if got := atRange(t, f, tables, "202002", false, hi, false); got != "t_02" {
			t.Errorf("(202002, %v) = %q, want t_02", hi, got)
		}
	}
	// An exclusive upper end on the pattern's own boundary still excludes:
	// every value below 2020-02-01 00:00:00 reads as 2020-01 or earlier.
	if got := atRange(t, f, tables, time.Date(2019, 12, 5, 0, 0, 0, 0, time.UTC), false, lo, false); got != "t_11" {
		t.Errorf("(2019-12-05, 2020-02-01) = %q, want t_11", got)
	}
}

func TestIntervalMonthAndClockRangesAcrossYearsOrDaysReachEveryInterval(t *testing.T) {
	// datetime-pattern MM over a date column: a row of January 2022 is in
	// t_01. "k BETWEEN 2021-11-20 AND 2022-02-01" holds it (read nothing:
	// November is after February), and "k BETWEEN 2021-03-01 AND
	// 2022-05-01" holds every month (read only t_03..t_05).
	var months []string
	for m := 1; m <= 12; m++ {
		months = append(months, fmt.Sprintf("t_%02d", m))
	}
	f := atCompile(t, "INTERVAL", ssIntervalProps("MM", "01", "11", "MM", 1, "Months"), months)
	day := func(y, m, d, h int) time.Time { return time.Date(y, time.Month(m), d, h, 0, 0, 0, time.UTC) }
	if got := atName(t, f, months, day(2022, 1, 10, 0)); got != "t_01" {
		t.Fatalf("2022-01-10 -> %q", got)
	}
	every := strings.Join(months[:11], ",") // December is in no interval
	for _, c := range []struct {
		lo, hi any
		want   string
	}{
		{day(2021, 11, 20, 0), day(2022, 2, 1, 0), every},
		{day(2021, 3, 1, 0), day(2022, 5, 1, 0), every},
		{day(2021, 3, 1, 0), nil, every},
		{nil, day(2021, 3, 1, 0), every},
		{day(2021, 3, 10, 0), day(2021, 5, 1, 0), "t_03,t_04,t_05"}, // one year: exact
		{3, 5, "t_03,t_04,t_05"},                                    // month numbers: exact
		{"11", nil, "t_11"},
	} {
		if got := atRange(t, f, months, c.lo, true, c.hi, true); got != c.want {
			t.Errorf("[%v, %v] = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	// datetime-pattern HH:mm over a timestamp column: 22:00 on one day to
	// 01:00 the next holds 23:30 and 00:30 (read nothing).
	var hours []string
	for h := 0; h < 24; h++ {
		hours = append(hours, fmt.Sprintf("t_%02d", h))
	}
	g := atCompile(t, "INTERVAL", ssIntervalProps("HH:mm", "00:00", "22:59", "HH", 1, "Hours"), hours[:23])
	for _, v := range []time.Time{day(2024, 1, 1, 22), day(2024, 1, 2, 0)} {
		if got := atName(t, g, hours, v.Add(30*time.Minute)); got == "" || got == "error" {
			t.Fatalf("%v -> %q", v, got)
		}
	}
	everyHour := strings.Join(hours[:23], ",") // 23:00 is in no interval
	if got := atRange(t, g, hours, day(2024, 1, 1, 22), true, day(2024, 1, 2, 1), true); got != everyHour {
		t.Errorf("22:00 .. 01:00 the next day = %q, want every hour", got)
	}
	if got := atRange(t, g, hours, day(2024, 1, 1, 2), true, day(2024, 1, 1, 4), false); got != "t_02,t_03" {
		t.Errorf("02:00 .. 04:00 on one day = %q, want t_02,t_03", got)
	}
	if got := atRange(t, g, hours, day(2024, 1, 1, 2), true, day(2024, 1, 1, 4).In(time.FixedZone("X", 3600)), false); got != everyHour {
		t.Errorf("bounds at different UTC offsets = %q, want every hour", got)
	}
}
