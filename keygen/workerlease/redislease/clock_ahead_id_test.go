package redislease

import (
	"context"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestIDUsedAheadOfTheClockDoesNotBlockNewGenerators: a holder whose clock
// ran an hour ahead leaves its id's last use an hour ahead. New generators
// with a right clock must still start on another free id: claiming the
// lowest free id regardless makes every one of them refuse
// (ClockBackwardsError) for the hour, though 1023 ids are free.
func TestIDUsedAheadOfTheClockDoesNotBlockNewGenerators(t *testing.T) {
	s := newSource(t, sharedClient(t), Config{TTL: time.Second})
	gA := generator(t, s, keygen.WithClock(keygentest.NewClock(time.Now().Add(time.Hour))))
	for range 10 {
		if _, err := gA.NextID(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := gA.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		g, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(s), keygen.WithClock(otherProcess{}))
		if err != nil {
			t.Fatalf("generator %d with a right clock: %v", i, err)
		}
		t.Cleanup(func() { g.(closingGenerator).Close() })
		id, err := g.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if w := workerOf(t, g, id); w == 0 {
			t.Fatalf("generator %d got worker 0, used an hour ahead", i)
		}
	}
}
