package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// rules: t_order and t_item over two data sources by user_id MOD 2, three
// tables of t_order by order_id MOD 3 and two of t_item by item_id MOD 2,
// both keys generated; t_dict broadcast; t_hint routed by hints alone
// (HINT_INLINE: data source tenant % 2, table tenant % 3, as a
// ShardingSphere user writes it); t_algo by k through two Go algorithms
// (see algo_test.go), one named by type, one as CLASS_BASED.
const rules = `
dataSources:
  ds_0: {driver: %[1]s, dsn: %[2]q}
  ds_1: {driver: %[1]s, dsn: %[3]q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..2}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db_mod}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: mod3}}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snow}
    t_item:
      actualDataNodes: ds_${0..1}.t_item_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db_mod}}
      tableStrategy: {standard: {shardingColumn: item_id, shardingAlgorithmName: db_mod}}
      keyGenerateStrategy: {column: item_id, keyGeneratorName: snow}
    t_hint:
      actualDataNodes: ds_${0..1}.t_hint_${0..2}
      databaseStrategy: {hint: {shardingAlgorithmName: hint_db}}
      tableStrategy: {hint: {shardingAlgorithmName: hint_tbl}}
    t_algo:
      actualDataNodes: ds_${0..1}.t_algo_${0..1}
      databaseStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: algo_db}}
      tableStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: algo_tbl}}
  broadcastTables: [t_dict]
  shardingAlgorithms:
    db_mod: {type: MOD, props: {sharding-count: 2}}
    mod3: {type: MOD, props: {sharding-count: 3}}
    hint_db: {type: HINT_INLINE, props: {algorithm-expression: 'ds_${value %% 2}'}}
    hint_tbl: {type: HINT_INLINE, props: {algorithm-expression: 't_hint_$->{value %% 3}'}}
    algo_db: {type: ` + algoSplitType + `, props: {split: 100}}
    algo_tbl:
      type: CLASS_BASED
      props: {strategy: STANDARD, algorithmClassName: ` + algoDecadeClass + `}
  keyGenerators:
    snow: {type: SNOWFLAKE, props: {worker-id: 9, max-vibration-offset: 5}}
`

// tableSpec is one logic table: its columns (the primary key first) and
// the columns its rules route by.
type tableSpec struct {
	name      string
	cols      []string
	shardCols []string // empty for the broadcast and the hint table
	hint      string   // the column whose value is the hint a row is routed by
	ddl       string   // column definitions
}

var tables = []tableSpec{
	{name: "t_order", cols: []string{"order_id", "user_id", "status", "amount", "note"},
		shardCols: []string{"user_id", "order_id"},
		ddl:       "order_id BIGINT NOT NULL PRIMARY KEY, user_id BIGINT, status VARCHAR(32), amount BIGINT, note VARCHAR(64)"},
	{name: "t_item", cols: []string{"item_id", "order_id", "user_id", "qty"},
		shardCols: []string{"user_id", "item_id"},
		ddl:       "item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT, user_id BIGINT, qty BIGINT"},
	{name: "t_dict", cols: []string{"k", "v", "n"},
		ddl: "k VARCHAR(16) NOT NULL PRIMARY KEY, v VARCHAR(32), n BIGINT"},
	// tenant is no sharding column: a row belongs where the hint of its
	// stored tenant routes (WithHint(ctx, "t_hint", Hint{tenant, tenant}))
	{name: "t_hint", cols: []string{"id", "tenant", "v", "n"}, hint: "tenant",
		ddl: "id BIGINT NOT NULL PRIMARY KEY, tenant BIGINT, v VARCHAR(32), n BIGINT"},
	{name: "t_algo", cols: []string{"k", "grp", "v"}, shardCols: []string{"k"},
		ddl: "k BIGINT NOT NULL PRIMARY KEY, grp BIGINT, v VARCHAR(32)"},
}

// broadcast reports whether ts is the broadcast table.
func (ts tableSpec) broadcast() bool { return len(ts.shardCols) == 0 && ts.hint == "" }

// backend is one database server (or SQLite) with the two data sources
// and the oracle of one run.
type backend struct {
	name   string // postgres, mariadb, sqlite
	driver string // pgx, mysql, sqlite
	dsn    [2]string
	oracle string
	dollar bool // $n placeholders
	mysql  bool
	dbName [2]string // MySQL: the databases of ds_0 and ds_1
}

func openBackend(t testing.TB, name, client string) backend {
	t.Helper()
	return openBackendNamed(t, name, "dw_"+*flagName+client)
}

