package keygen

import (
	"fmt"
	"maps"
	"strings"
	"time"
)

// Layout is the bit layout of a Snowflake-family ID. From the most
// significant bit down:
//
//	sign(1, always 0) | time | datacenter | backup | worker | clock-back | sequence
//
// Time counts Units since Epoch. Datacenter and worker together identify
// the issuing generator. Backup is SNOWFLAKE_JS's one-bit backup worker
// flag. Clock-back is the flag SNOWFLAKE bumps (clock-back-bits) on every backwards
// clock step. Fields of width 0 are absent.
type Layout struct {
	Epoch          time.Time
	Unit           time.Duration // time.Millisecond, time.Second, or whole milliseconds up to a second
	TimeBits       int
	DatacenterBits int
	BackupBits     int // 0 or 1
	WorkerBits     int
	ClockBackBits  int // 0..3
	SequenceBits   int
}

// Parts are the fields of one ID.
type Parts struct {
	ID         int64
	Time       time.Time // Epoch + Timestamp*Unit
	Timestamp  int64     // raw time field, in Units since Epoch
	Datacenter int64
	Worker     int64
	Backup     bool // issued by SNOWFLAKE_JS's backup worker (worker + 16)
	ClockBack  int64
	Sequence   int64
}

// Decomposer splits an ID into its fields. Every Snowflake-family generator
// and Layout implement it.
type Decomposer interface {
	Decompose(id int64) (Parts, error)
}

func mask(bits int) int64 { return int64(1)<<bits - 1 }

func (l Layout) clockBackShift() int  { return l.SequenceBits }
func (l Layout) workerShift() int     { return l.clockBackShift() + l.ClockBackBits }
func (l Layout) backupShift() int     { return l.workerShift() + l.WorkerBits }
func (l Layout) datacenterShift() int { return l.backupShift() + l.BackupBits }
func (l Layout) timeShift() int       { return l.datacenterShift() + l.DatacenterBits }

// Bits is the number of bits an ID uses, without the sign bit.
func (l Layout) Bits() int {
	return l.TimeBits + l.DatacenterBits + l.BackupBits + l.WorkerBits + l.ClockBackBits + l.SequenceBits
}

// MaxTimestamp is the largest value of the time field.
func (l Layout) MaxTimestamp() int64 { return mask(l.TimeBits) }

// RunsOut is the first instant the time field cannot represent. Layouts
// reaching beyond year 9999 report 9999-12-31.
func (l Layout) RunsOut() time.Time {
	if l.TimeBits >= 62 {
		return farFuture
	}
	if t, ok := l.timeAt(int64(1) << l.TimeBits); ok {
		return t
	}
	return farFuture
}

var farFuture = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// IDsPerSecond is the most IDs one generator can issue per second of
// clock time: the sequence space times the time units per second.
func (l Layout) IDsPerSecond() float64 {
	return float64(int64(1)<<l.SequenceBits) * float64(time.Second) / float64(l.Unit)
}

// Workers is how many distinct generators (datacenter × worker ids) the
// layout holds.
func (l Layout) Workers() int64 { return int64(1) << (l.DatacenterBits + l.WorkerBits) }

// String is a compact description, e.g. "41/10/12 ms".
func (l Layout) String() string {
	var f []string
	add := func(name string, bits int) {
		if bits > 0 {
			f = append(f, fmt.Sprintf("%s %d", name, bits))
		}
	}
	add("time", l.TimeBits)
	add("datacenter", l.DatacenterBits)
	add("backup", l.BackupBits)
	add("worker", l.WorkerBits)
	add("clock-back", l.ClockBackBits)
	add("sequence", l.SequenceBits)
	return fmt.Sprintf("[%s; unit %v]", strings.Join(f, " | "), l.Unit)
}

// Diagram draws the layout as a bit diagram, one row of field names over
// one row of widths, most significant bit first.
func (l Layout) Diagram() string {
	type field struct {
		name string
		bits int
	}
	fields := []field{{"sign", 1}, {"time (" + unitName(l.Unit) + ")", l.TimeBits}, {"datacenter", l.DatacenterBits},
		{"backup", l.BackupBits}, {"worker", l.WorkerBits}, {"clock-back", l.ClockBackBits}, {"sequence", l.SequenceBits}}
	if unused := 63 - l.Bits(); unused > 0 {
		fields[0] = field{"zero", 1 + unused}
	}
	var top, bot strings.Builder
	top.WriteByte('|')
	bot.WriteByte('|')
	for _, f := range fields {
		if f.bits == 0 {
			continue
		}
		w := max(len(f.name), 4) + 2
		fmt.Fprintf(&top, "%-*s|", w, " "+f.name)
		fmt.Fprintf(&bot, "%-*s|", w, fmt.Sprintf(" %d", f.bits))
	}
	return top.String() + "\n" + bot.String()
}

