package keygen

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestSlotsPrunedOnlyWhenUnusedAndIdle: entries of collected generators
// whose last ID is long past are dropped; a live generator's entry stays.
func TestSlotsPrunedOnlyWhenUnusedAndIdle(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	live := keygentest.NewClock(start)
	keep, err := NewID("SNOWFLAKE", Props{"worker-id": "1"}, WithClock(live))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keep.NextID(context.Background()); err != nil {
		t.Fatal(err)
	}
	var clocks []*keygentest.Clock
	for i := 0; i < 300; i++ {
		c := keygentest.NewClock(start)
		clocks = append(clocks, c)
		g, err := NewID("SNOWFLAKE", Props{"worker-id": "1"}, WithClock(c))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.NextID(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clocks {
		c.Add(time.Minute)
	}
	live.Add(time.Minute)
	ours := map[Clock]bool{}
	for _, c := range clocks {
		ours[Clock(c)] = true
	}
	// Wait for the finalizers of this test's generators (only theirs:
	// states other tests left behind do not count) to release their states.
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		slots.Lock()
		unused := 0
		for k, e := range slots.m {
			if ours[k.clock] && e.refs.Load() == 0 {
				unused++
			}
		}
		slots.Unlock()
		if unused >= len(clocks) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	slots.Lock()
	pruneSlots()
	_, kept := slots.m[slotKey{clock: live, typ: "SNOWFLAKE", layout: keep.(*snowflake).layout, fixed: keep.(*snowflake).fixed}]
	n := 0
	for k := range slots.m {
		for _, c := range clocks {
			if k.clock == Clock(c) {
				n++
			}
		}
	}
	slots.Unlock()
	if !kept {
		t.Fatal("the live generator's state was dropped")
	}
	if n != 0 {
		t.Fatalf("%d idle, unused states kept", n)
	}
	runtime.KeepAlive(keep)
}
