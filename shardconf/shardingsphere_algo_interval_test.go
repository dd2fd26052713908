package shardconf

// ShardingSphere's IntervalShardingAlgorithmTest
// (features/sharding/core/src/test/java/org/apache/shardingsphere/sharding/
// algorithm/sharding/datetime/IntervalShardingAlgorithmTest.java), its
// expectations rewritten as Go tests through shardFunc. Java's value types
// (LocalDateTime, Instant, Timestamp, OffsetDateTime, ZonedDateTime,
// java.util.Date, LocalDate, LocalTime, OffsetTime, Year, YearMonth, Month)
// reach shardkey as time.Time, integers or strings.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func ssIntervalProps(pattern, lower, upper, suffix string, amount int, unit string) map[string]string {
	p := map[string]string{"datetime-pattern": pattern, "datetime-lower": lower, "datetime-upper": upper,
		"sharding-suffix-pattern": suffix, "datetime-interval-amount": fmt.Sprint(amount)}
	if unit != "" {
		p["datetime-interval-unit"] = unit
	}
	return p
}

// ssQuarterTables are availableTablesForQuarterDataSources: t_order_201601
// .. t_order_202004 (year, then quarter as two digits).
func ssQuarterTables() []string {
	var out []string
	for y := 2016; y <= 2020; y++ {
		for q := 1; q <= 4; q++ {
			out = append(out, fmt.Sprintf("t_order_%04d%02d", y, q))
		}
	}
	return out
}

func ssMonthTables(from, to int) []string {
	var out []string
	for y := from; y <= to; y++ {
		for m := 1; m <= 12; m++ {
			out = append(out, fmt.Sprintf("t_order_%04d%02d", y, m))
		}
	}
	return out
}

// ssDayTables are availableTablesForDayDataSources: every other day of
// June and July 2021 from the 1st.
func ssDayTables() []string {
	var out []string
	for m := 6; m <= 7; m++ {
		last := 30
		if m == 7 {
			last = 31
		}
		for d := 1; d <= last; d += 2 {
			out = append(out, fmt.Sprintf("t_order_%04d%02d%02d", 2021, m, d))
		}
	}
	return out
}

func ssCount(s string) int {
	if s == "" || s == "error" {
		return 0
	}
	return strings.Count(s, ",") + 1
}

