// Package keygen issues distributed primary keys: ShardingSphere-style key
// generators built by type name and props, the Snowflake variants of the
// field, and the ID type that carries them safely to JavaScript.
//
// # Building a generator
//
//	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{
//		"worker-id": "7",
//		"max-tolerate-time-difference-milliseconds": "10",
//	})
//	id, err := g.NextID(ctx)
//
// Type names match case-insensitively; Types lists them and Register adds
// custom ones. Props accept ShardingSphere 5.x kebab keys (worker-id), 4.x
// dotted keys (worker.id) and Baidu's camelCase keys (workerId). An unknown
// key, a key given twice, a missing worker-id or a value out of range is a
// *PropError (errors.Is(err, ErrInvalidProps)): a worker id silently
// defaulted to 0 is the classic cause of duplicate keys, so there is none.
//
// # Types
//
//   - SNOWFLAKE: ShardingSphere's SnowflakeKeyGenerateAlgorithm, bit for bit
//     (sign 1 | time 41 ms | worker 10 | sequence 12), with custom layouts,
//     a configurable epoch, ShardingSphere's sequence vibration and
//     optional clock-back flag bits (bumped on a backwards clock step, so
//     keys stay unique without waiting the step out).
//   - SNOWFLAKE_JS: a 53-bit JavaScript-safe layout with a backup
//     worker id that takes over on clock steps and busy seconds.
//   - UID: Baidu UidGenerator's DefaultUidGenerator (seconds-based).
//   - LEAF_SNOWFLAKE: Meituan Leaf's SnowflakeIDGenImpl, for services
//     joining a Leaf fleet (sign 1 | time 41 ms | worker 10 | sequence 12
//     from LeafEpoch, Leaf's twepoch 1288834974657): each new millisecond,
//     also after a used-up one, starts at a random sequence below 100. It
//     shares its state with a SNOWFLAKE of the same layout and worker id.
//   - UUID: string keys, version 4 or 7.
//
// # Custom generators
//
// Register adds a type, usable wherever a built-in one is (a rule file's
// keyGenerators, New, NewID). Its generator needs only the Generator
// interface. To fill integer key columns its NextKey returns a non-zero
// int64 (or ID) for every key: gormplugin and entmixin read it through
// AsIDGenerator, where a key of another type fails the statement with
// ErrNotInt64, and a 0 (no key, to GORM and ent) with ErrInvalidID, and is
// never stored; sqlhook binds the key as NextKey
// returns it and routes by it. A generator with string keys fills string
// columns. Implementing IDGenerator as well is optional: its NextIDs then
// reserves a batch's keys in one call.
//
// # Clocks
//
// Generators read time through a Clock. The default, SystemClock, never
// runs backwards while the process lives (it is anchored on Go's monotonic
// clock) and adopts forward corrections of the wall clock. Every wait goes
// through Clock.Sleep, so tests with keygentest.Clock never block. A custom
// clock may step backwards: SNOWFLAKE waits out steps shorter than
// max-tolerate-time-difference-milliseconds and at or beyond it returns a
// *ClockBackwardsError, as ShardingSphere does (or bumps its clock-back
// flag when the layout has clock-back bits); LEAF_SNOWFLAKE waits out a
// step of at most 5 ms for twice its length and refuses a longer one, or a
// clock still behind after the wait, as Leaf does; UID refuses any step, as
// Baidu does.
//
// # Worker ids
//
// The worker-id prop is a number, "env:NAME" (EnvWorker), "hostname" (a
// StatefulSet ordinal, HostnameOrdinal) or "auto" with WithWorkerSource,
// whose source may lease ids from a database (package keygen/workerlease).
// A generator checks its lease on every key and returns ErrLeaseLost when
// the lease may have expired; it never issues a key at or before the time
// its worker id was last used (Lease.LastUsed), waiting within the clock
// tolerance and refusing to start beyond it. Generators with a source
// implement io.Closer, which releases the id, and all Snowflake-family
// generators report Stats.
//
// # Shared state
//
// Generators of one ID space (layout, datacenter and worker id, clock) in
// one process share their sequence state, so a generator rebuilt with the
// same worker id continues after its predecessor instead of repeating its
// IDs. A SequenceScope owns that state: by default the process's
// (DefaultSequenceScope); WithSequenceScope gives a generator another, for
// tests and for processes that keep such generators apart by other means.
// SequenceScope's doc says what is shared and when it is released.
//
// # Layouts
//
// Every Snowflake-family generator has a Layout, implements Decomposer and
// has a Compose method. Layouts are validated at construction: at most 63
// bits, every field in range, and a time field that lasts at least ten more
// years. Baidu's default layout (28-bit seconds from 2016-05-20) ran out on
// 2024-11-20 and produced negative IDs in production; here it is refused
// with that date, and a time field that does run out gives ErrTimeOverflow,
// never a negative ID.
//
// # Keys in JSON
//
// ID is an int64 whose JSON form is a quoted decimal string, because
// JavaScript numbers lose precision above 2^53. Use it as the type of a
// struct's key field, or use SNOWFLAKE_JS, whose IDs stay below 2^53.
package keygen
