package keygen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// uuidGenerator is UUID, ShardingSphere's UUID key type: string keys,
// random (version 4) by default, or time-ordered (version 7, RFC 9562) with
// version=7. Version 7 keys from one generator strictly increase: within a
// millisecond the 12-bit rand_a field counts up (RFC 9562 method 1), and a
// used-up counter or a backwards clock borrows the next millisecond.
type uuidGenerator struct {
	version int
	clock   Clock
	now     func() int64

	mu      sync.Mutex
	lastMs  int64
	counter int64
}

func newUUIDGenerator(props Props, o Options) (Generator, error) {
	r := readProps("UUID", props, "version")
	v := r.oneOf("version", "4", "4", "7")
	if err := r.err(); err != nil {
		return nil, err
	}
	g := &uuidGenerator{version: 4, clock: o.Clock, now: nowNanoFunc(o.Clock)}
	if v == "7" {
		g.version = 7
	}
	return g, nil
}

func (g *uuidGenerator) Type() string { return "UUID" }

// NextKey returns the next UUID as a lower-case string.
func (g *uuidGenerator) NextKey(ctx context.Context) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24)
	if g.version == 7 {
		ms, counter := g.tick()
		u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
		u[6], u[7] = byte(counter>>8), byte(counter)
	}
	u[6] = u[6]&0x0f | byte(g.version)<<4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
	return string(s[:]), nil
}

// tick returns the millisecond and counter of the next version 7 key.
func (g *uuidGenerator) tick() (ms, counter int64) {
	now := g.now() / int64(time.Millisecond)
	g.mu.Lock()
	defer g.mu.Unlock()
	if now > g.lastMs {
		var b [2]byte
		_, _ = rand.Read(b[:])
		// Start low in the 12-bit space so a busy millisecond rarely borrows.
		g.lastMs, g.counter = now, int64(b[0])<<2|int64(b[1]&3)
	} else if g.counter++; g.counter > 0xfff {
		g.lastMs, g.counter = g.lastMs+1, 0
	}
	return g.lastMs, g.counter
}
