// Package merge is shardkey's one merge engine: it combines the rows a
// query returned from several shards into the rows the database would
// have returned over one table holding all of them, or fails with an
// error; it never returns a plausible wrong answer.
//
// A caller (sqlhook, gormplugin) runs the query's per-shard form on every
// shard and hands the shards' driver.Rows to New with a Plan: the visible
// columns, then hidden columns it added (sort keys, AVG's SUM and COUNT,
// the values of distinct aggregates, HAVING operands); ORDER BY keys with
// direction and NULL placement; OFFSET and LIMIT; GROUP BY columns,
// aggregates and HAVING; DISTINCT. New returns a driver.Rows whose column
// names and types are shard 0's visible ones.
//
// # What it merges
//
//   - Without grouping or DISTINCT: with ORDER BY, a k-way merge of the
//     shards' sorted rows through a binary heap (one heap step per row);
//     without, the shards' rows one shard after another. OFFSET rows are
//     skipped, and reading stops as soon as LIMIT rows went out. Pushing
//     "LIMIT offset+limit" down to each shard is the caller's. A shard
//     whose rows come out of the plan's order (its collation, NULL
//     placement or direction is not what the plan says) fails the merge
//     with ErrOrder as soon as it shows, rather than interleave wrongly.
//   - Grouped (aggregates, GROUP BY): hash aggregation of every shard's
//     rows; then HAVING, evaluated on the merged groups with three-valued
//     logic (on SQLite after its comparison affinity, from the columns'
//     declared types: k > '5' on an INTEGER k compares numbers; on
//     PostgreSQL a float argument compared with a real is a real); hidden
//     columns dropped; DISTINCT; ORDER BY; OFFSET; LIMIT. An
//     aggregate query without GROUP BY returns exactly one row, even when
//     no shard returned one. Without ORDER BY on MySQL/MariaDB, groups come
//     in ascending order of the GROUP BY columns, as MariaDB returns them.
//     Non-aggregate columns that are not grouped take the group's first
//     row's value.
//   - DISTINCT without grouping: a set of the visible rows seen, first
//     occurrence kept; it streams (over the ordered merge too).
//   - Aggregates: COUNT (sum of counts, overflow is an error), SUM (exact:
//     int64, big integers and decimal text added as scaled big integers,
//     returned in the Go type the driver used), MIN and MAX, AVG (the sum
//     and count of hidden columns divided as the dialect divides: see
//     below), COUNT(DISTINCT ...), SUM(DISTINCT) and AVG(DISTINCT) from
//     the distinct values the shards return.
//   - Aggregates inside expressions (Plan.Computed): +, -, *, /, unary -
//     and COALESCE over merged aggregates and constants, with the
//     dialect's typing and range: PostgreSQL's integer types fail beyond
//     their range and divide truncating, its numerics divide at
//     select_div_scale, its reals round to real at every step (real with
//     real; with anything else it is double precision); MySQL's / gives a
//     DECIMAL at the column's scale and is allowed only as the outermost
//     operation (inside an expression it
//     keeps digits no shard returns), and its +, - and * with an UNSIGNED
//     operand fail below zero, and arithmetic on a DECIMAL AVG is refused
//     (MariaDB computes it from the average with 9 digits past the AVG's
//     scale: AVG(x) * 3 is 4.0000 where 1.3333 * 3 is 3.9999); SQLite's
//     integers divide truncating and go on in floating point when they
//     overflow. Division by zero
//     fails on PostgreSQL (ErrDivisionByZero) and is NULL elsewhere. A
//     result whose type differs from the one the database reports for the
//     column is refused.
//
// # Values
//
// How values compare comes from each shard column's database type name
// (driver.RowsColumnTypeDatabaseTypeName) and the Go type of the value:
// integers, unsigned integers, floats and decimal text compare exactly
// (NaN above every number and equal to itself, -0 equal to 0, "1.0" equal
// to "1.00"); times by instant; MySQL's TIME as a signed duration;
// PostgreSQL's interval by its span (months as 30 days, days as 24 hours,
// read from the default IntervalStyle's text; SUM and AVG of intervals are
// refused); false before true; binary strings, uuid and PostgreSQL bit
// strings bytewise.
// Text is compared only as the plan's Text says (TextBinary,
// TextPadSpace, SQLite's TextNoCase and TextRTrim, TextEqualOnly for
// equality only); otherwise the query fails with ErrCollation. Text of
// any other type (PostgreSQL money, json, enum, inet, arrays;
// MySQL JSON, ENUM, SET) fails with ErrUnsupportedType wherever it would
// have to be ordered, grouped or compared. Where the column types alone
// settle it, New refuses before any row is read. On SQLite values compare
// by storage class as SQLite does: NULL, then numbers, then text, then
// blobs. SQLite keeps times as text and compares that text; the driver
// parses it into a time.Time, which has lost it (one instant is stored as
// "2024-01-01 10:00:00", "...+00:00", "...Z" or with a "T", all different
// to SQLite), so a time.Time from SQLite is never ordered, grouped or
// compared (ErrUnsupportedType): read the column as text to merge it.
//
// AVG: PostgreSQL's avg of integers and numeric is numeric: the sum
// divided by the count at the scale PostgreSQL's numeric division picks
// (at least 16 significant digits, no less than the sum's scale, from the
// weights of base-10000 digits), rounded half away from zero; of floats,
// float8. MySQL's and MariaDB's AVG is DECIMAL at the scale the AVG column
// reports (the argument's scale plus div_precision_increment), rounded
// half away from zero, or DOUBLE for floating-point arguments. SQLite's is
// a float64 division of the (exact, when integer) sum. A sum of floats is
// added in float64 in shard order, so it may differ from the database's
// in the last bits; one that leaves float64's range from finite values
// fails with ErrOverflow on PostgreSQL (which fails it too) and MySQL
// (where MariaDB returns 0), as does a computed float out of range
// (and, on PostgreSQL, a product or quotient underflowing to 0).
//
// # Memory
//
// The streaming cases hold one row per shard and copy none: a shard is
// read again only when the caller asks for the row after its row, so the
// driver's buffers stay valid as long as database/sql needs them. Memory
// grows with the data only where SQL needs every row before the first
// answer: grouping holds one row and the aggregate states per group;
// DISTINCT holds a key per distinct row; COUNT/SUM/AVG(DISTINCT) hold
// each group's distinct values. Groups, distinct rows and distinct values
// together are bounded by Plan.MaxGroups (DefaultMaxGroups when 0);
// exceeding it fails with ErrTooManyGroups. The grouped result is then
// sorted in memory.
//
// # Limits
//
// Where SQL leaves a choice to the database the merge makes its own:
// rows equal on every ORDER BY key come in shard order; of values equal
// but written differently (numeric 1.0 and 1.00, 'b' and 'b ' under PAD
// SPACE, PostgreSQL intervals of one span) a group or DISTINCT shows the
// first one read, as do MIN and MAX but on PostgreSQL, whose own keep the
// last one read, and SUM(DISTINCT)/AVG(DISTINCT) of PostgreSQL numerics
// carry that one's scale. The engine adds the per-shard results it is given: a per-shard
// SUM the server already rounded (MariaDB's SUM(x / 3) keeps hidden
// digits a shard's result has lost; PostgreSQL's sum(real) for
// avg(real), which New refuses) cannot be made exact here, so the
// planner must not push it down.
//
// Where the database's own answer depends on the order it reads rows in,
// or is itself out of range, the merge gives the exact one: a float sum
// (any order of adding rounds differently); MariaDB's DECIMAL sum whose
// running total passes 65 digits (MariaDB then returns a wrong value);
// PostgreSQL's avg(float8), which fails when its sum of squares
// overflows although the average does not. A MySQL TIMESTAMP read in a
// session time zone with daylight saving shows two instants of the
// repeated hour as one text, which the merge cannot tell apart (MariaDB
// orders them by instant): read such columns with time_zone '+00:00'.
// Likewise a DATETIME parsed in a driver location with daylight saving
// (go-sql-driver's loc): a wall clock in the spring gap becomes the hour
// after it, equal to that hour's own values, which MariaDB keeps apart.
//
// # Errors
//
// ErrCollation, ErrUnsupportedType, ErrOrder, ErrTooManyGroups,
// ErrOverflow and ErrDivisionByZero are sentinels, wrapped in a *ColumnError naming the
// column where there is one; callers wrap them with their own refusal
// error (ErrOverflow and ErrDivisionByZero are where the database fails
// the query too). ErrPlan reports a
// plan that does not fit the rows. A shard's own error comes wrapped in a
// *ShardError. After an error every Next returns it again.
package merge