func unitName(d time.Duration) string {
	switch d {
	case time.Millisecond:
		return "ms"
	case time.Second:
		return "s"
	}
	return d.String()
}

// minLayoutLife is how long a layout must last from now to be accepted.
const minLayoutLife = 10 * 365 * 24 * time.Hour

// Validate checks the layout's shape: field widths in range, at most 63
// bits, a unit of whole milliseconds up to a second, and an epoch that is a
// whole millisecond after 1970. It does not check how long the layout lasts:
// an expired layout can still decode its old IDs.
func (l Layout) Validate() error {
	bad := func(reason string) error { return &LayoutError{Layout: l, Reason: reason} }
	switch {
	case l.TimeBits < 1 || l.TimeBits > 62:
		return bad("time bits must be 1..62")
	case l.SequenceBits < 1 || l.SequenceBits > 62:
		return bad("sequence bits must be 1..62")
	case l.WorkerBits < 0 || l.DatacenterBits < 0:
		return bad("worker and datacenter bits must not be negative")
	case l.BackupBits < 0 || l.BackupBits > 1:
		return bad("backup bits must be 0 or 1")
	case l.ClockBackBits < 0 || l.ClockBackBits > 3:
		return bad("clock-back bits must be 0..3")
	case l.Bits() > 63:
		return bad(fmt.Sprintf("uses %d bits; at most 63 fit beside the sign bit", l.Bits()))
	case l.Unit < time.Millisecond || l.Unit > time.Second || l.Unit%time.Millisecond != 0:
		return bad("unit must be whole milliseconds, 1ms..1s")
	case l.Epoch.Before(time.Unix(0, 0)) || l.Epoch.After(farFuture):
		return bad("epoch must lie between 1970 and 9999")
	case l.Epoch.Nanosecond()%int(time.Millisecond) != 0:
		return bad("epoch must be a whole millisecond")
	}
	return nil
}

// validate is Validate plus the checks against now that a generator needs:
// the epoch has passed and the layout lasts at least ten more years.
func (l Layout) validate(now time.Time) error {
	if err := l.Validate(); err != nil {
		return err
	}
	if l.Epoch.After(now) {
		return &LayoutError{Layout: l, Reason: fmt.Sprintf("epoch %s is in the future", l.Epoch.Format(time.RFC3339))}
	}
	runsOut := l.RunsOut()
	if !runsOut.After(now) {
		return &LayoutError{Layout: l, RunsOut: runsOut, Reason: "it has already run out; widen the time field or move the epoch"}
	}
	if runsOut.Sub(now) < minLayoutLife {
		return &LayoutError{Layout: l, RunsOut: runsOut, Reason: "less than 10 years from now; widen the time field or move the epoch"}
	}
	return nil
}

