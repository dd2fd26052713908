package bench

// Data sets of the merge benchmarks (merge_*_test.go): SQLite files, one
// data source per shard, and the same rows in one unsharded table. They
// are built once into os.TempDir()/shardkey-bench-<mergeDataVersion>/ and
// reused by later processes (go test -count 6, interleaved rounds), so a
// change to their shape must change mergeDataVersion.

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// mergeDataVersion names the data sets' shape.
const mergeDataVersion = "merge-v1"

// mergeSet is a sharded table of shards data sources (one physical table
// each, named like the logic table, rows routed by id MOD shards) and the
// same rows in one table.
type mergeSet struct {
	name   string // directory and logic table
	table  string
	shards int
	rows   int    // rows per shard
	ddl    string // CREATE TABLE ... (with %s for the table name)
	// cols are filled with exprs, where {id} stands for the row's id.
	cols, exprs string
	index       string // CREATE INDEX %s_... ON %s (...), or ""
}

// scatterSet: 64 shards of 100,000 rows. k and u are distinct
// pseudo-random orders of the rows (multiplications modulo primes above
// the row count), k indexed and u not.
var scatterSet = mergeSet{
	name: "scatter64", table: "t_big", shards: 64, rows: 100_000,
	ddl:   `CREATE TABLE %s (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, u INTEGER NOT NULL, v TEXT NOT NULL)`,
	cols:  "id, k, u, v",
	exprs: `{id}, ({id} * 2654435761) % 1000000007, ({id} * 2246822519) % 4294967311, 'row-' || {id}`,
	index: `CREATE INDEX %s_k ON %s (k)`,
}

// groupSet: 16 shards of 50,000 rows; g takes 10,000 values, each in every
// shard (5 rows per shard).
var groupSet = mergeSet{
	name: "group16", table: "t_grp", shards: 16, rows: 50_000,
	ddl:   `CREATE TABLE %s (id INTEGER PRIMARY KEY, g INTEGER NOT NULL, a INTEGER NOT NULL)`,
	cols:  "id, g, a",
	exprs: `{id}, ({id} / 16) % 10000, ({id} * 7919) % 1000`,
}

var mergeBuild sync.Mutex

