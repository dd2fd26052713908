package shardconf

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestIntervalQuarterSuffixesFormatAsJavaTime(t *testing.T) {
	// Java 17: LocalDate.of(2024, m, 1).format(ofPattern(p)), Locale.ENGLISH.
	for _, c := range []struct {
		pattern string
		month   time.Month
		want    string
	}{
		{"yyyyQQ", 1, "202401"}, {"yyyyQQ", 3, "202401"}, {"yyyyQQ", 4, "202402"}, {"yyyyQQ", 12, "202404"},
		{"yyyy_Q", 8, "2024_3"}, {"yyyyQQQ", 11, "2024Q4"}, {"QQ", 6, "02"},
	} {
		p, err := ivCompile(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := string(p.format(nil, time.Date(2024, c.month, 1, 0, 0, 0, 0, time.UTC))); got != c.want {
			t.Errorf("%s of month %d: %q, want %q", c.pattern, c.month, got, c.want)
		}
	}
	if _, err := ivCompile("yyyyQQQQ"); err == nil {
		t.Error("QQQQ (\"4th quarter\", locale text) accepted")
	}
}

func TestIntervalMonthOnlyPatternRoutesAsMonthTemporalParser(t *testing.T) {
	var tables []string
	for m := 1; m <= 12; m++ {
		tables = append(tables, fmt.Sprintf("t_%02d", m))
	}
	// The unit is ignored (ShardingSphere's Month.plus adds months): Days
	// steps a month at a time.
	f := atGapsAny(t, "INTERVAL", ssIntervalProps("MM", "01", "12", "MM", 1, ""), tables)
	for _, c := range []struct {
		v    any
		want string
	}{
		{"03", "t_03"}, {3, "t_03"}, {"3", "t_03"}, {"+3", "t_03"}, {"11", "t_11"},
		{time.Date(2031, 7, 4, 5, 6, 7, 0, time.UTC), "t_07"}, // any year's July
		{"12", ""}, // never in an interval: the walk stops before a step passes December
		{"13", "error"}, {"00", "error"}, {"x", "error"}, {"-1", "error"},
		{"2024-03", "error"}, // cut to "20"
		{"031", "t_03"},      // cut to "03"
	} {
		if got := atName(t, f, tables, c.v); got != c.want {
			t.Errorf("%v -> %q, want %q", c.v, got, c.want)
		}
	}
	// A range of months is exact: every month the span touches.
	if got := atRange(t, f, tables, "10", true, nil, false); got != "t_10,t_11" {
		t.Errorf(">= 10: %q", got)
	}
	// "[2031-01-01, 2031-03-15)" cut to March: March's rows may match.
	if got := atRange(t, f, tables, time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), true, time.Date(2031, 3, 15, 0, 0, 0, 0, time.UTC), false); got != "t_01,t_02,t_03" {
		t.Errorf("[1 January, 15 March): %q", got)
	}
	// "< 2031-03-15" holds every earlier year's months: every interval.
	if got := atRange(t, f, tables, nil, false, time.Date(2031, 3, 15, 0, 0, 0, 0, time.UTC), false); got != strings.Join(tables[:11], ",") {
		t.Errorf("< 15 March: %q", got)
	}
}

func TestIntervalMonthOnlyRefusals(t *testing.T) {
	tables := []string{"t_01", "t_12"}
	// Stepping 12 from January passes December at once: no interval at all.
	_, err := atTry("INTERVAL", ssIntervalProps("MM", "01", "12", "MM", 12, "Months"), tables)
	atErrContains(t, err, "no interval")
	// A month-only pattern must be MM ("M" would read December's "12" as 1).
	_, err = atTry("INTERVAL", ssIntervalProps("M", "1", "12", "MM", 1, "Months"), tables)
	atPropErr(t, err, "datetime-pattern")
	// A Month cannot give a year or a day.
	_, err = atTry("INTERVAL", ssIntervalProps("MM", "01", "12", "yyyyMM", 1, "Months"), tables)
	atPropErr(t, err, "sharding-suffix-pattern")
}

