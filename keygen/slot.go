package keygen

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Generators built in one process for the same clock, layout and worker
// share their state. A generator recreated with the same worker id (or one
// built per request by mistake) then continues after the IDs its
// predecessor issued instead of repeating them: peers that keep state per
// instance collided on most of the first IDs after such a restart.
//
// An entry is dropped only when no generator uses it any more and its last
// ID lies more than slotIdle behind its clock, so a new state starts in a
// tick nobody used. States whose clock-back flag was bumped are kept, since
// their last ID is not their latest.

// slotKey identifies an ID space: two generators with equal keys would
// issue the same IDs.
type slotKey struct {
	clock  Clock
	typ    string
	layout Layout
	fixed  int64 // datacenter and worker fields
}

// slotState is what a shared state reports for pruning.
type slotState interface {
	// lastUsed is the latest instant the state issued an ID for; ok is false
	// when the state must be kept regardless.
	lastUsed(l Layout) (t time.Time, ok bool)
}

type slotEntry struct {
	state slotState
	refs  atomic.Int64 // live generators
}

const slotIdle = 10 * time.Second

var slots = struct {
	sync.Mutex
	m       map[slotKey]*slotEntry
	pruneAt int
}{m: map[slotKey]*slotEntry{}, pruneAt: 256}

// sharedState returns the state for k, shared with the live generators of
// the same key. owner is the generator that will use it: the state is
// released when owner is garbage collected. Clocks of non-comparable types
// get private state. guard, if not nil, is called with slots locked before
// the state is taken; its error is returned. release gives the state up at
// once, for an owner that will not be used (its construction failed).
func sharedState[T, O any, PT interface {
	*T
	slotState
}](k slotKey, owner *O, guard func() error) (state PT, release func(), err error) {
	if !reflect.TypeOf(k.clock).Comparable() {
		return newSlotState[T, PT](k), func() {}, nil
	}
	k.layout.Epoch = k.layout.Epoch.UTC() // equal instants, equal keys
	slots.Lock()
	defer slots.Unlock()
	if guard != nil {
		if err := guard(); err != nil {
			return nil, nil, err
		}
	}
	e := slots.m[k]
	if e == nil {
		if len(slots.m) >= slots.pruneAt {
			pruneSlots()
		}
		e = &slotEntry{state: newSlotState[T, PT](k)}
		slots.m[k] = e
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
	s := PT(new(T))
	if in, ok := any(s).(slotIniter); ok {
		in.initSlot(k)
	}
	return s
}

// pruneSlots drops unused, idle entries. slots is locked.
func pruneSlots() {
	for k, e := range slots.m {
		if e.refs.Load() > 0 {
			continue
		}
		if t, ok := e.state.lastUsed(k.layout); ok && k.clock.Now().Sub(t) > slotIdle {
			delete(slots.m, k)
		}
	}
	slots.pruneAt = 2 * max(len(slots.m), 128)
}
