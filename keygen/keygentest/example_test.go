package keygentest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// A fake clock makes keys reproducible and lets a test step the clock
// back, which a real clock rarely does on cue.
func ExampleClock() {
	clock := keygentest.NewClock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	g, _ := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "7", "max-tolerate-time-difference-milliseconds": "10"},
		keygen.WithClock(clock))
	ctx := context.Background()
	id, _ := g.NextID(ctx)
	p, _ := g.(keygen.Decomposer).Decompose(id)
	fmt.Println(id, p.Time.Format(time.RFC3339Nano), p.Worker)

	clock.Add(-5 * time.Millisecond) // within the tolerance: the generator waits (through Sleep)
	next, err := g.NextID(ctx)
	fmt.Println(next > id, err, clock.Sleeps())

	clock.Add(-time.Second) // beyond it: an error, never a repeated key
	_, err = g.NextID(ctx)
	var cb *keygen.ClockBackwardsError
	fmt.Println(errors.As(err, &cb), errors.Is(err, keygen.ErrClockBackwards))
	// Output:
	// 1331171426304028672 2026-11-22T08:00:00Z 7
	// true <nil> [5ms]
	// true true
}
