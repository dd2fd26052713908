package shardconf

import (
	"testing"
	"time"
	_ "time/tzdata" // America/New_York without the host's zoneinfo
)

// Rows are placed by their wall clock in their own zone. On a
// daylight-saving fall-back the clock repeats an hour (New York,
// 2024-11-03: 01:59 EDT, then 01:00 EST), so a range of instants from
// 01:50 EDT to 01:20 EST holds rows at 01:55 EDT and 01:05 EST, whose wall
// clocks lie before its lower bound's: its walls 01:50 .. 01:20 read
// nothing, missing them.
func TestTimeRangesAcrossADaylightSavingFallBackReachTheRepeatedHour(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	edt := func(h, m int) time.Time { return time.Date(2024, 11, 3, h, m, 0, 0, ny) }
	est := func(h, m int) time.Time { return edt(h, m).Add(time.Hour) } // the second pass of that wall clock
	a, b := edt(1, 50), est(1, 20)
	if !a.Before(b) || b.Format("15:04 MST") != "01:20 EST" {
		t.Fatalf("setup: %v .. %v", a, b)
	}
	hours := []string{"t_00", "t_01", "t_02", "t_03"}
	f := atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2024-11-03 00:00:00", "2024-11-03 03:00:00", "HH", 1, "Hours"), hours)
	for _, row := range []time.Time{edt(1, 55), est(1, 5)} {
		if got := atName(t, f, hours, row); got != "t_01" {
			t.Fatalf("%v -> %q, want t_01", row, got)
		}
	}
	if got := atRange(t, f, hours, a, true, b, true); got != "t_00,t_01,t_02" {
		t.Errorf("hourly [%v, %v] = %q, want t_01 (and the neighbours the widening adds)", a, b, got)
	}
	quarters := []string{"t_0000", "t_0015", "t_0030", "t_0045", "t_0100", "t_0115", "t_0130", "t_0145", "t_0200", "t_0215", "t_0230", "t_0245"}
	f = atCompile(t, "INTERVAL", ssIntervalProps("yyyy-MM-dd HH:mm:ss", "2024-11-03 00:00:00", "2024-11-03 02:59:00", "HHmm", 15, "Minutes"), quarters)
	if got := atName(t, f, quarters, est(1, 5)); got != "t_0100" {
		t.Fatalf("01:05 EST -> %q", got)
	}
	got := atRange(t, f, quarters, a, true, b, true)
	for _, want := range []string{"t_0100", "t_0145"} { // 01:05 EST, 01:55 EDT
		if !containsName(got, want) {
			t.Errorf("15-minute [%v, %v] = %q, missing %s", a, b, got, want)
		}
	}
	// AUTO_INTERVAL places by the wall clock too: 900-second partitions.
	auto := atNames("t_", 34)
	f = atCompile(t, "AUTO_INTERVAL", map[string]string{"datetime-lower": "2024-11-03 00:00:00", "datetime-upper": "2024-11-03 08:00:00", "sharding-seconds": "900"}, auto)
	row := atName(t, f, auto, est(1, 5))
	if got := atRange(t, f, auto, a, true, b, true); !containsName(got, row) {
		t.Errorf("AUTO_INTERVAL [%v, %v] = %q, missing %s (01:05 EST)", a, b, got, row)
	}
	// Without a transition within three hours nothing widens.
	if got := atRange(t, f, auto, est(4, 20), true, est(4, 40), true); got != "t_22,t_23" {
		t.Errorf("AUTO_INTERVAL [05:20, 05:40] EST = %q, want t_22,t_23", got)
	}
}

func containsName(list, name string) bool {
	for len(list) > 0 {
		i := 0
		for i < len(list) && list[i] != ',' {
			i++
		}
		if list[:i] == name {
			return true
		}
		if i == len(list) {
			break
		}
		list = list[i+1:]
	}
	return false
}
