package shardconf

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDivisorMatchesRemainder(t *testing.T) {
	ds := []uint64{1, 2, 3, 4, 7, 10, 16, 1000, 1023, 65537, math.MaxInt32, 1 << 32, 1<<40 + 7, math.MaxUint64}
	as := []uint64{0, 1, 2, 15, 16, 17, 1<<63 - 1, 1 << 63, math.MaxUint64, math.MaxUint64 - 1, 1_331_042_935_696_789_505}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		ds = append(ds, rng.Uint64N(1<<31)+1, rng.Uint64()|1)
		as = append(as, rng.Uint64(), rng.Uint64N(1<<20))
	}
	for _, d := range ds {
		v := newDivisor(d)
		for _, a := range as {
			if got, want := v.mod(a), a%d; got != want {
				t.Fatalf("%d %% %d = %d, want %d", a, d, got, want)
			}
		}
		if d < 1<<32 {
			for _, a := range []uint32{0, 1, 2, 1 << 31, math.MaxUint32, math.MaxUint32 - 1, 2145772861} {
				if got, want := v.mod32(a), uint64(a)%d; got != want {
					t.Fatalf("mod32: %d %% %d = %d, want %d", a, d, got, want)
				}
			}
			for i := 0; i < 2000; i++ {
				a := rng.Uint32()
				if got, want := v.mod32(a), uint64(a)%d; got != want {
					t.Fatalf("mod32: %d %% %d = %d, want %d", a, d, got, want)
				}
			}
		}
		for i := 0; i < 2000; i++ {
			a := rng.Uint64()
			if got, want := v.mod(a), a%d; got != want {
				t.Fatalf("%d %% %d = %d, want %d", a, d, got, want)
			}
		}
	}
}
