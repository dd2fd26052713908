package keygen

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// Generator issues keys. NextKey returns int64 for the Snowflake family and
// SEGMENT, and string for UUID. Every generator is safe for concurrent use.
//
// A custom generator (see Register) needs only this interface. To fill
// integer key columns its NextKey returns a non-zero int64 (or ID) for
// every key: gormplugin and entmixin read it through AsIDGenerator, where a
// key of another type is an error wrapping ErrNotInt64 (a 0, ErrInvalidID)
// at the statement, never a stored value (sqlhook binds NextKey's key as it
// is). A generator that also implements IDGenerator is used directly, with
// NextIDs for batches.
type Generator interface {
	// Type is the generator's registered type name, upper case.
	Type() string
	// NextKey returns the next key.
	NextKey(ctx context.Context) (any, error)
}

// IDGenerator is a Generator whose keys are int64.
type IDGenerator interface {
	Generator
	// NextID returns the next ID; IDs from one generator strictly increase
	// (except after a clock-back flag bump, which is unique but lower).
	NextID(ctx context.Context) (int64, error)
	// NextIDs fills dst with increasing IDs, reserving sequence ranges in
	// bulk. On error, the IDs already written to dst are valid and unique;
	// the rest of dst is left as it was.
	NextIDs(ctx context.Context, dst []int64) error
}

// Options are what Option values set; custom Factory functions read them.
// They are exported for that reason alone (the other packages keep their
// settings unexported): build them with Option values, not by hand. The
// zero value is valid; New fills in what is unset.
type Options struct {
	// Clock is the time source; nil means the process's default
	// SystemClock, shared by all generators and logging to slog.Default().
	Clock Clock
	// Logger receives warnings (clock steps, backup worker take-overs);
	// nil discards them.
	Logger *slog.Logger
	// WorkerSource gives Snowflake-family generators their worker id;
	// nil means the worker-id prop.
	WorkerSource WorkerSource
	// DB is the database of database-backed generators (SEGMENT); set it
	// with WithDB.
	DB *sql.DB
	// SequenceScope holds the sequence state generators of the same ID
	// space share (see SequenceScope); nil means DefaultSequenceScope. Set
	// it with WithSequenceScope.
	SequenceScope *SequenceScope
	// Random draws LEAF_SNOWFLAKE's sequence starts (Leaf's random number
	// below 100 at each new millisecond): it returns a number in [0, n)
	// and must be safe for concurrent use. nil means math/rand/v2's
	// Int64N. Set it with WithRandom; tests make it deterministic.
	Random func(n int64) int64
}

// scope is the generator's SequenceScope.
func (o Options) scope() *SequenceScope { return o.SequenceScope.orDefault() }

// Option configures New and NewID.
//
// Options follow one convention in every shardkey package (keygen,
// shardconf, gormplugin, sqlhook): each is a With... function; they apply
// in order, a later one replacing an earlier one's value, except that a
// variadic option (shardconf.WithKeyGenOptions) appends; a nil argument
// means the default; an option never fails: a bad value is the
// constructor's error.
type Option func(*Options)

// WithClock sets the generator's clock (tests use a fake one).
func WithClock(c Clock) Option { return func(o *Options) { o.Clock = c } }

// WithLogger sets the logger for warnings such as clock steps.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// WithRandom sets the source of LEAF_SNOWFLAKE's sequence starts: f(n)
// returns a number in [0, n) and must be safe for concurrent use; nil
// means math/rand/v2. A number outside [0, n) fails that key with an
// error, never a key. Other generator types ignore it.
func WithRandom(f func(n int64) int64) Option { return func(o *Options) { o.Random = f } }

// defaultClock is the one SystemClock of generators built without
// WithClock: one clock adopts a wall-clock correction once for all of them.
var defaultClock = sync.OnceValue(func() *SystemClock { return NewSystemClock(nil) })

// Factory builds a generator of a registered type. The Options it receives
// have Clock, Logger and SequenceScope filled in.
type Factory func(props Props, opts Options) (Generator, error)

var registry = struct {
	sync.RWMutex
	m map[string]Factory
}{m: map[string]Factory{}}