// openBackendNamed opens the data sources and the oracle of database
// name, in test databases whose names start with prefix.
func openBackendNamed(t testing.TB, name, prefix string) backend {
	t.Helper()
	n := func(part string) string { return prefix + "_" + part }
	switch name {
	case "postgres":
		// a test database need not survive a crash: commits do not wait for the disk
		fast := func(dsn string) string { return dsn + "&synchronous_commit=off" }
		return backend{name: name, driver: "pgx", dollar: true,
			dsn:    [2]string{fast(dbtest.Postgres(t, n("pg_ds0"))), fast(dbtest.Postgres(t, n("pg_ds1")))},
			oracle: fast(dbtest.Postgres(t, n("pg_oracle")))}
	case "mariadb":
		b := backend{name: name, driver: "mysql", mysql: true,
			dsn:    [2]string{dbtest.MySQL(t, n("my_ds0")), dbtest.MySQL(t, n("my_ds1"))},
			oracle: dbtest.MySQL(t, n("my_oracle"))}
		for i, dsn := range b.dsn {
			cfg, err := mysql.ParseDSN(dsn)
			if err != nil {
				t.Fatal(err)
			}
			b.dbName[i] = cfg.DBName
		}
		return b
	case "sqlite":
		dir := t.TempDir()
		f := func(s string) string {
			// _time_format=sqlite: a bound time.Time is written as SQLite's
			// own date text, as the GORM dialector writes it, not as
			// time.Time.String (modernc.org/sqlite's default).
			return filepath.Join(dir, s+".db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_time_format=sqlite"
		}
		return backend{name: name, driver: "sqlite", dsn: [2]string{f("ds0"), f("ds1")}, oracle: f("oracle")}
	}
	t.Fatalf("unknown database %q", name)
	return backend{}
}

func (b backend) config(t testing.TB) *shardconf.Config {
	t.Helper()
	registerAlgorithms(t)
	cfg, err := shardconf.Parse(fmt.Appendf(nil, rules, b.driver, b.dsn[0], b.dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// world is the plain view of every database of a run: the physical tables
// in each data source and the oracle, read without shardkey.
type world struct {
	b      backend
	router *shardconf.Router
	ds     [2]*sql.DB
	oracle *sql.DB
	// physical[table] lists its physical tables in router order; the
	// broadcast table's copies are one per data source.
	physical  map[string][]shardconf.Target
	withItems bool // check t_item too
}

func newWorld(t testing.TB, b backend) *world {
	t.Helper()
	r, err := shardconf.NewRouter(b.config(t))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{b: b, router: r, physical: map[string][]shardconf.Target{}}
	open := func(dsn string) *sql.DB {
		db, err := sql.Open(b.driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(2)
		t.Cleanup(func() { db.Close() })
		return db
	}
	w.ds[0], w.ds[1], w.oracle = open(b.dsn[0]), open(b.dsn[1]), open(b.oracle)
	for _, ts := range tables {
		if ts.broadcast() {
			w.physical[ts.name] = []shardconf.Target{{DataSource: "ds_0", Table: ts.name}, {DataSource: "ds_1", Table: ts.name}}
		} else if w.physical[ts.name], err = r.Targets(ts.name); err != nil {
			t.Fatal(err)
		}
		for _, tg := range w.physical[ts.name] {
			w.exec(t, w.dsOf(tg), fmt.Sprintf("CREATE TABLE %s (%s)", tg.Table, ts.ddl))
		}
		w.exec(t, w.oracle, fmt.Sprintf("CREATE TABLE %s (%s)", ts.name, ts.ddl))
	}
	return w
}

func (w *world) dsOf(tg shardconf.Target) *sql.DB {
	if tg.DataSource == "ds_1" {
		return w.ds[1]
	}
	return w.ds[0]
}

func (w *world) exec(t testing.TB, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// reset empties every table, for a replay.
func (w *world) reset(t testing.TB) {
	t.Helper()
	for _, ts := range tables {
		for _, tg := range w.physical[ts.name] {
			w.exec(t, w.dsOf(tg), "DELETE FROM "+tg.Table)
		}
		w.exec(t, w.oracle, "DELETE FROM "+ts.name)
	}
}

// row is one row as text, NULL spelled nullText; the primary key first.
type row []string

const nullText = "NULL"

func (r row) String() string { return "(" + strings.Join(r, ", ") + ")" }

// snapshot is every row of every physical table and of the oracle.
type snapshot struct {
	phys   map[shardconf.Target]map[string][]row // by table, by target (logic name for the oracle)
	oracle map[string][]row
}

func (w *world) snapshot() (*snapshot, error) {
	s := &snapshot{phys: map[shardconf.Target]map[string][]row{}, oracle: map[string][]row{}}
	for _, ts := range w.checked() {
		// one query per data source: the physical tables UNION ALL
		byDS := map[string][]shardconf.Target{}
		for _, tg := range w.physical[ts.name] {
			byDS[tg.DataSource] = append(byDS[tg.DataSource], tg)
			if s.phys[tg] == nil {
				s.phys[tg] = map[string][]row{}
			}
			s.phys[tg][ts.name] = nil
		}
		for ds, tgs := range byDS {
			var parts []string
			for i, tg := range tgs {
				parts = append(parts, fmt.Sprintf("SELECT %d AS tn, %s FROM %s", i, strings.Join(ts.cols, ", "), tg.Table))
			}
			rows, err := readRows(w.dsOf(tgs[0]), strings.Join(parts, " UNION ALL "), len(ts.cols)+1)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", ds, ts.name, err)
			}
			for _, r := range rows {
				i, _ := strconv.Atoi(r[0])
				s.phys[tgs[i]][ts.name] = append(s.phys[tgs[i]][ts.name], r[1:])
			}
		}
		rows, err := readRows(w.oracle, "SELECT "+strings.Join(ts.cols, ", ")+" FROM "+ts.name, len(ts.cols))
		if err != nil {
			return nil, fmt.Errorf("oracle %s: %w", ts.name, err)
		}
		s.oracle[ts.name] = rows
	}
	return s, nil
}

// checked is the tables a run checks (t_item only when the client
// writes it).
func (w *world) checked() []tableSpec {
	if w.withItems {
		return tables
	}
	var out []tableSpec
	for _, ts := range tables {
		if ts.name != "t_item" {
			out = append(out, ts)
		}
	}
	return out
}

func readRows(db *sql.DB, query string, ncols int) ([]row, error) {
	rs, err := db.Query(query)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []row
	vals := make([]sql.NullString, ncols)
	ptrs := make([]any, ncols)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make(row, ncols)
		for i, v := range vals {
			r[i] = nullText
			if v.Valid {
				r[i] = v.String
			}
		}
		out = append(out, r)
	}
	sortRows(out)
	return out, rs.Err()
}

func sortRows(rs []row) {
	slices.SortFunc(rs, func(a, b row) int { return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00")) })
}

// equal reports whether two snapshots hold the same rows everywhere.
func (s *snapshot) equal(o *snapshot) bool {
	for tg, byTable := range s.phys {
		for tbl, rows := range byTable {
			if !rowsEqual(rows, o.phys[tg][tbl]) {
				return false
			}
		}
	}
	for tbl, rows := range s.oracle {
		if !rowsEqual(rows, o.oracle[tbl]) {
			return false
		}
	}
	return true
}

func rowsEqual(a, b []row) bool {
	return slices.EqualFunc(a, b, func(x, y row) bool { return slices.Equal(x, y) })
}

// diffSnapshots lists what changed between two snapshots, for a refused
// step that changed something.
func diffSnapshots(before, after *snapshot) []string {
	var out []string
	for tg, byTable := range after.phys {
		for tbl, rows := range byTable {
			gone, added := diffRows(before.phys[tg][tbl], rows)
			for _, r := range gone {
				out = append(out, fmt.Sprintf("%s.%s: row %s removed", tg.DataSource, tg.Table, r))
			}
			for _, r := range added {
				out = append(out, fmt.Sprintf("%s.%s: row %s added", tg.DataSource, tg.Table, r))
			}
			_ = tbl
		}
	}
	for tbl, rows := range after.oracle {
		gone, added := diffRows(before.oracle[tbl], rows)
		for _, r := range gone {
			out = append(out, fmt.Sprintf("oracle %s: row %s removed", tbl, r))
		}
		for _, r := range added {
			out = append(out, fmt.Sprintf("oracle %s: row %s added", tbl, r))
		}
	}
	slices.Sort(out)
	return out
}

// diffRows returns the rows only in a and only in b (multisets).
func diffRows(a, b []row) (onlyA, onlyB []row) {
	count := map[string]int{}
	byKey := map[string]row{}
	for _, r := range a {
		k := strings.Join(r, "\x00")
		count[k]++
		byKey[k] = r
	}
	for _, r := range b {
		k := strings.Join(r, "\x00")
		count[k]--
		byKey[k] = r
	}
	for k, n := range count {
		for ; n > 0; n-- {
			onlyA = append(onlyA, byKey[k])
		}
		for ; n < 0; n++ {
			onlyB = append(onlyB, byKey[k])
		}
	}
	sortRows(onlyA)
	sortRows(onlyB)
	return onlyA, onlyB
}

// check returns every problem of a snapshot: misplaced rows, primary keys
// held twice, sharded rows that differ from the oracle, broadcast copies
// that differ from it.
func (w *world) check(s *snapshot) []string {
	var out []string
	for _, ts := range w.checked() {
		if ts.broadcast() {
			for _, tg := range w.physical[ts.name] {
				onlyCopy, onlyOracle := diffRows(s.phys[tg][ts.name], s.oracle[ts.name])
				for _, r := range onlyCopy {
					out = append(out, fmt.Sprintf("broadcast copy %s.%s has %s, the oracle does not", tg.DataSource, tg.Table, r))
				}
				for _, r := range onlyOracle {
					out = append(out, fmt.Sprintf("broadcast copy %s.%s lacks the oracle's %s", tg.DataSource, tg.Table, r))
				}
			}
			continue
		}
		var union []row
		where := map[string][]string{}
		for _, tg := range w.physical[ts.name] {
			for _, r := range s.phys[tg][ts.name] {
				union = append(union, r)
				where[r[0]] = append(where[r[0]], tg.String())
				if want, err := w.route(ts, r); err != nil {
					out = append(out, fmt.Sprintf("%s: row %s in %s cannot route: %v", ts.name, r, tg, err))
				} else if want != tg {
					by := "its sharding values route"
					if ts.hint != "" {
						by = fmt.Sprintf("the hint of its %s routes it", ts.hint)
					}
					out = append(out, fmt.Sprintf("%s: row %s is in %s, %s to %s", ts.name, r, tg, by, want))
				}
			}
		}
		for k, at := range where {
			if len(at) > 1 {
				slices.Sort(at)
				out = append(out, fmt.Sprintf("%s: primary key %s exists %d times: %s", ts.name, k, len(at), strings.Join(at, ", ")))
			}
		}
		sortRows(union)
		onlyShards, onlyOracle := diffRows(union, s.oracle[ts.name])
		for _, r := range onlyShards {
			out = append(out, fmt.Sprintf("%s: shards hold %s, the oracle does not", ts.name, r))
		}
		for _, r := range onlyOracle {
			out = append(out, fmt.Sprintf("%s: the oracle holds %s, the shards do not", ts.name, r))
		}
	}
	slices.Sort(out)
	return out
}

// route is where a stored row belongs.
func (w *world) route(ts tableSpec, r row) (shardconf.Target, error) {
	var conds []shardconf.Cond
	for _, c := range ts.shardCols {
		i := slices.Index(ts.cols, c)
		if r[i] == nullText {
			return shardconf.Target{}, fmt.Errorf("%s is NULL", c)
		}
		v, err := strconv.ParseInt(r[i], 10, 64)
		if err != nil {
			return shardconf.Target{}, fmt.Errorf("%s = %q: %v", c, r[i], err)
		}
		conds = append(conds, shardconf.Eq(c, v))
	}
	ctx := context.Background()
	if ts.hint != "" {
		v, err := strconv.ParseInt(r[slices.Index(ts.cols, ts.hint)], 10, 64)
		if err != nil {
			return shardconf.Target{}, fmt.Errorf("%s = %s: %v", ts.hint, r[slices.Index(ts.cols, ts.hint)], err)
		}
		ctx = tenantHint(ctx, v)
	}
	ts2, err := w.router.RouteContext(ctx, ts.name, conds...)
	if err != nil {
		return shardconf.Target{}, err
	}
	if len(ts2) != 1 {
		return shardconf.Target{}, fmt.Errorf("routes to %d targets", len(ts2))
	}
	return ts2[0], nil
}

// syncOracle makes the oracle's table equal to the union of the shards
// in s, after a step whose effect only the shards define.
func (w *world) syncOracle(s *snapshot, table string) error {
	var ts tableSpec
	for _, t := range tables {
		if t.name == table {
			ts = t
		}
	}
	tx, err := w.oracle.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec("DELETE FROM " + table); err != nil {
		return err
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ts.cols)), ", ")
	if w.b.dollar {
		var ps []string
		for i := range ts.cols {
			ps = append(ps, fmt.Sprintf("$%d", i+1))
		}
		marks = strings.Join(ps, ", ")
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(ts.cols, ", "), marks)
	for _, tg := range w.physical[table] {
		for _, r := range s.phys[tg][table] {
			args := make([]any, len(r))
			for i, v := range r {
				if v != nullText {
					args[i] = v
				}
			}
			if _, err := tx.Exec(q, args...); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
