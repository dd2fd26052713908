package keygen_test

import (
	"context"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// TestWorkerIDGivenTwiceIsAnError: props documents that a prop given
// twice under two spellings is an error. That holds when one spelling
// holds a non-numeric worker-id (env:NAME, hostname, auto) and another a
// number too: whichever spelling map iteration yields first, the
// generator is refused, every time.
func TestWorkerIDGivenTwiceIsAnError(t *testing.T) {
	t.Setenv("SHARDKEY_TEST_WORKER", "3")
	built, refused := 0, 0
	var worker int64 = -1
	for range 200 {
		g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "env:SHARDKEY_TEST_WORKER", "workerId": "5"})
		if err != nil {
			refused++
			continue
		}
		built++
		id, err := g.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p, _ := g.(keygen.Decomposer).Decompose(id)
		worker = p.Worker
	}
	if built > 0 {
		t.Fatalf("worker-id given twice (env:SHARDKEY_TEST_WORKER=3 and workerId=5): built %d times (worker %d), refused %d times; want always refused",
			built, worker, refused)
	}
}
