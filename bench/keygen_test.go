package bench

// Side-by-side benchmarks of shardkey's keygen against peer Go libraries at
// comparable bit layouts. Each pair is a benchmark with sub-benchmarks
// impl=<library>/mode=<serial|parallel>, so that benchstat can put the
// libraries in columns (-col /impl); see README.md.
//
//	BenchmarkSnowflakeDefault  41-bit ms / 10-bit worker / 12-bit sequence,
//	                           capped at 4,096,000 IDs/s: shardkey vs bwmarrin
//	BenchmarkUncapped          41-bit ms / 0-bit worker / 22-bit sequence, a
//	                           sequence that does not run out: shardkey vs
//	                           bwmarrin (NextID's own cost, no waits)
//	BenchmarkSonyflakeLayout   39-bit time in 10 ms / 16-bit machine / 8-bit
//	                           sequence, capped at 25,600 IDs/s: shardkey vs
//	                           sonyflake
//
// Every benchmark reports allocations and an ids/s metric: IDs issued per
// second of benchmark time, all goroutines together in parallel mode.

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	"github.com/shardkey/shardkey/keygen"
	"github.com/sony/sonyflake"
)

// sonyEpoch is sonyflake's default start time, used by both sides of the
// sonyflake pair.
var sonyEpoch = time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC)

var (
	// shardkey SNOWFLAKE at ShardingSphere's default layout (41/10/12 ms).
	// Vibration is off because bwmarrin has none: with it, the first
	// sequence of each millisecond rotates and the cap is a little lower.
	propsSnowflakeDefault = keygen.Props{"worker-id": "1", "max-vibration-offset": "0"}
	// 41/0/22 ms: 4,194,304 IDs per millisecond, more than either library
	// issues, so no call waits for the next millisecond.
	propsUncapped = keygen.Props{"worker-id": "0", "worker-bits": "0", "sequence-bits": "22", "max-vibration-offset": "0"}
	// sonyflake v1.2.0's layout: 39-bit time in 10 ms units, 16-bit machine,
	// 8-bit sequence, epoch 2014-09-01 UTC. The widths match; the field
	// order differs (sonyflake puts the sequence above the machine id,
	// shardkey below the worker), which changes no cost.
	propsSonyflakeLayout = keygen.Props{"worker-id": "1", "time-unit": "10ms", "time-bits": "39", "worker-bits": "16",
		"sequence-bits": "8", "max-vibration-offset": "0", "epoch": sonyEpoch.Format(time.RFC3339)}
)

// bwmarrinEpoch is bwmarrin/snowflake's default epoch (Twitter's).
var bwmarrinEpoch = time.UnixMilli(snowflake.Epoch).UTC()

