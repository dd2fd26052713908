package keygen

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Test for them with errors.Is; the typed errors below
// carry the details and match the sentinel named in their doc comment.
var (
	// ErrUnknownType: New or NewID was given a type that is not registered.
	ErrUnknownType = errors.New("keygen: unknown generator type")
	// ErrNotInt64: NewID was given a type whose keys are not int64 (UUID),
	// or a generator read through AsIDGenerator issued a key that is not.
	ErrNotInt64 = errors.New("keygen: generator keys are not int64")
	// ErrDuplicateType: Register was given a type name already in use.
	ErrDuplicateType = errors.New("keygen: generator type already registered")
	// ErrInvalidProps: a prop key is unknown, duplicated, missing or has a
	// bad value. Matched by *PropError.
	ErrInvalidProps = errors.New("keygen: invalid props")
	// ErrInvalidLayout: a bit layout does not fit in 63 bits, has a field
	// out of range, or runs out too soon. Matched by *LayoutError.
	ErrInvalidLayout = errors.New("keygen: invalid layout")
	// ErrClockBackwards: the clock moved backwards further than the
	// generator tolerates. Matched by *ClockBackwardsError.
	ErrClockBackwards = errors.New("keygen: clock moved backwards")
	// ErrTimeOverflow: the time no longer fits the layout's time field (or
	// precedes its epoch). The generator refuses rather than issue a
	// negative or wrapped ID. Matched by *TimeOverflowError.
	ErrTimeOverflow = errors.New("keygen: time does not fit the layout")
	// ErrNoLayout: LayoutFor was given a type without a Snowflake layout
	// (UUID, a custom type).
	ErrNoLayout = errors.New("keygen: type has no Snowflake layout")
	// ErrInvalidID: an ID cannot be parsed or decomposed, or a generator
	// read through AsIDGenerator issued the key 0.
	ErrInvalidID = errors.New("keygen: invalid id")
	// ErrIDSpaceInUse: UID and CACHED_UID with the same clock, layout and
	// worker id issue the same IDs; New refuses one while the other is in
	// use in the process (CACHED_UID fills seconds ahead of the clock that
	// UID would issue again when the clock reaches them).
	ErrIDSpaceInUse = errors.New("keygen: ID space in use by another generator type")
)

// PropError reports a bad prop: an unknown or duplicated key, a missing
// required key, or a value that does not parse or is out of range.
type PropError struct {
	Type    string // generator type, upper case
	Key     string // the key as the caller wrote it
	Value   string // the value as given ("" when missing)
	Allowed string // what would have been accepted
	Reason  string // short description of the problem
}

func (e *PropError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("keygen: %s prop %q: %s; allowed: %s", e.Type, e.Key, e.Reason, e.Allowed)
	}
	return fmt.Sprintf("keygen: %s prop %q = %q: %s; allowed: %s", e.Type, e.Key, e.Value, e.Reason, e.Allowed)
}

// reasonUnknownProp is PropError.Reason for a key the type does not take.
const reasonUnknownProp = "unknown prop"

// Unknown reports whether the error says the generator type does not take
// the prop at all (as opposed to a missing, duplicated or bad value).
// Callers offering one set of props to several types use it to learn which
// types accept which props.
func (e *PropError) Unknown() bool { return e.Reason == reasonUnknownProp }

// Is reports whether target is ErrInvalidProps.
func (e *PropError) Is(target error) bool { return target == ErrInvalidProps }

// LayoutError reports a bit layout that cannot be used.
type LayoutError struct {
	Layout  Layout
	Reason  string
	RunsOut time.Time // zero unless the layout was refused for running out
}

func (e *LayoutError) Error() string {
	if !e.RunsOut.IsZero() {
		return fmt.Sprintf("keygen: layout %s runs out on %s: %s", e.Layout, e.RunsOut.UTC().Format("2006-01-02"), e.Reason)
	}
	return fmt.Sprintf("keygen: layout %s: %s", e.Layout, e.Reason)
}

// Is reports whether target is ErrInvalidLayout.
func (e *LayoutError) Is(target error) bool { return target == ErrInvalidLayout }

// ClockBackwardsError reports a backwards clock step beyond the tolerance.
type ClockBackwardsError struct {
	Last      time.Time     // time of the last issued key
	Now       time.Time     // what the clock read
	Tolerance time.Duration // steps shorter than this are waited out
	Reason    string        // extra context, e.g. "clock-back flag exhausted"
}

func (e *ClockBackwardsError) Error() string {
	msg := fmt.Sprintf("keygen: clock moved backwards by %v (last key at %s, clock reads %s, tolerance %v)",
		e.Last.Sub(e.Now), e.Last.UTC().Format(time.RFC3339Nano), e.Now.UTC().Format(time.RFC3339Nano), e.Tolerance)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Is reports whether target is ErrClockBackwards.
func (e *ClockBackwardsError) Is(target error) bool { return target == ErrClockBackwards }

// TimeOverflowError reports a clock reading outside the layout's time range.
type TimeOverflowError struct {
	Now   time.Time // what the clock read
	Epoch time.Time // first representable instant
	Max   time.Time // last representable instant
}

func (e *TimeOverflowError) Error() string {
	return fmt.Sprintf("keygen: time %s is outside the layout's range %s .. %s",
		e.Now.UTC().Format(time.RFC3339), e.Epoch.UTC().Format(time.RFC3339), e.Max.UTC().Format(time.RFC3339))
}

// Is reports whether target is ErrTimeOverflow.
func (e *TimeOverflowError) Is(target error) bool { return target == ErrTimeOverflow }