// dir is the set's directory, built if no earlier run left it ready.
func (s mergeSet) dir(tb testing.TB) string {
	tb.Helper()
	root := filepath.Join(os.TempDir(), "shardkey-bench-"+mergeDataVersion)
	dir := filepath.Join(root, s.name)
	mergeBuild.Lock()
	defer mergeBuild.Unlock()
	if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
		return dir
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp, err := os.MkdirTemp(root, s.name+".building-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	tb.Logf("building %s (%d shards of %d rows and one table) in %s", s.name, s.shards, s.rows, dir)
	for i := range s.shards {
		if err := s.build(filepath.Join(tmp, shardFile(i)), i); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.build(filepath.Join(tmp, "one.db"), -1); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "ready"), []byte(mergeDataVersion+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func shardFile(i int) string { return fmt.Sprintf("shard_%02d.db", i) }

// build writes one file: shard i's rows, or all rows when i < 0, with
// journaling and syncing off and the rows generated inside SQLite in one
// statement of one transaction.
func (s mergeSet) build(path string, i int) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the pragmas hold per connection
	n, id := s.rows, fmt.Sprintf("(x * %d + %d)", s.shards, i)
	if i < 0 {
		n, id = s.rows*s.shards, "x"
	}
	stmts := []string{
		`PRAGMA journal_mode=OFF`, `PRAGMA synchronous=OFF`,
		fmt.Sprintf(s.ddl, s.table),
		`BEGIN`,
		fmt.Sprintf(`WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < %d) INSERT INTO %s (%s) SELECT %s FROM c`,
			n-1, s.table, s.cols, strings.ReplaceAll(s.exprs, "{id}", id)),
		`COMMIT`,
	}
	if s.index != "" {
		stmts = append(stmts, fmt.Sprintf(s.index, s.table, s.table))
	}
	for _, q := range append(stmts, `ANALYZE`) {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %s: %w", path, q, err)
		}
	}
	return nil
}

// sharded opens the set through sqlhook (scatter allowed).
func (s mergeSet) sharded(tb testing.TB) *sql.DB {
	tb.Helper()
	dir := s.dir(tb)
	var y strings.Builder
	y.WriteString("dataSources:\n")
	for i := range s.shards {
		fmt.Fprintf(&y, "  ds_%d: {driver: sqlite, dsn: %q}\n", i, filepath.Join(dir, shardFile(i)))
	}
	fmt.Fprintf(&y, `rules:
- !SHARDING
  tables:
    %s:
      actualDataNodes: ds_${0..%d}.%s
      databaseStrategy:
        standard: {shardingColumn: id, shardingAlgorithmName: mod}
  shardingAlgorithms:
    mod: {type: MOD, props: {sharding-count: %d}}
`, s.table, s.shards-1, s.table, s.shards)
	cfg, err := shardconf.Parse([]byte(y.String()))
	if err != nil {
		tb.Fatal(err)
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithScatter())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// one opens the unsharded table's file (or shard i's with i >= 0)
// through plain database/sql.
func (s mergeSet) one(tb testing.TB, i int) *sql.DB {
	tb.Helper()
	name := "one.db"
	if i >= 0 {
		name = shardFile(i)
	}
	db, err := sql.Open("sqlite", filepath.Join(s.dir(tb), name))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// readInts reads every row of q, whose columns are integers, into vals
// (reused) and returns the number of rows. It scans as an application
// would: one Scan per row into typed variables.
func readInts(db *sql.DB, vals []int64, q string, args ...any) (int, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// rowsText is every row of q printed, for comparing answers.
func rowsText(db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprint(vals...))
	}
	return out, rows.Err()
}

var mergeChecked sync.Map // query -> error (nil: same answer)

// errRefused marks a query sqlhook refuses at this commit.
var errRefused = errors.New("refused by sqlhook")

// sameAnswer checks, once per process and query, that q through sqlhook
// gives the one-table answer (in order when ordered), so that no
// benchmark times a wrong answer. A refusal is errRefused.
func sameAnswer(sharded, one *sql.DB, ordered bool, q string, args ...any) error {
	if err, ok := mergeChecked.Load(q); ok {
		return errOrNil(err)
	}
	err := compareAnswers(sharded, one, ordered, q, args...)
	mergeChecked.Store(q, err)
	return err
}

func errOrNil(v any) error {
	if v == nil {
		return nil
	}
	return v.(error)
}

func compareAnswers(sharded, one *sql.DB, ordered bool, q string, args ...any) error {
	want, err := rowsText(one, q, args...)
	if err != nil {
		return fmt.Errorf("one table: %w", err)
	}
	got, err := rowsText(sharded, q, args...)
	if errors.Is(err, sqlhook.ErrUnsupported) {
		return fmt.Errorf("%w: %v", errRefused, err)
	}
	if err != nil {
		return fmt.Errorf("sqlhook: %w", err)
	}
	if !ordered {
		slices.Sort(want)
		slices.Sort(got)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("sqlhook gives %d rows, the one table %d, or other rows (first %q vs %q)", len(got), len(want), first(got), first(want))
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// checkAnswer stops the benchmark on a wrong answer, and skips it (with
// the reason) when sqlhook refuses the query at this commit.
func checkAnswer(b *testing.B, sharded, one *sql.DB, ordered bool, q string, args ...any) {
	b.Helper()
	err := sameAnswer(sharded, one, ordered, q, args...)
	if errors.Is(err, errRefused) {
		b.Skipf("%s: %v", q, err)
	}
	if err != nil {
		b.Fatalf("%s: %v", q, err)
	}
}

// reportPerRow adds ns per row, n rows per operation.
func reportPerRow(b *testing.B, n int, unit string) {
	if b.N > 0 && n > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/"+unit)
	}
}