// LayoutFor returns the layout a built-in Snowflake-family type (SNOWFLAKE,
// SNOWFLAKE_JS, UID, CACHED_UID, LEAF_SNOWFLAKE) would use with props, for
// decoding IDs: worker ids are not required (they are read from the IDs),
// and an expired layout is accepted so that its old IDs can still be
// decoded. Other keys are checked as New checks them.
func LayoutFor(typ string, props Props) (Layout, error) {
	var (
		c   snowflakeConfig
		err error
	)
	// A worker id taken from a source (auto, env:NAME, hostname) does not
	// change the layout.
	var stripped Props
	for k, v := range props {
		if CanonicalPropKey(k) != "worker-id" {
			continue
		}
		if v = strings.ToLower(strings.TrimSpace(v)); v == "auto" || v == "hostname" || strings.HasPrefix(v, "env:") {
			if stripped == nil {
				stripped = maps.Clone(props)
			}
			delete(stripped, k)
		}
	}
	if stripped != nil {
		props = stripped
	}
	switch name := strings.ToUpper(strings.TrimSpace(typ)); name {
	case "SNOWFLAKE":
		c, err = parseSnowflake(props, false)
	case "UID":
		c, err = parseUID(props, false)
	case "LEAF_SNOWFLAKE":
		c, err = parseLeafSnowflake(props, false)
	case "CACHED_UID":
		// UID's layout; the ring's own props do not change it.
		layoutProps := Props{}
		for k, v := range props {
			switch CanonicalPropKey(k) {
			case "boost-power", "padding-factor", "schedule-interval", "rejection-policy":
			default:
				layoutProps[k] = v
			}
		}
		c, err = parseUID(layoutProps, false)
	case "SNOWFLAKE_JS":
		_, _, err = parseJS(props, false)
		c.layout = JSLayout
	default:
		registry.RLock()
		_, known := registry.m[name]
		registry.RUnlock()
		if !known {
			return Layout{}, fmt.Errorf("%w: %q (registered: %s)", ErrUnknownType, typ, strings.Join(Types(), ", "))
		}
		return Layout{}, fmt.Errorf("%w: %q (SNOWFLAKE, SNOWFLAKE_JS, UID, CACHED_UID and LEAF_SNOWFLAKE have one)", ErrNoLayout, typ)
	}
	if err != nil {
		return Layout{}, err
	}
	return c.layout, c.layout.Validate()
}

func (l Layout) unitMillis() int64 { return int64(l.Unit / time.Millisecond) }

// timeAt is the instant of time-field value ts, in UTC.
func (l Layout) timeAt(ts int64) (time.Time, bool) {
	ms, u := l.Epoch.UnixMilli(), l.unitMillis()
	if u <= 0 || ts > (farFuture.UnixMilli()-ms)/u {
		return time.Time{}, false
	}
	return time.UnixMilli(ms + ts*u).UTC(), true
}

// Decompose splits id into its fields.
func (l Layout) Decompose(id int64) (Parts, error) {
	if id < 0 {
		return Parts{}, fmt.Errorf("%w: %d is negative", ErrInvalidID, id)
	}
	if l.Bits() < 63 && id>>l.Bits() != 0 {
		return Parts{}, fmt.Errorf("%w: %d has bits above the layout's %d", ErrInvalidID, id, l.Bits())
	}
	ts := id >> l.timeShift()
	t, ok := l.timeAt(ts)
	if !ok {
		return Parts{}, fmt.Errorf("%w: %d has a time beyond year 9999", ErrInvalidID, id)
	}
	return Parts{
		ID:         id,
		Timestamp:  ts,
		Time:       t,
		Datacenter: id >> l.datacenterShift() & mask(l.DatacenterBits),
		Backup:     id>>l.backupShift()&mask(l.BackupBits) != 0,
		Worker:     id >> l.workerShift() & mask(l.WorkerBits),
		ClockBack:  id >> l.clockBackShift() & mask(l.ClockBackBits),
		Sequence:   id & mask(l.SequenceBits),
	}, nil
}

// Compose builds the ID of p. Timestamp is used when non-zero, otherwise
// Time (truncated to the unit). Every field must fit its width.
func (l Layout) Compose(p Parts) (int64, error) {
	ts := p.Timestamp
	if ts == 0 && !p.Time.IsZero() {
		if p.Time.Before(l.Epoch) {
			return 0, fmt.Errorf("%w: time %s precedes the epoch", ErrInvalidID, p.Time.Format(time.RFC3339))
		}
		ts = (p.Time.UnixMilli() - l.Epoch.UnixMilli()) / l.unitMillis()
	}
	var backup int64
	if p.Backup {
		backup = 1
	}
	for _, f := range []struct {
		name string
		v    int64
		bits int
	}{{"time", ts, l.TimeBits}, {"datacenter", p.Datacenter, l.DatacenterBits}, {"backup", backup, l.BackupBits},
		{"worker", p.Worker, l.WorkerBits}, {"clock-back", p.ClockBack, l.ClockBackBits}, {"sequence", p.Sequence, l.SequenceBits}} {
		if f.v < 0 || f.v > mask(f.bits) {
			return 0, fmt.Errorf("%w: %s %d does not fit %d bits", ErrInvalidID, f.name, f.v, f.bits)
		}
	}
	return ts<<l.timeShift() | p.Datacenter<<l.datacenterShift() | backup<<l.backupShift() |
		p.Worker<<l.workerShift() | p.ClockBack<<l.clockBackShift() | p.Sequence, nil
}