func TestShardingSphereIntervalByQuarter(t *testing.T) {
	tables := ssQuarterTables()
	f := atGapsAny(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2016-01-01 00:00:00", "2021-12-31 00:00:00", "yyyyQQ", 3, "Months"), tables)
	// ShardingSphere: IntervalShardingAlgorithmTest.assertPreciseDoShardingByQuarter
	for v, want := range map[string]string{"2020-01-01 00:00:01": "t_order_202001", "2020-02-01 00:00:01": "t_order_202001"} {
		if got := atName(t, f, tables, v); got != want {
			t.Errorf("%s -> %q, want %q", v, got, want)
		}
	}
	// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByQuarter
	if got := atRange(t, f, tables, "2019-10-15 10:59:08", true, "2020-04-08 10:59:08", true); got != "t_order_201904,t_order_202001,t_order_202002" {
		t.Errorf("closed range: %q, want 3 tables", got)
	}
	// ShardingSphere: IntervalShardingAlgorithmTest.assertLowerHalfRangeDoSharding
	if got := atRange(t, f, tables, "2018-10-15 10:59:08", true, nil, false); ssCount(got) != 9 {
		t.Errorf("atLeast: %q, want 9 tables", got)
	}
	// ShardingSphere: IntervalShardingAlgorithmTest.assertUpperHalfRangeDoSharding
	if got := atRange(t, f, tables, nil, false, "2019-09-01 00:00:00", true); ssCount(got) != 15 {
		t.Errorf("atMost: %q, want 15 tables", got)
	}
}

func TestShardingSphereIntervalByMonth(t *testing.T) {
	tables := ssMonthTables(2016, 2020)
	f := atGapsAny(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2016-01-01 00:00:00", "2021-12-31 00:00:00", "yyyyMM", 1, "Months"), tables)
	// ShardingSphere: IntervalShardingAlgorithmTest.assertPreciseDoShardingByMonth
	if got := atName(t, f, tables, "2020-01-01 00:00:01"); got != "t_order_202001" {
		t.Errorf("2020-01-01 00:00:01 -> %q", got)
	}
	if got := atName(t, f, tables, "2030-01-01 00:00:01"); got != "" {
		t.Errorf("2030-01-01 00:00:01 -> %q, want no route (Java: null)", got)
	}
	// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByMonths (its last part)
	if got := atRange(t, f, tables, "2019-10-15 10:59:08", true, "2020-04-08 10:59:08", true); ssCount(got) != 7 {
		t.Errorf("range: %q, want 7 tables", got)
	}
}

func TestShardingSphereIntervalByDay(t *testing.T) {
	tables := ssDayTables()
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2021-06-01 00:00:00", "2021-07-31 00:00:00", "yyyyMMdd", 2, ""), tables)
	// ShardingSphere: IntervalShardingAlgorithmTest.assertLowerHalfRangeDoShardingByDay
	if got := atRange(t, f, tables, "2021-01-01 00:00:00", true, nil, false); ssCount(got) != 31 {
		t.Errorf("atLeast: %q, want 31 tables", got)
	}
	// ShardingSphere: IntervalShardingAlgorithmTest.assertUpperHalfRangeDoShardingByDay
	if got := atRange(t, f, tables, nil, false, "2021-07-31 01:00:00", true); ssCount(got) != 31 {
		t.Errorf("atMost: %q, want 31 tables", got)
	}
	// ShardingSphere: IntervalShardingAlgorithmTest.assertPreciseDoShardingByDay
	for _, v := range []string{"2021-07-01 00:00:01", "2021-07-02 00:00:01"} {
		if got := atName(t, f, tables, v); got != "t_order_20210701" {
			t.Errorf("%s -> %q", v, got)
		}
	}
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertInitFailedWithInvalidDatetimeFormat
// and assertInitFailedWithInvalidStepUnit.
func TestShardingSphereIntervalInitFailures(t *testing.T) {
	_, err := atTry("INTERVAL", map[string]string{"datetime-pattern": "yyyy", "datetime-lower": "invalid"}, []string{"t_2016"})
	atPropErr(t, err, "datetime-lower")
	_, err = atTry("INTERVAL", map[string]string{"datetime-pattern": "yy", "datetime-lower": "16", "sharding-suffix-pattern": "yy",
		"datetime-interval-unit": "invalid"}, []string{"t_16"})
	atPropErr(t, err, "datetime-interval-unit")
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertFormat
func TestShardingSphereIntervalFormat(t *testing.T) {
	at := time.Date(2020, 10, 11, 0, 0, 0, 0, time.UTC)
	for pattern, want := range map[string]string{"yyyyQQ": "202004", "yyyyMM": "202010"} {
		p, err := ivCompile(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(p.format(nil, at)); got != want {
			t.Errorf("%s: %q, want %q", pattern, got, want)
		}
	}
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByDays
func TestShardingSphereIntervalRangeByDays(t *testing.T) {
	tables := ssDayTables()
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss.SSS", "2021-06-01 00:00:00.000", "2021-07-31 00:00:00.000", "yyyyMMdd", 2, "DAYS"), tables)
	lower := time.Date(2021, 6, 15, 2, 25, 27, 0, time.UTC)
	upper := time.Date(2021, 7, 31, 2, 25, 27, 0, time.UTC)
	// LocalDateTime, Instant, Timestamp, OffsetDateTime, ZonedDateTime and
	// java.util.Date all reach shardkey as a time.Time, read at its own
	// wall clock; the zone does not change the answer.
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("+08:00", 8*3600), time.Local} {
		lo, hi := time.Date(2021, 6, 15, 2, 25, 27, 0, loc), time.Date(2021, 7, 31, 2, 25, 27, 0, loc)
		if got := atRange(t, f, tables, lo, true, hi, true); ssCount(got) != 24 {
			t.Errorf("times in %s: %q, want 24 tables", loc, got)
		}
	}
	// java.sql.Date over a pattern with a time is an error in Java; shardkey
	// has no date-only value type, so a date is a time.Time at midnight.
	fDate := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd", "2021-06-01", "2021-07-31", "yyyyMMdd", 2, ""), tables)
	if got := atRange(t, fDate, tables, lower, true, upper, true); ssCount(got) != 24 {
		t.Errorf("dates: %q, want 24 tables", got)
	}
	// Strings in yyyy-MM-dd HH:mm:ss, shorter than the pattern.
	lo, hi := lower.Format("2006-01-02 15:04:05"), upper.Format("2006-01-02 15:04:05")
	if got := atRange(t, f, tables, lo, true, hi, true); ssCount(got) != 24 {
		t.Errorf("strings: %q, want 24 tables", got)
	}
	byDay := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2021-06-01 00:00:00", "2021-07-31 00:00:00", "yyyyMMdd", 2, ""), tables)
	if got := atRange(t, byDay, tables, lo, true, hi, true); ssCount(got) != 24 {
		t.Errorf("strings by day: %q, want 24 tables", got)
	}
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByDaysInLocalDate
func TestShardingSphereIntervalRangeByDaysInLocalDate(t *testing.T) {
	tables := ssDayTables()
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd", "2021-06-01", "2021-07-31", "yyyyMMdd", 2, ""), tables)
	if got := atRange(t, f, tables, "2021-06-15", true, "2021-07-31", true); ssCount(got) != 24 {
		t.Errorf("LocalDate range: %q, want 24 tables", got)
	}
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByHours
func TestShardingSphereIntervalRangeByHours(t *testing.T) {
	var tables []string
	for i := 2; i < 13; i++ {
		tables = append(tables, fmt.Sprintf("t_order_%02d%02d", i, 0))
	}
	f := atGapsAny(t, "INTERVAL", ssIntervalProps("HH:mm:ss.SSS", "02:00:00.000", "13:00:00.000", "HHmm", 2, "Hours"), tables)
	want := "t_order_0200,t_order_0400,t_order_0600,t_order_0800,t_order_1000,t_order_1200"
	// LocalTime and OffsetTime: a time.Time's clock, whatever its date and zone.
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("-05:00", -5*3600)} {
		lo, hi := time.Date(1999, 3, 4, 2, 25, 27, 0, loc), time.Date(2030, 1, 1, 12, 25, 27, 0, loc)
		if got := atRange(t, f, tables, lo, true, hi, true); got != want {
			t.Errorf("times in %s: %q, want %q", loc, got, want)
		}
	}
	if got := atRange(t, f, tables, "02:25:27", true, "12:25:27", true); got != want {
		t.Errorf("strings: %q, want %q", got, want)
	}
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByYears
func TestShardingSphereIntervalRangeByYears(t *testing.T) {
	var tables []string
	for i := 2000; i < 2023; i++ {
		tables = append(tables, fmt.Sprintf("t_order_%04d", i))
	}
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy", "2000", "2022", "yyyy", 2, "Years"), tables)
	want := "t_order_2000,t_order_2002,t_order_2004,t_order_2006,t_order_2008,t_order_2010,t_order_2012"
	if got := atRange(t, f, tables, 2001, true, 2013, true); got != want {
		t.Errorf("Year range: %q, want %q", got, want)
	}
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByYearsInYearMonth
func TestShardingSphereIntervalRangeByYearsInYearMonth(t *testing.T) {
	tables := ssMonthTables(2016, 2021)
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM", "2016-01", "2021-12", "yyyyMM", 2, "Years"), tables)
	want := "t_order_201601,t_order_201801,t_order_202001"
	if got := atRange(t, f, tables, "2016-01", true, "2020-01", true); got != want {
		t.Errorf("YearMonth range: %q, want %q", got, want)
	}
	if got := atRange(t, f, tables, time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC), true, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), true); got != want {
		t.Errorf("YearMonth range of times: %q, want %q", got, want)
	}
}

// ShardingSphere: IntervalShardingAlgorithmTest.assertRangeDoShardingByMonths
func TestShardingSphereIntervalRangeByMonthOnly(t *testing.T) {
	var tables []string
	for i := 2; i < 13; i++ {
		tables = append(tables, fmt.Sprintf("t_order_%02d", i))
	}
	f := atGapsAny(t, "INTERVAL", ssIntervalProps("MM", "02", "12", "MM", 2, "Months"), tables)
	want := "t_order_04,t_order_06,t_order_08,t_order_10"
	// Month.of(4)..Month.of(10): a month reaches shardkey as its number.
	if got := atRange(t, f, tables, 4, true, 10, true); got != want {
		t.Errorf("Month range: %q, want %q", got, want)
	}
	if got := atRange(t, f, tables, "04", true, "10", true); got != want {
		t.Errorf("month string range: %q, want %q", got, want)
	}
}

// atGapsAny compiles an algorithm that may report unreachable partitions
// (the Java tests' tables often stop before datetime-upper).
func atGapsAny(t *testing.T, typ string, props map[string]string, targets []string) shardFunc {
	t.Helper()
	f, err := atTrySpec(algoSpec{typ: typ, props: props, targets: targets, unreachable: func(string) {}})
	if err != nil {
		t.Fatalf("%s %v: %v", typ, props, err)
	}
	return f
}

// ShardingSphere: MonthTemporalHandlerTest.assertParse, assertIsAfter,
// assertAdd, as the intervals of a month-only INTERVAL show them: "1"
// parses as January; a walk continues while the month is not after the
// upper one and the next step stays within December.
func TestShardingSphereMonthTemporalHandler(t *testing.T) {
	tables := []string{"t_01", "t_02", "t_10", "t_11", "t_12"}
	f := atGapsAny(t, "INTERVAL", ssIntervalProps("MM", "01", "02", "MM", 1, "Months"), tables)
	for v, want := range map[string]string{"1": "t_01", "02": "t_02", "03": ""} {
		if got := atName(t, f, tables, v); got != want {
			t.Errorf("01..02: %q -> %q, want %q", v, got, want)
		}
	}
	f = atGapsAny(t, "INTERVAL", ssIntervalProps("MM", "10", "12", "MM", 1, "Months"), tables)
	for v, want := range map[string]string{"10": "t_10", "11": "t_11", "12": ""} {
		if got := atName(t, f, tables, v); got != want {
			t.Errorf("10..12: %q -> %q, want %q", v, got, want)
		}
	}
	_, err := atTry("INTERVAL", ssIntervalProps("MM", "10", "11", "MM", 3, "Months"), tables)
	atErrContains(t, err, "no interval")
}

// ShardingSphere: LocalTimeTemporalHandlerTest.assertParse, assertIsAfter,
// assertAdd: 00:00:00 parses, is not after itself, and plus one hour is
// 01:00.
func TestShardingSphereLocalTimeTemporalHandler(t *testing.T) {
	tables := []string{"t_00", "t_01"}
	f := atCompile(t, "INTERVAL", ssIntervalProps("HH:mm:ss", "00:00:00", "00:00:00", "HH", 1, "Hours"), tables)
	for v, want := range map[string]string{"00:00:00": "t_00", "00:59:59": "t_00", "01:00:00": ""} {
		if got := atName(t, f, tables, v); got != want {
			t.Errorf("%q -> %q, want %q", v, got, want)
		}
	}
}