func TestIntervalTimeOfDayPatternRoutesAsLocalTime(t *testing.T) {
	tables := []string{"t_00", "t_06", "t_12"}
	f := atCompile(t, "INTERVAL", ssIntervalProps("HH:mm", "00:00", "17:59", "HH", 6, "Hours"), tables)
	for _, c := range []struct {
		v    any
		want string
	}{
		{"05:59", "t_00"}, {"06:00", "t_06"}, {"17:59", "t_12"}, {"18:00", ""}, {"17", "t_12"},
		{time.Date(2024, 2, 3, 13, 14, 15, 0, time.UTC), "t_12"},
		{"24:00", "t_00"}, // a LocalTime reads 24:00 as 00:00
		{"2024-01-01 10:00", "error"},
	} {
		if got := atName(t, f, tables, c.v); got != c.want {
			t.Errorf("%v -> %q, want %q", c.v, got, c.want)
		}
	}
	if got := atRange(t, f, tables, "05:00", true, "06:00", false); got != "t_00" {
		t.Errorf("[05:00, 06:00): %q", got)
	}
	if got := atRange(t, f, tables, time.Date(2024, 1, 1, 5, 0, 0, 0, time.UTC), true, time.Date(2024, 1, 1, 6, 0, 0, 1, time.UTC), false); got != "t_00,t_06" {
		t.Errorf("[05:00, 06:00:00.000000001): %q", got)
	}
}

func TestIntervalTimeOfDayRefusesIntervalsReachingMidnight(t *testing.T) {
	tables := []string{"t_00", "t_12"}
	// 12:00 + 12 hours is midnight: Range.closedOpen(12:00, 00:00) throws in
	// ShardingSphere on every statement.
	_, err := atTry("INTERVAL", ssIntervalProps("HH:mm", "00:00", "12:00", "HH", 12, "Hours"), tables)
	atErrContains(t, err, "would end at or past midnight")
	if _, err := atTry("INTERVAL", ssIntervalProps("HH:mm", "00:00", "11:59", "HH", 12, "Hours"), tables); err != nil {
		t.Errorf("intervals ending at 12:00 and 24:00 minus one step: %v", err)
	}
	_, err = atTry("INTERVAL", ssIntervalProps("HH:mm", "00:00", "11:00", "HH", 1, "Days"), tables)
	atPropErr(t, err, "datetime-interval-unit")
}

func TestIntervalCyclingSuffixRangesReachEveryTable(t *testing.T) {
	// Monthly intervals over three years, suffix MM: every January shares t_01.
	var tables []string
	for m := 1; m <= 12; m++ {
		tables = append(tables, fmt.Sprintf("t_%02d", m))
	}
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd", "2021-01-01", "2023-12-31", "MM", 1, "Months"), tables)
	if got := atName(t, f, tables, "2022-01-15"); got != "t_01" {
		t.Errorf("2022-01-15 -> %q", got)
	}
	// Nov 2021 .. Feb 2022 touches 11, 12, 01, 02.
	if got := atRange(t, f, tables, "2021-11-20", true, "2022-02-01", true); got != "t_01,t_02,t_11,t_12" {
		t.Errorf("Nov..Feb: %q", got)
	}
	// Hourly intervals over two days, suffix HH: 22:00 .. 01:00 next day.
	var hours []string
	for h := 0; h < 24; h++ {
		hours = append(hours, fmt.Sprintf("t_%02d", h))
	}
	f = atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2024-01-01 00:00:00", "2024-01-02 23:00:00", "HH", 1, "Hours"), hours)
	if got := atRange(t, f, hours, "2024-01-01 22:30:00", true, "2024-01-02 01:00:00", false); got != "t_00,t_22,t_23" {
		t.Errorf("22:30 .. 01:00: %q", got)
	}
}
