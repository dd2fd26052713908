package difftest

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// readRules: t_read over two data sources by user_id MOD 2 and two tables
// in each by k MOD 2 (a column that is not the primary key).
const readRules = `
dataSources:
  ds_0: {driver: %[1]s, dsn: %[2]q}
  ds_1: {driver: %[1]s, dsn: %[3]q}
rules:
- !SHARDING
  tables:
    t_read:
      actualDataNodes: ds_${0..1}.t_read_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: two}}
      tableStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: two}}
  shardingAlgorithms:
    two: {type: MOD, props: {sharding-count: 2}}
`

// colKind is how the values of a column (or of an expression over it)
// compare.
type colKind uint8

const (
	kInt     colKind = iota + 1
	kDecimal         // exact numbers with a fraction
	kFloat
	kTextBin // the binary collation declared to shardkey
	kTextDef // the default (or a locale) collation: ordering must be refused
	kTime
	kBool
)

// readCol is a column of t_read.
type readCol struct {
	name     string
	kind     colKind
	nullable bool
}

var readCols = []readCol{
	{"id", kInt, false}, {"user_id", kInt, false}, {"k", kInt, false},
	{"big", kInt, true}, {"amount", kDecimal, true}, {"score", kFloat, true},
	{"name", kTextBin, true}, {"label", kTextDef, true}, {"qty", kInt, true},
	{"ts", kTime, true}, {"flag", kBool, true},
}

func readColNamed(name string) readCol {
	for _, c := range readCols {
		if c.name == name {
			return c
		}
	}
	return readCol{}
}

// readDDL is t_read's column list on a database: name binary (declared
// with WithBinaryCollation), label in a collation that orders otherwise
// (MariaDB's default utf8mb4_general_ci, ICU on PostgreSQL, NOCASE on
// SQLite).
func readDDL(db string) string {
	cols := map[string][3]string{ // postgres, mariadb, sqlite
		"id":      {"BIGINT NOT NULL PRIMARY KEY", "BIGINT NOT NULL PRIMARY KEY", "BIGINT NOT NULL PRIMARY KEY"},
		"user_id": {"BIGINT NOT NULL", "BIGINT NOT NULL", "BIGINT NOT NULL"},
		"k":       {"INT NOT NULL", "INT NOT NULL", "INT NOT NULL"},
		"big":     {"BIGINT", "BIGINT", "BIGINT"},
		"amount":  {"NUMERIC(12,3)", "DECIMAL(12,3)", "DECIMAL(12,3)"},
		"score":   {"DOUBLE PRECISION", "DOUBLE", "REAL"},
		"name":    {`VARCHAR(16) COLLATE "C"`, "VARCHAR(16) COLLATE utf8mb4_bin", "VARCHAR(16)"},
		"label":   {`VARCHAR(16) COLLATE "en-x-icu"`, "VARCHAR(16)", "VARCHAR(16) COLLATE NOCASE"},
		"qty":     {"INT", "INT", "INT"},
		"ts":      {"TIMESTAMP", "TIMESTAMP NULL", "TIMESTAMP"},
		"flag":    {"BOOLEAN", "BOOLEAN", "BOOLEAN"},
	}
	i := map[string]int{"postgres": 0, "mariadb": 1, "sqlite": 2}[db]
	var parts []string
	for _, c := range readCols {
		parts = append(parts, c.name+" "+cols[c.name][i])
	}
	return strings.Join(parts, ", ")
}

// readWorld is one database's read setup: the physical tables and the
// oracle hold the same rows.
type readWorld struct {
	b       backend
	ds      [2]*sql.DB
	oracle  *sql.DB
	rows    [][]any // the rows, in readCols order
	binHook *sql.DB // sqlhook with WithScatter and WithBinaryCollation
	defHook *sql.DB // sqlhook with WithScatter only
	txHook  *sql.DB // binHook's options and WithMultiSourceTx, for reads in a transaction
}