func newShardkey(tb testing.TB, p keygen.Props) keygen.IDGenerator {
	tb.Helper()
	g, err := keygen.NewID("SNOWFLAKE", p)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// newBwmarrin builds a bwmarrin node with nodeBits/stepBits. bwmarrin reads
// its layout from the package globals NodeBits and StepBits when NewNode
// runs (the node keeps its own copy), so they are set for the call and
// restored afterwards. This is not safe against concurrent NewNode calls
// (or ID.Node/ID.Step/ID.Time, which read globals); sub-benchmarks and
// subtests here run sequentially, so nothing overlaps.
func newBwmarrin(tb testing.TB, nodeBits, stepBits uint8, node int64) *snowflake.Node {
	tb.Helper()
	oldNode, oldStep := snowflake.NodeBits, snowflake.StepBits
	snowflake.NodeBits, snowflake.StepBits = nodeBits, stepBits
	defer func() {
		snowflake.NodeBits, snowflake.StepBits = oldNode, oldStep
		// NewNode also recomputes the deprecated package-level masks that
		// ID.Node and ID.Step use; rebuild them for the restored layout.
		if _, err := snowflake.NewNode(0); err != nil {
			tb.Fatal(err)
		}
	}()
	n, err := snowflake.NewNode(node)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func newSonyflake(tb testing.TB) *sonyflake.Sonyflake {
	tb.Helper()
	sf, err := sonyflake.New(sonyflake.Settings{
		StartTime: sonyEpoch,
		MachineID: func() (uint16, error) { return 1, nil },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return sf
}

func reportIDsPerSec(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
}

// The loops below are written out per library, each calling the library's
// own API directly (shardkey through the IDGenerator interface NewID
// returns, the peers through their concrete types), so no adapter adds an
// indirect call to either side.

func benchShardkey(b *testing.B, p keygen.Props) {
	b.Run("mode=serial", func(b *testing.B) {
		g := newShardkey(b, p)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.NextID(ctx); err != nil {
				b.Fatal(err)
			}
		}
		reportIDsPerSec(b)
	})
	b.Run("mode=parallel", func(b *testing.B) {
		g := newShardkey(b, p)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := g.NextID(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
		reportIDsPerSec(b)
	})
}

var sinkID snowflake.ID

func benchBwmarrin(b *testing.B, nodeBits, stepBits uint8, node int64) {
	b.Run("mode=serial", func(b *testing.B) {
		n := newBwmarrin(b, nodeBits, stepBits, node)
		b.ReportAllocs()
		for b.Loop() {
			n.Generate()
		}
		reportIDsPerSec(b)
	})
	b.Run("mode=parallel", func(b *testing.B) {
		n := newBwmarrin(b, nodeBits, stepBits, node)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var last snowflake.ID
			for pb.Next() {
				last = n.Generate()
			}
			sinkID = last
		})
		reportIDsPerSec(b)
	})
}

func benchSonyflake(b *testing.B) {
	b.Run("mode=serial", func(b *testing.B) {
		sf := newSonyflake(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sf.NextID(); err != nil {
				b.Fatal(err)
			}
		}
		reportIDsPerSec(b)
	})
	b.Run("mode=parallel", func(b *testing.B) {
		sf := newSonyflake(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := sf.NextID(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		reportIDsPerSec(b)
	})
}

// BenchmarkSnowflakeDefault: 41-bit ms / 10-bit worker / 12-bit sequence,
// both capped at 4,096 IDs per millisecond (≈244 ns/ID at the cap).
func BenchmarkSnowflakeDefault(b *testing.B) {
	b.Run("impl=shardkey", func(b *testing.B) { benchShardkey(b, propsSnowflakeDefault) })
	b.Run("impl=bwmarrin", func(b *testing.B) { benchBwmarrin(b, 10, 12, 1) })
}

// BenchmarkUncapped: 41-bit ms / 22-bit sequence, which neither library
// exhausts, so the cost per ID is the generator's own.
func BenchmarkUncapped(b *testing.B) {
	b.Run("impl=shardkey", func(b *testing.B) { benchShardkey(b, propsUncapped) })
	b.Run("impl=bwmarrin", func(b *testing.B) { benchBwmarrin(b, 0, 22, 0) })
}

// BenchmarkSonyflakeLayout: sonyflake's layout, capped at 256 IDs per 10 ms
// (≈39 µs/ID at the cap). Run it with -benchtime Nx (see README.md).
func BenchmarkSonyflakeLayout(b *testing.B) {
	b.Run("impl=shardkey", func(b *testing.B) { benchShardkey(b, propsSonyflakeLayout) })
	b.Run("impl=sonyflake", func(b *testing.B) { benchSonyflake(b) })
}

// agreeN is how many IDs each generator issues in TestPeersAgree: more than
// one tick's sequence space in every capped layout (4,096 per ms, 256 per
// 10 ms), so each generator also waits for the next tick.
const agreeN = 10_000

// checkIncreasing fails unless ids strictly increase (hence are unique) and
// are positive.
func checkIncreasing(t *testing.T, name string, ids []int64) {
	t.Helper()
	if len(ids) != agreeN {
		t.Fatalf("%s: %d IDs, want %d", name, len(ids), agreeN)
	}
	if ids[0] <= 0 {
		t.Errorf("%s: first ID %d is not positive", name, ids[0])
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("%s: ID %d = %d does not exceed ID %d = %d", name, i, ids[i], i-1, ids[i-1])
		}
	}
}

func shardkeyIDs(t *testing.T, g keygen.IDGenerator) []int64 {
	t.Helper()
	ctx := context.Background()
	ids := make([]int64, agreeN)
	for i := range ids {
		id, err := g.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

func bwmarrinIDs(n *snowflake.Node) []int64 {
	ids := make([]int64, agreeN)
	for i := range ids {
		ids[i] = n.Generate().Int64()
	}
	return ids
}

// checkParts decomposes id with d and checks its worker, and that its time
// is within a second of the wall clock.
func checkParts(t *testing.T, name string, d keygen.Decomposer, id, worker int64) keygen.Parts {
	t.Helper()
	p, err := d.Decompose(id)
	if err != nil {
		t.Fatalf("%s: Decompose(%d): %v", name, id, err)
	}
	if p.Worker != worker || p.Datacenter != 0 {
		t.Errorf("%s: Decompose(%d) = worker %d, datacenter %d; want worker %d, datacenter 0", name, id, p.Worker, p.Datacenter, worker)
	}
	if d := time.Since(p.Time); d < -time.Second || d > time.Second {
		t.Errorf("%s: Decompose(%d).Time = %v, %v from now", name, id, p.Time, d)
	}
	return p
}

// TestPeersAgree checks that every benchmarked pair issues sound IDs, so
// the benchmarks compare working generators: each side issues agreeN
// strictly increasing IDs, and the fields decode to the configured worker
// and the current time. bwmarrin's IDs are decoded with a keygen.Layout of
// the same widths and epoch, which also checks that the layouts compared
// are the same.
func TestPeersAgree(t *testing.T) {
	t.Run("SnowflakeDefault", func(t *testing.T) {
		g := newShardkey(t, propsSnowflakeDefault)
		sk := shardkeyIDs(t, g)
		checkIncreasing(t, "shardkey", sk)
		d, ok := g.(keygen.Decomposer)
		if !ok {
			t.Fatalf("shardkey SNOWFLAKE (%T) is not a keygen.Decomposer", g)
		}
		for _, id := range []int64{sk[0], sk[agreeN-1]} {
			checkParts(t, "shardkey", d, id, 1)
		}
		if l := d.(interface{ Layout() keygen.Layout }).Layout(); l.IDsPerSecond() != 4_096_000 {
			t.Errorf("shardkey layout %v: %v IDs/s, want 4,096,000", l, l.IDsPerSecond())
		}

		bw := bwmarrinIDs(newBwmarrin(t, 10, 12, 1))
		checkIncreasing(t, "bwmarrin", bw)
		l := keygen.Layout{Epoch: bwmarrinEpoch, Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12}
		for _, id := range []int64{bw[0], bw[agreeN-1]} {
			checkParts(t, "bwmarrin", l, id, 1)
			if n := snowflake.ParseInt64(id).Node(); n != 1 {
				t.Errorf("bwmarrin: ID(%d).Node() = %d, want 1", id, n)
			}
		}
	})

	t.Run("Uncapped", func(t *testing.T) {
		g := newShardkey(t, propsUncapped)
		sk := shardkeyIDs(t, g)
		checkIncreasing(t, "shardkey", sk)
		d := g.(keygen.Decomposer)
		checkParts(t, "shardkey", d, sk[agreeN-1], 0)
		if l := d.(interface{ Layout() keygen.Layout }).Layout(); l.WorkerBits != 0 || l.SequenceBits != 22 || l.TimeBits != 41 {
			t.Errorf("shardkey layout %v, want 41/0/22", l)
		}

		bw := bwmarrinIDs(newBwmarrin(t, 0, 22, 0))
		checkIncreasing(t, "bwmarrin", bw)
		l := keygen.Layout{Epoch: bwmarrinEpoch, Unit: time.Millisecond, TimeBits: 41, SequenceBits: 22}
		checkParts(t, "bwmarrin", l, bw[agreeN-1], 0)
		if snowflake.NodeBits != 10 || snowflake.StepBits != 12 {
			t.Errorf("bwmarrin globals not restored: NodeBits %d, StepBits %d", snowflake.NodeBits, snowflake.StepBits)
		}
	})

	t.Run("SonyflakeLayout", func(t *testing.T) {
		g := newShardkey(t, propsSonyflakeLayout)
		sk := shardkeyIDs(t, g)
		checkIncreasing(t, "shardkey", sk)
		p := checkParts(t, "shardkey", g.(keygen.Decomposer), sk[agreeN-1], 1)

		sf := newSonyflake(t)
		sy := make([]int64, agreeN)
		for i := range sy {
			id, err := sf.NextID()
			if err != nil {
				t.Fatal(err)
			}
			sy[i] = int64(id)
		}
		checkIncreasing(t, "sonyflake", sy)
		last := uint64(sy[agreeN-1])
		if m := sonyflake.MachineID(last); m != 1 {
			t.Errorf("sonyflake: MachineID(%d) = %d, want 1", last, m)
		}
		// Same epoch and unit: the two time fields count the same 10 ms
		// ticks. The IDs were issued about 0.4 s apart (10,000 IDs at
		// 25,600/s), and sonyflake may run up to a tick ahead.
		syTicks := int64(sonyflake.ElapsedTime(last) / (10 * time.Millisecond))
		if diff := syTicks - p.Timestamp; diff < 0 || diff > 100 {
			t.Errorf("time fields disagree: sonyflake %d ticks, shardkey %d ticks (sonyflake issued later, so 0..100 more expected)", syTicks, p.Timestamp)
		}
	})
}
