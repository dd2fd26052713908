package keygen

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// SequenceScope owns the sequence state that generators of one ID space
// share, so that two generators of the same space never issue the same ID.
//
// An ID space is what fixes every bit of an ID except time and sequence:
// the layout (epoch, unit, the widths of the fields below time) and the
// datacenter and worker ids, on one clock. Layouts that differ only where
// no ID does — the time field's width, how the machine bits split between
// datacenter and worker for the same joint value — are one space. Two
// generators of the same space that kept their own sequences would issue
// the same IDs (a generator rebuilt with the same worker id, or one built
// per request by mistake, would start again at sequence 0 of a tick its
// predecessor used); in one scope they share one state instead, so the
// second continues after the IDs the first issued.
//
// What is shared, per space of a scope:
//
//   - SNOWFLAKE, UID and LEAF_SNOWFLAKE: the last ID issued and the
//     per-tick counters that Stats reports. The three types run the same
//     engine, so a SNOWFLAKE whose props give UID's (or Leaf's) layout
//     shares UID's (or LEAF_SNOWFLAKE's) state.
//   - SNOWFLAKE_JS: the last ID issued and the latest second seen.
//   - CACHED_UID: the next second not yet filled into any ring. A
//     CACHED_UID and a SNOWFLAKE or UID of the same space would issue from
//     the same (second, sequence) space, so New refuses the second of them
//     with ErrIDSpaceInUse while the first is referenced (CACHED_UID: until
//     closed and the clock has passed the seconds it filled); one built
//     after a CACHED_UID starts after the seconds it filled.
//   - UUID and SEGMENT share nothing: UUIDs are random, and SEGMENT's
//     ranges are claimed in its database.
//
// Clocks: generators share only when their clocks are the same timeline.
// Every *SystemClock is one timeline (they all read the same time: see
// SystemClock), and so is a clock of a type that embeds *SystemClock (it
// must read the time its SystemClock reads); all clocks of one type that
// cannot be compared with == are one timeline too. Any other Clock value
// is a timeline of its own (a test's fake clock), so generators on two
// distinct values of a custom clock type share nothing: give the
// generators of one process one Clock value.
//
// When it is released: a generator holds its space's state until it is
// garbage collected (or its construction fails); Close does not release
// it. A state of a SystemClock that nobody holds is dropped at the scope's
// next prune if its last ID then lies more than ten seconds behind the
// clock, so a new state starts in a tick nobody used (a SystemClock never
// steps back); a prune runs when a new space is added to a scope holding
// 256 states, or twice as many as the last prune kept if that is more. A
// state whose clock-back flag was bumped is never dropped (its last ID is
// not its latest), nor is a CACHED_UID space (its generators may have
// filled seconds ahead of the clock), nor a state of any other clock: a
// custom clock may step back, and the kept state is what turns that step
// into a wait or a *ClockBackwardsError instead of a repeated ID. Close on
// a CACHED_UID ends its claim on the space but keeps the space's next
// second. All of a scope's state goes when the scope and its generators
// are unreachable: give tests on fake clocks a scope of their own.
//
// Generators built without WithSequenceScope use DefaultSequenceScope, so
// that every generator of a process shares by default. A scope of its own
// (NewSequenceScope) is for tests, and for a process that keeps
// generators of the same space apart by other means (tenants whose IDs go
// to different tables); generators of different scopes share nothing and
// will issue the same IDs for the same space. When unsure, use the
// default.
//
// The zero value is an empty scope, ready to use; a nil *SequenceScope
// stands for DefaultSequenceScope wherever a scope is taken (options,
// methods). A SequenceScope must not be copied after first use. Its
// methods are safe for concurrent use.
type SequenceScope struct {
	mu      sync.Mutex
	slots   map[slotKey]*slotEntry   // SNOWFLAKE, UID, SNOWFLAKE_JS states
	pruneAt int                      // prune when slots holds this many
	cached  map[slotKey]*cachedSpace // CACHED_UID spaces, never dropped
}

// NewSequenceScope returns an empty scope, sharing nothing with any other.
func NewSequenceScope() *SequenceScope { return new(SequenceScope) }

var defaultScope SequenceScope

// DefaultSequenceScope returns the process's scope: the one generators
// built without WithSequenceScope share.
func DefaultSequenceScope() *SequenceScope { return &defaultScope }

// WithSequenceScope sets the scope whose state the generator shares with
// the generators of its ID space; nil means DefaultSequenceScope.
func WithSequenceScope(s *SequenceScope) Option { return func(o *Options) { o.SequenceScope = s } }

// Spaces returns the number of ID spaces the scope holds state for,
// released or not; a space both a CACHED_UID and a SNOWFLAKE or UID used
// counts once for each.
func (s *SequenceScope) Spaces() int {
	s = s.orDefault()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.slots) + len(s.cached)
}

// orDefault is s, or DefaultSequenceScope for nil.
func (s *SequenceScope) orDefault() *SequenceScope {
	if s == nil {
		return DefaultSequenceScope()
	}
	return s
}

