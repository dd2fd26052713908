package etcdlease

import (
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// A holder whose clock ran an hour ahead leaves its id's record an hour
// ahead. New generators with a right clock must still start on another
// free id: claiming the lowest free id regardless would make every one of
// them refuse (ClockBackwardsError) for the hour, though 1023 ids are free.
func TestIDUsedAheadOfTheClockDoesNotBlockNewGenerators(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	now := time.Now()
	gA, err := newGenerator(t, newSource(t, cli, ns, Config{}), keygen.WithClock(keygentest.NewClock(now.Add(time.Hour))))
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	issueSome(t, gA, 10)
	if err := closeGen(gA); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		g, err := newGenerator(t, newSource(t, cli, ns, Config{}))
		if err != nil {
			t.Fatalf("generator %d with a right clock: %v", i, err)
		}
		id := issueSome(t, g, 1)[0]
		p, _ := g.(keygen.Decomposer).Decompose(id)
		if p.Worker == 0 {
			t.Fatalf("generator %d got worker 0, used an hour ahead", i)
		}
	}
}