func init() {
	for typ, f := range map[string]Factory{
		"CACHED_UID":     newCachedUIDGenerator,
		"LEAF_SNOWFLAKE": newLeafSnowflakeGenerator,
		"SEGMENT":        newSegmentGenerator,
		"SNOWFLAKE":      newSnowflakeGenerator,
		"SNOWFLAKE_JS":   newJSGenerator,
		"UID":            newUIDGenerator,
		"UUID":           newUUIDGenerator,
	} {
		if err := Register(typ, f); err != nil {
			panic(err) // unreachable: the built-in names are distinct
		}
	}
}

// Register adds a generator type. Names match case-insensitively; a name
// already taken gives ErrDuplicateType. The factory's generator may
// implement only Generator: see its doc for the keys integer columns need.
func Register(typ string, f Factory) error {
	name := strings.ToUpper(strings.TrimSpace(typ))
	if name == "" || f == nil {
		return fmt.Errorf("keygen: Register needs a type name and a factory")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.m[name]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicateType, name)
	}
	registry.m[name] = f
	return nil
}

// Types lists the registered type names, sorted.
func Types() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.m))
	for t := range registry.m {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// New builds a generator of the named type (case-insensitive) from
// ShardingSphere-style props.
func New(typ string, props Props, opts ...Option) (Generator, error) {
	name := strings.ToUpper(strings.TrimSpace(typ))
	registry.RLock()
	f, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q (registered: %s)", ErrUnknownType, typ, strings.Join(Types(), ", "))
	}
	o := Options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = defaultClock()
	}
	o.SequenceScope = o.scope()
	g, err := f(props, o)
	if err == nil && g == nil {
		// A custom factory's slip; its generator would panic at the first key.
		return nil, fmt.Errorf("keygen: the %s factory returned no generator and no error", name)
	}
	return g, err
}

// NewID is New for generators with int64 keys, through AsIDGenerator:
// UUID gives ErrNotInt64.
func NewID(typ string, props Props, opts ...Option) (IDGenerator, error) {
	g, err := New(typ, props, opts...)
	if err != nil {
		return nil, err
	}
	idg, ok := AsIDGenerator(g)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotInt64, g.Type())
	}
	return idg, nil
}

// AsIDGenerator returns g as an IDGenerator, the form in which integrations
// fill integer key columns. An IDGenerator is returned as it is. Any other
// generator but UUID (a custom type that implements only Generator) is
// wrapped: NextID calls NextKey and returns its key when it is an int64 or
// an ID, and for a key of any other type drops it and returns an error
// wrapping ErrNotInt64, and for a key of 0 (no key, to GORM and ent) one
// wrapping ErrInvalidID; NextIDs calls NextID for each slot. ok is false for
// UUID, whose keys are strings, and for nil.
func AsIDGenerator(g Generator) (ids IDGenerator, ok bool) {
	switch g := g.(type) {
	case nil, *uuidGenerator:
		return nil, false
	case IDGenerator:
		return g, true
	}
	return keyIDs{g}, true
}

// keyIDs is AsIDGenerator's wrapper of a generator without NextID.
type keyIDs struct{ Generator }

func (k keyIDs) NextID(ctx context.Context) (int64, error) {
	key, err := k.NextKey(ctx)
	if err != nil {
		return 0, err
	}
	var id int64
	switch v := key.(type) {
	case int64:
		id = v
	case ID:
		id = int64(v)
	default:
		return 0, fmt.Errorf("%w: the %s generator's NextKey returned a %T", ErrNotInt64, k.Type(), key)
	}
	if id == 0 {
		// GORM and ent read a zero key as none: Save would insert again.
		return 0, fmt.Errorf("%w: the %s generator's NextKey returned 0, which integrations read as no key", ErrInvalidID, k.Type())
	}
	return id, nil
}

// NextIDs fills dst in order: on error, the IDs before the failed one are
// written and valid, as IDGenerator requires.
func (k keyIDs) NextIDs(ctx context.Context, dst []int64) error {
	for i := range dst {
		id, err := k.NextID(ctx)
		if err != nil {
			return err
		}
		dst[i] = id
	}
	return nil
}