func (b backend) readConfig(t testing.TB) *shardconf.Config {
	t.Helper()
	cfg, err := shardconf.Parse(fmt.Appendf(nil, readRules, b.driver, b.dsn[0], b.dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newReadWorld creates t_read's physical tables and the oracle table on
// database db, fills them with nrows seeded rows, and opens sqlhook.
func newReadWorld(t testing.TB, db string, seed uint64, nrows int) *readWorld {
	t.Helper()
	b := openBackendNamed(t, db, "diffread_"+os.Getenv("SHARDKEY_DIFFREAD_NAME"))
	cfg := b.readConfig(t)
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &readWorld{b: b}
	open := func(dsn string) *sql.DB {
		d, err := sql.Open(b.driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		d.SetMaxOpenConns(2)
		t.Cleanup(func() { d.Close() })
		return d
	}
	w.ds[0], w.ds[1], w.oracle = open(b.dsn[0]), open(b.dsn[1]), open(b.oracle)
	targets, err := r.Targets("t_read")
	if err != nil {
		t.Fatal(err)
	}
	ddl := readDDL(db)
	for _, tg := range targets {
		w.mustExec(t, w.dsFor(tg), fmt.Sprintf("CREATE TABLE %s (%s)", tg.Table, ddl))
	}
	w.mustExec(t, w.oracle, fmt.Sprintf("CREATE TABLE t_read (%s)", ddl))
	amts := readAmts
	if db == "sqlite" {
		amts = readAmtsSQLite
	}
	w.rows = tableRows(seed, nrows, amts)
	w.load(t, r)
	hook := func(opts ...sqlhook.Option) *sql.DB {
		d, err := sqlhook.Open(cfg, append(opts, sqlhook.WithScatter())...)
		if err != nil {
			t.Fatal(err)
		}
		d.SetMaxOpenConns(4)
		t.Cleanup(func() { d.Close() })
		return d
	}
	w.binHook, w.defHook = hook(sqlhook.WithBinaryCollation()), hook()
	w.txHook = hook(sqlhook.WithBinaryCollation(), sqlhook.WithMultiSourceTx())
	return w
}

func (w *readWorld) dsFor(tg shardconf.Target) *sql.DB {
	if tg.DataSource == "ds_1" {
		return w.ds[1]
	}
	return w.ds[0]
}

func (w *readWorld) mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// load inserts every row into the physical table it routes to and into
// the oracle, in one transaction each.
func (w *readWorld) load(t testing.TB, r *shardconf.Router) {
	t.Helper()
	names := make([]string, len(readCols))
	for i, c := range readCols {
		names[i] = c.name
	}
	marks := make([]string, len(readCols))
	for i := range marks {
		marks[i] = "?"
		if w.b.dollar {
			marks[i] = "$" + strconv.Itoa(i+1)
		}
	}
	insert := func(table string) string {
		return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(names, ", "), strings.Join(marks, ", "))
	}
	txs := map[*sql.DB]*sql.Tx{}
	tx := func(db *sql.DB) *sql.Tx {
		if txs[db] == nil {
			x, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			txs[db] = x
		}
		return txs[db]
	}
	for _, row := range w.rows {
		tgs, err := r.Route("t_read", shardconf.Eq("user_id", row[1]), shardconf.Eq("k", row[2]))
		if err != nil || len(tgs) != 1 {
			t.Fatalf("routing %v: %v %v", row, tgs, err)
		}
		if _, err := tx(w.dsFor(tgs[0])).Exec(insert(tgs[0].Table), row...); err != nil {
			t.Fatalf("%v: %v", row, err)
		}
		if _, err := tx(w.oracle).Exec(insert("t_read"), row...); err != nil {
			t.Fatalf("oracle %v: %v", row, err)
		}
	}
	for _, x := range txs {
		if err := x.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// Value domains of t_read: small, so that values tie, with NULLs, case
// variants and trailing spaces, and numbers at their limits.
var (
	// negative and large sharding values route too (MOD of a negative)
	readUsers = []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -7, 1<<40 + 1}
	readBigs  = []any{int64(0), int64(-1), int64(42), int64(1<<53 + 1), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64 - 1), nil}
	readAmts  = []any{"0.000", "1.500", "1.5", "-2.250", "0.001", "999999999.999", "-999999999.999", "3.333", "10", nil, nil}
	// SQLite stores DECIMAL as a double and sums it in floating point,
	// where 0.001 + 999999999.999 - 999999999.999 depends on the order it
	// adds in; eighths add exactly in any order. None is integral: SQLite
	// would store 10 as an INTEGER, and its driver types a column by the
	// storage class of the row at hand, so GORM's map scan would type the
	// whole column by whichever row came first.
	readAmtsSQLite = []any{"0.500", "1.500", "1.5", "-2.250", "0.125", "999999999.875", "-999999999.875", "3.375", "10.250", nil, nil}
	readScores     = []any{0.0, 0.1, 0.2, -3.5, 1e10, 2.5, 1.0 / 3, math.Copysign(0, -1), nil, nil}
	readNames      = []any{"a", "A", "b", "B", "a ", "ab", "Ab", "", "z", "é", "b  ", nil, nil}
	readLabels     = []any{"x", "X", "y", "Y", "x ", "xy", "Bob", "bob", "BOB", "", nil, nil}
	readTimes      = []time.Time{
		time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 1, 12, 30, 0, 0, time.UTC),
		time.Date(2023, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2025, 6, 15, 8, 0, 0, 0, time.UTC),
	}
)

// tableRows is the seeded rows of t_read: ids 1..n in a shuffled order
// of insertion (so that no table is read in id order by chance).
func tableRows(seed uint64, n int, amts []any) [][]any {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([][]any, 0, n)
	for _, id := range rng.Perm(n) {
		var qty, ts, flag any
		if rng.IntN(4) > 0 {
			qty = int64(rng.IntN(12))
		}
		if rng.IntN(3) > 0 {
			ts = pick(rng, readTimes)
		}
		if rng.IntN(4) > 0 {
			flag = rng.IntN(2) == 0
		}
		big := pick(rng, readBigs)
		if rng.IntN(3) > 0 { // the limits now and then only, so that some sums fit
			big = pick(rng, readBigs[:3])
		}
		out = append(out, []any{int64(id + 1), pick(rng, readUsers), int64(rng.IntN(4)),
			big, pick(rng, amts), pick(rng, readScores), pick(rng, readNames), pick(rng, readLabels),
			qty, ts, flag})
	}
	return out
}