// lock locks the scope, making its maps on first use.
func (s *SequenceScope) lock() {
	s.mu.Lock()
	if s.slots == nil {
		s.slots = map[slotKey]*slotEntry{}
		s.cached = map[slotKey]*cachedSpace{}
		s.pruneAt = 256
	}
}

// slotKey identifies an ID space: two generators with equal keys would
// issue the same IDs. Make one with spaceKey.
type slotKey struct {
	clock  any    // the clock's timeline (timeline)
	engine string // the state's kind: "snowflake", "js" or "cached"
	layout Layout // epoch in UTC
	fixed  int64  // datacenter and worker fields
}

// spaceKey is the key of the space of the given engine, layout and fixed
// fields on clock c. Layouts that issue the same IDs give the same key:
// equal epochs as instants; the time field's width only bounds it (it is
// the top field), and adjacent datacenter and worker fields are one value,
// fixed, however the bits are split between them.
func spaceKey(c Clock, engine string, l Layout, fixed int64) slotKey {
	l.Epoch = l.Epoch.UTC()
	l.TimeBits = 0
	if l.BackupBits == 0 {
		l.WorkerBits, l.DatacenterBits = l.WorkerBits+l.DatacenterBits, 0
	}
	return slotKey{clock: timeline(c), engine: engine, layout: l, fixed: fixed}
}

// nonComparableClock stands for every clock of one non-comparable type.
type nonComparableClock struct{ t reflect.Type }

// timeline is the clock's part of a key. Clocks that may be the same
// timeline share (fail closed): every SystemClock reads the process's one
// timeline, and clocks of a type that cannot be compared cannot be told
// apart.
func timeline(c Clock) any {
	switch sc := c.(type) {
	case nil:
		return nil
	case interface{ timeline() *sysTimeline }: // *SystemClock, or a type embedding one
		return sc.timeline()
	}
	if !hashable(c) {
		return nonComparableClock{reflect.TypeOf(c)}
	}
	return c
}

// hashable reports whether c can be a map key: its type is comparable
// and so is every value its interface fields hold (== panics otherwise).
func hashable(c Clock) (ok bool) {
	if !reflect.TypeOf(c).Comparable() {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return any(c) == any(c)
}

// slotState is what a shared state reports for pruning.
type slotState interface {
	// lastUsed is the latest instant the state issued an ID for; ok is false
	// when the state must be kept regardless.
	lastUsed(l Layout) (t time.Time, ok bool)
}

type slotEntry struct {
	state slotState
	clock Clock        // the clock of the generator that made it, which prune reads (one of the key's timeline)
	refs  atomic.Int64 // live generators
}

// slotIdle is how far behind its clock an unused state's last ID must lie
// before the state is dropped.
const slotIdle = 10 * time.Second

// sharedState returns the state for k in scope s, shared with the live
// generators of the same key; c is the generator's clock. owner is the
// generator that will use it: the state is released when owner is garbage
// collected. guard, if not nil, is called with s locked before the state
// is taken (it must not read a clock: that is the user's code); its error
// is returned. release gives the state up at once, for an owner that will
// not be used (its construction failed).
func sharedState[T, O any, PT interface {
	*T
	slotState
}](s *SequenceScope, k slotKey, c Clock, owner *O, guard func() error) (state PT, release func(), err error) {
	s.lock()
	defer s.mu.Unlock()
	if guard != nil {
		if err := guard(); err != nil {
			return nil, nil, err
		}
	}
	e := s.slots[k]
	if e == nil {
		if len(s.slots) >= s.pruneAt {
			s.prune()
		}
		e = &slotEntry{state: newSlotState[T, PT](k), clock: c}
		s.slots[k] = e
	}
	e.refs.Add(1)
	cleanup := runtime.AddCleanup(owner, func(e *slotEntry) { e.refs.Add(-1) }, e)
	var once sync.Once
	release = func() {
		once.Do(func() {
			cleanup.Stop()
			e.refs.Add(-1)
		})
	}
	return e.state.(PT), release, nil
}

// slotIniter is implemented by states whose zero value is not their
// initial value.
type slotIniter interface{ initSlot(k slotKey) }

// newSlotState returns a new state for k, initialised if it needs to be.
func newSlotState[T any, PT interface {
	*T
	slotState
}](k slotKey) PT {
	st := PT(new(T))
	if in, ok := any(st).(slotIniter); ok {
		in.initSlot(k)
	}
	return st
}

// prune drops unused entries of SystemClocks that are idle: only that
// clock is known never to step back to the ticks a dropped state used. s
// is locked.
func (s *SequenceScope) prune() {
	for k, e := range s.slots {
		sys, ok := e.clock.(*SystemClock)
		if !ok || e.refs.Load() > 0 {
			continue
		}
		if t, ok := e.state.lastUsed(k.layout); ok && sys.Now().Sub(t) > slotIdle {
			delete(s.slots, k)
		}
	}
	s.pruneAt = 2 * max(len(s.slots), 128)
}
