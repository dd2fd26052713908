package keygen_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// ssModel is an independent model of ShardingSphere's
// SnowflakeKeyGenerateAlgorithm.generateKey (infra/algorithm/type/
// key-generator/type/snowflake, SnowflakeKeyGenerateAlgorithm.java), written
// from its description: one synchronized call reads the clock; a clock
// behind the last millisecond by less than the tolerance sleeps the
// difference and reads it again, by the tolerance or more throws; the same
// millisecond moves the sequence on (a wrap to 0 busy-reads the clock until
// a later millisecond, keeping sequence 0); any other millisecond moves the
// vibration counter (from -1, back to 0 after max-vibration-offset) and
// starts the sequence there. Its clock is a keygentest.Clock whose Sleep
// moves time; the busy read is a Sleep to the next millisecond, where a
// real clock's first later reading falls.
type ssModel struct {
	clk                 *keygentest.Clock
	worker, maxVib, tol int64
	offset, seq, lastMs int64
	epochMs             int64
}

var errModelClockBack = errors.New("model: clock is moving backwards")

func newSSModel(clk *keygentest.Clock, worker, maxVib, tol int64) *ssModel {
	return &ssModel{clk: clk, worker: worker, maxVib: maxVib, tol: tol, offset: -1,
		epochMs: keygen.ShardingSphereEpoch.UnixMilli()}
}

func (m *ssModel) millis() int64 { return m.clk.Now().UnixMilli() }

func (m *ssModel) generateKey() (int64, error) {
	cur := m.millis()
	if m.lastMs > cur {
		diff := m.lastMs - cur
		if diff >= m.tol {
			return 0, errModelClockBack
		}
		m.clk.Sleep(time.Duration(diff) * time.Millisecond)
		cur = m.millis()
	}
	if m.lastMs == cur {
		m.seq = (m.seq + 1) & 4095
		if m.seq == 0 {
			for cur <= m.lastMs {
				next := time.UnixMilli(m.lastMs + 1)
				m.clk.Sleep(next.Sub(m.clk.Now()))
				cur = m.millis()
			}
		}
	} else {
		if m.offset == m.maxVib {
			m.offset = 0
		} else {
			m.offset++
		}
		m.seq = m.offset
	}
	m.lastMs = cur
	return (cur-m.epochMs)<<22 | m.worker<<12 | m.seq, nil
}

// TestSnowflakeIssuesShardingSpheresKeysForRandomClockScripts: for random
// worker ids, max-vibration-offsets and tolerances, and random scripts of
// clock moves (same millisecond, next, gaps, runs that exhaust a
// millisecond, steps back within, at and beyond the tolerance, sub-
// millisecond positions), SNOWFLAKE issues the model's key at every call,
// through NextID and NextIDs alike, and fails exactly where the model
// throws.
func TestSnowflakeIssuesShardingSpheresKeysForRandomClockScripts(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 16))
	start := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for trial := range 60 {
		worker := rng.Int64N(1024)
		maxVib := []int64{0, 1, 2, 3, 4095, rng.Int64N(4096)}[rng.IntN(6)]
		tol := []int64{0, 1, 2, 10, rng.Int64N(40)}[rng.IntN(5)]
		name := fmt.Sprintf("seed %d trial %d worker %d max-vibration-offset %d tolerance %d", seed, trial, worker, maxVib, tol)
		gc, mc := keygentest.NewClock(start), keygentest.NewClock(start)
		g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": strconv.FormatInt(worker, 10),
			"max-vibration-offset":                      strconv.FormatInt(maxVib, 10),
			"max-tolerate-time-difference-milliseconds": strconv.FormatInt(tol, 10)}, keygen.WithClock(gc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m := newSSModel(mc, worker, maxVib, tol)
		move := func(d time.Duration) { gc.Add(d); mc.Add(d) }
		for step := range 300 {
			switch op := rng.IntN(10); op {
			case 0, 1: // the same millisecond
			case 2, 3:
				move(time.Millisecond)
			case 4:
				move(time.Duration(2+rng.IntN(50)) * time.Millisecond)
			case 5: // back, within, at or beyond the tolerance
				move(-time.Duration(1+rng.Int64N(tol+2)) * time.Millisecond)
			case 6: // a sub-millisecond position
				move(time.Duration(rng.IntN(int(time.Millisecond))))
			}
			n := 1 + rng.IntN(3)
			if rng.IntN(12) == 0 {
				n = 4096 - int(rng.Int64N(maxVib+1)) + rng.IntN(3) // around an exhausted millisecond
			}
			want := make([]int64, 0, n)
			var wantErr error
			for range n {
				k, err := m.generateKey()
				if err != nil {
					wantErr = err
					break
				}
				want = append(want, k)
			}
			got := make([]int64, n)
			var gotErr error
			if n > 1 && rng.IntN(2) == 0 && wantErr == nil {
				gotErr = g.NextIDs(ctx, got)
			} else {
				for i := range got {
					if got[i], gotErr = g.NextID(ctx); gotErr != nil {
						break
					}
				}
			}
			if (wantErr != nil) != (gotErr != nil) || (gotErr != nil && !errors.Is(gotErr, keygen.ErrClockBackwards)) {
				t.Fatalf("%s, step %d: error %v, model's %v", name, step, gotErr, wantErr)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, step %d, key %d of %d: %d (%s), model's %d (%s)", name, step, i, n,
						got[i], parts(got[i]), want[i], parts(want[i]))
				}
			}
			if gm, mm := gc.Now().UnixMilli(), mc.Now().UnixMilli(); gm != mm {
				t.Fatalf("%s, step %d: clocks apart after the call: %d and the model's %d", name, step, gm, mm)
			}
			// Within the millisecond the two may differ: Java sleeps a
			// difference of milliseconds, shardkey to the millisecond's start.
			mc.Set(gc.Now())
		}
	}
}

func parts(id int64) string {
	return fmt.Sprintf("ms %d worker %d seq %d", id>>22, id>>12&1023, id&4095)
}
