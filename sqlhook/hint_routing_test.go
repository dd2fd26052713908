package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// hintRules is a rule file as a ShardingSphere user writes hint routing:
// t_order and its bound t_order_item placed by HINT_INLINE on both
// strategies (order_id generated), t_mix by user_id across data sources
// and by hint within one, t_user by a column only, t_dict broadcast.
const hintRules = `
dataSources:
  ds_0: {driver: %[1]s, dsn: %[2]q}
  ds_1: {driver: %[1]s, dsn: %[3]q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        hint:
          shardingAlgorithmName: db_hint
      tableStrategy:
        hint:
          shardingAlgorithmName: order_hint
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snow
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      databaseStrategy:
        hint:
          shardingAlgorithmName: db_hint
      tableStrategy:
        hint:
          shardingAlgorithmName: item_hint
    t_mix:
      actualDataNodes: ds_${0..1}.t_mix_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: user_mod
      tableStrategy:
        hint:
          shardingAlgorithmName: mix_hint
    t_user:
      actualDataNodes: ds_${0..1}.t_user
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: user_mod
  bindingTables:
    - t_order,t_order_item
  broadcastTables:
    - t_dict
  shardingAlgorithms:
    db_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: ds_${value %% 2}
    order_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: t_order_${value %% 2}
    item_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: t_order_item_${value %% 2}
    mix_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: t_mix_${value}
    user_mod:
      type: MOD
      props:
        sharding-count: 2
  keyGenerators:
    snow:
      type: SNOWFLAKE
      props:
        worker-id: 7
`

var hintDDL = []string{
	`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(16))`,
	`CREATE TABLE t_order_item (item_id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL, sku VARCHAR(16))`,
	`CREATE TABLE t_mix (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, note VARCHAR(16))`,
	`CREATE TABLE t_user (user_id BIGINT PRIMARY KEY, name VARCHAR(16))`,
	`CREATE TABLE t_dict (k VARCHAR(16) PRIMARY KEY, v VARCHAR(16))`,
}

// hintEnv is one backend's two databases, the tables of hintRules
// created through sqlhook, a *sql.DB routing by them and connections
// without sqlhook to read the physical tables.
type hintEnv struct {
	b      backend
	db     *sql.DB
	direct [2]*sql.DB
}

func hintBackends(t *testing.T, name string) []backend {
	dir := t.TempDir()
	return []backend{
		{name: "postgres", driver: "pgx", dollar: true,
			dsn: [2]string{dbtest.Postgres(t, name+"_0"), dbtest.Postgres(t, name+"_1")}},
		{name: "mariadb", driver: "mysql",
			dsn: [2]string{dbtest.MySQL(t, name+"_0"), dbtest.MySQL(t, name+"_1")}},
		// busy_timeout: goroutines of one test write through several
		// connections; without it SQLite fails a locked write at once.
		{name: "sqlite", driver: "sqlite",
			dsn: [2]string{filepath.Join(dir, name+"0.db") + "?_pragma=busy_timeout(10000)",
				filepath.Join(dir, name+"1.db") + "?_pragma=busy_timeout(10000)"}},
	}
}

// eachHintBackend runs f on every backend with fresh databases.
func eachHintBackend(t *testing.T, name string, f func(t *testing.T, e *hintEnv), opts ...sqlhook.Option) {
	for _, b := range hintBackends(t, name) {
		t.Run(b.name, func(t *testing.T) {
			cfg, err := shardconf.Parse(fmt.Appendf(nil, hintRules, b.driver, b.dsn[0], b.dsn[1]))
			if err != nil {
				t.Fatal(err)
			}
			db, err := sqlhook.Open(cfg, opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			for _, ddl := range hintDDL {
				if _, err := db.Exec(ddl); err != nil {
					t.Fatalf("%s: %v", ddl, err)
				}
			}
			f(t, &hintEnv{b: b, db: db, direct: [2]*sql.DB{b.direct(t, 0), b.direct(t, 1)}})
		})
	}
}

// hintCtx hints t_order (and whatever else is given) at data source ds
// and table tb.
func hintCtx(ctx context.Context, table string, ds, tb int) context.Context {
	return shardconf.WithHint(ctx, table, shardconf.Hint{Database: []any{ds}, Table: []any{tb}})
}

// placed reads every physical table of logic table table directly and
// returns where each key (the first column) is, as "ds_i.table_j".
func (e *hintEnv) placed(t *testing.T, table, key string) map[int64][]string {
	t.Helper()
	out := map[int64][]string{}
	for ds, d := range e.direct {
		for tb := range 2 {
			phys := fmt.Sprintf("%s_%d", table, tb)
			rows, err := d.Query("SELECT " + key + " FROM " + phys)
			if err != nil {
				t.Fatalf("read ds_%d.%s: %v", ds, phys, err)
			}
			for rows.Next() {
				var k int64
				if err := rows.Scan(&k); err != nil {
					t.Fatal(err)
				}
				out[k] = append(out[k], fmt.Sprintf("ds_%d.%s", ds, phys))
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// wantAt fails unless key is in exactly the one physical table where.
func wantAt(t *testing.T, got map[int64][]string, key int64, where string) {
	t.Helper()
	if len(got[key]) != 1 || got[key][0] != where {
		t.Errorf("row %d is in %v, want exactly %s", key, got[key], where)
	}
}

func (e *hintEnv) exec(t *testing.T, ctx context.Context, q string, args ...any) int64 {
	t.Helper()
	res, err := e.db.ExecContext(ctx, e.b.q(q), args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// keys runs a query for one int64 column and returns its values sorted.
func (e *hintEnv) keys(t *testing.T, ctx context.Context, q string, args ...any) []int64 {
	t.Helper()
	rows, err := e.db.QueryContext(ctx, e.b.q(q), args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func TestHintPlacesInsertSelectUpdateDeleteInTheHintedTable(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_crud", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		// The same statement text, four hints: each row lands in exactly
		// the hinted physical table, whatever its columns hold.
		for i, at := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			ctx := hintCtx(bg, "t_order", at[0], at[1])
			e.exec(t, ctx, `INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'new')`, 100+i, 7)
		}
		got := e.placed(t, "t_order", "order_id")
		for i, at := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			wantAt(t, got, int64(100+i), fmt.Sprintf("ds_%d.t_order_%d", at[0], at[1]))
		}

		// A multi-row INSERT whose keys are generated: every row in the
		// hinted table (values route nothing).
		ctx := hintCtx(bg, "t_order", 1, 0)
		if n := e.exec(t, ctx, `INSERT INTO t_order (user_id, status) VALUES (?, 'gen'), (?, 'gen'), (?, 'gen')`, 1, 2, 3); n != 3 {
			t.Errorf("generated INSERT affected %d rows, want 3", n)
		}
		gen := e.keys(t, ctx, `SELECT order_id FROM t_order WHERE status = 'gen'`)
		if len(gen) != 3 {
			t.Fatalf("hinted SELECT found generated keys %v, want 3", gen)
		}
		got = e.placed(t, "t_order", "order_id")
		for _, k := range gen {
			wantAt(t, got, k, "ds_1.t_order_0")
		}

		// SELECT reads only the hinted table: a row elsewhere is not seen.
		if ks := e.keys(t, hintCtx(bg, "t_order", 0, 1), `SELECT order_id FROM t_order WHERE user_id = ?`, 7); fmt.Sprint(ks) != "[101]" {
			t.Errorf("SELECT hinted at ds_0.t_order_1: %v, want [101]", ks)
		}
		// Several hint values: the union of their tables, merged.
		both := shardconf.WithHint(bg, "t_order", shardconf.Hint{Database: []any{0}, Table: []any{0, 1}})
		if ks := e.keys(t, both, `SELECT order_id FROM t_order WHERE user_id = ? ORDER BY order_id`, 7); fmt.Sprint(ks) != "[100 101]" {
			t.Errorf("SELECT hinted at ds_0, tables 0 and 1: %v, want [100 101]", ks)
		}

		// UPDATE and DELETE change the hinted table's rows only.
		if n := e.exec(t, hintCtx(bg, "t_order", 1, 1), `UPDATE t_order SET status = 'paid' WHERE user_id = ?`, 7); n != 1 {
			t.Errorf("hinted UPDATE affected %d rows, want 1", n)
		}
		var paid int
		if err := e.direct[1].QueryRow(`SELECT count(*) FROM t_order_1 WHERE status = 'paid'`).Scan(&paid); err != nil || paid != 1 {
			t.Errorf("paid rows in ds_1.t_order_1: %d, %v; want 1", paid, err)
		}
		for ds, d := range e.direct {
			for tb := range 2 {
				if ds == 1 && tb == 1 {
					continue
				}
				var n int
				if err := d.QueryRow(fmt.Sprintf(`SELECT count(*) FROM t_order_%d WHERE status = 'paid'`, tb)).Scan(&n); err != nil || n != 0 {
					t.Errorf("paid rows in ds_%d.t_order_%d: %d, %v; want 0", ds, tb, n, err)
				}
			}
		}
		if n := e.exec(t, hintCtx(bg, "t_order", 0, 0), `DELETE FROM t_order WHERE user_id = ?`, 7); n != 1 {
			t.Errorf("hinted DELETE affected %d rows, want 1", n)
		}
		got = e.placed(t, "t_order", "order_id")
		if _, ok := got[100]; ok {
			t.Errorf("row 100 still in %v after the DELETE hinted at its table", got[100])
		}
		for _, k := range []int64{101, 102, 103} {
			if len(got[k]) != 1 {
				t.Errorf("row %d in %v after a DELETE hinted elsewhere, want it kept", k, got[k])
			}
		}
	})
}

// Without a hint a hint-strategy table cannot be placed: every statement
// is refused with ErrMissingShardingKey and nothing reaches a database.
func TestHintMissingIsErrMissingShardingKeyBeforeAnythingRuns(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_missing", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		e.exec(t, hintCtx(bg, "t_order", 0, 0), `INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'kept')`)
		onlyTable := shardconf.WithHint(bg, "t_order", shardconf.Hint{Table: []any{1}})
		otherTable := hintCtx(bg, "t_order_item", 0, 0) // a hint for another table does not place t_order
		for _, ctx := range []context.Context{bg, onlyTable, otherTable} {
			for _, q := range []string{
				`INSERT INTO t_order (order_id, user_id, status) VALUES (2, 1, 'x')`,
				`INSERT INTO t_order (user_id, status) VALUES (1, 'x')`,
				`UPDATE t_order SET status = 'x' WHERE order_id = 1`,
				`DELETE FROM t_order WHERE order_id = 1`,
			} {
				if _, err := e.db.ExecContext(ctx, q); !errors.Is(err, shardconf.ErrMissingShardingKey) {
					t.Errorf("%s: %v, want ErrMissingShardingKey", q, err)
				}
			}
			if _, err := e.db.QueryContext(ctx, `SELECT status FROM t_order WHERE order_id = 1`); !errors.Is(err, shardconf.ErrMissingShardingKey) {
				t.Errorf("unhinted SELECT: %v, want ErrMissingShardingKey", err)
			}
		}
		got := e.placed(t, "t_order", "order_id")
		if len(got) != 1 {
			t.Errorf("rows after refused statements: %v, want only row 1", got)
		}
		wantAt(t, got, 1, "ds_0.t_order_0")
		var status string
		if err := e.direct[0].QueryRow(`SELECT status FROM t_order_0 WHERE order_id = 1`).Scan(&status); err != nil || status != "kept" {
			t.Errorf("row 1 status %q, %v; want kept", status, err)
		}
	})
}

// A prepared statement is routed when it runs, by the context of that
// execution: the hint of PrepareContext's context does not stick to it.
func TestHintPreparedStatementRoutesByTheExecutionContext(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_prep", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		ins, err := e.db.PrepareContext(hintCtx(bg, "t_order", 0, 0), e.b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, 'p')`))
		if err != nil {
			t.Fatal(err)
		}
		defer ins.Close()
		sel, err := e.db.PrepareContext(hintCtx(bg, "t_order", 0, 0), e.b.q(`SELECT order_id FROM t_order WHERE user_id = ?`))
		if err != nil {
			t.Fatal(err)
		}
		defer sel.Close()
		for i, at := range [][2]int{{1, 1}, {0, 1}, {1, 0}} {
			if _, err := ins.ExecContext(hintCtx(bg, "t_order", at[0], at[1]), 10+i); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ins.ExecContext(bg, 20); !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("prepared INSERT run without a hint: %v, want ErrMissingShardingKey", err)
		}
		got := e.placed(t, "t_order", "order_id")
		wantAt(t, got, 10, "ds_1.t_order_1")
		wantAt(t, got, 11, "ds_0.t_order_1")
		wantAt(t, got, 12, "ds_1.t_order_0")
		if len(got) != 3 {
			t.Errorf("rows %v, want 3", got)
		}
		rows, err := sel.QueryContext(hintCtx(bg, "t_order", 1, 1), 1)
		if err != nil {
			t.Fatal(err)
		}
		var seen []int64
		for rows.Next() {
			var k int64
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			seen = append(seen, k)
		}
		rows.Close()
		if fmt.Sprint(seen) != "[10]" {
			t.Errorf("prepared SELECT hinted at ds_1.t_order_1 read %v, want [10]", seen)
		}
		if _, err := sel.QueryContext(bg, 1); !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("prepared SELECT run without a hint: %v, want ErrMissingShardingKey", err)
		}
	})
}

// In a transaction each statement is routed by its own context (database/sql
// hands the statement's to the driver); BeginTx's hint routes nothing.
func TestHintTransactionStatementsRouteByTheirOwnContext(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_tx", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		tx, err := e.db.BeginTx(hintCtx(bg, "t_order", 1, 1), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(bg, `INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'tx')`); !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("INSERT in a transaction begun with a hint, run without one: %v, want ErrMissingShardingKey", err)
		}
		at := hintCtx(bg, "t_order", 0, 1)
		if _, err := tx.ExecContext(at, `INSERT INTO t_order (order_id, user_id, status) VALUES (2, 1, 'tx')`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(at, `UPDATE t_order SET status = 'txu' WHERE order_id = 2`); err != nil {
			t.Fatal(err)
		}
		var status string
		if err := tx.QueryRowContext(at, `SELECT status FROM t_order WHERE order_id = 2`).Scan(&status); err != nil || status != "txu" {
			t.Errorf("read in the transaction: %q, %v; want txu", status, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		tx, err = e.db.BeginTx(bg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(hintCtx(bg, "t_order", 1, 0), `INSERT INTO t_order (order_id, user_id, status) VALUES (3, 1, 'rb')`); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		got := e.placed(t, "t_order", "order_id")
		if len(got) != 1 {
			t.Errorf("rows %v, want only row 2", got)
		}
		wantAt(t, got, 2, "ds_0.t_order_1")
	})
}

// A hint that cannot route the statement refuses it: a hint for a table
// routed by a column, for a broadcast table, DDL under a hint, and a hint
// for every table on a statement naming no sharded table.
func TestHintThatCannotBeHonouredRefusesTheStatement(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_unused", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		user := hintCtx(bg, "t_user", 0, 0)
		if _, err := e.db.ExecContext(user, e.b.q(`INSERT INTO t_user (user_id, name) VALUES (?, 'a')`), 1); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("INSERT into a column-routed table under its hint: %v, want ErrUnusedHint", err)
		}
		if _, err := e.db.QueryContext(user, e.b.q(`SELECT name FROM t_user WHERE user_id = ?`), 1); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("SELECT of a column-routed table under its hint: %v, want ErrUnusedHint", err)
		}
		dict := shardconf.WithHint(bg, "t_dict", shardconf.Hint{Database: []any{1}})
		if _, err := e.db.ExecContext(dict, `INSERT INTO t_dict (k, v) VALUES ('a', 'b')`); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("INSERT into a broadcast table under its hint: %v, want ErrUnusedHint", err)
		}
		if _, err := e.db.QueryContext(dict, `SELECT v FROM t_dict`); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("SELECT of a broadcast table under its hint: %v, want ErrUnusedHint", err)
		}
		ord := hintCtx(bg, "t_order", 1, 1)
		if _, err := e.db.ExecContext(ord, `CREATE INDEX idx_hint_status ON t_order (status)`); !errors.Is(err, sqlhook.ErrUnsupported) {
			t.Errorf("DDL under a hint: %v, want ErrUnsupported", err)
		}
		all := shardconf.WithHint(bg, shardconf.AllTables, shardconf.Hint{Database: []any{1}})
		if _, err := e.db.ExecContext(all, `CREATE TABLE plain_hint (id INT)`); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("a statement on no sharded table under an AllTables hint: %v, want ErrUnusedHint", err)
		}
		for _, d := range e.direct {
			for _, q := range []string{`SELECT count(*) FROM t_user`, `SELECT count(*) FROM t_dict`} {
				var n int
				if err := d.QueryRow(q).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s after refused statements: %d, %v; want 0", q, n, err)
				}
			}
			var n int
			if err := d.QueryRow(`SELECT count(*) FROM plain_hint`).Scan(&n); err == nil {
				t.Errorf("plain_hint was created under a refused AllTables hint")
			}
		}
		// The same statements run without the hint.
		if _, err := e.db.ExecContext(bg, `INSERT INTO t_dict (k, v) VALUES ('a', 'b')`); err != nil {
			t.Errorf("unhinted broadcast INSERT: %v", err)
		}
		// An AllTables hint places a table whose database strategy is a
		// hint strategy, its own Table hint the rest.
		allOrd := shardconf.WithHint(all, "t_order", shardconf.Hint{Table: []any{0}})
		e.exec(t, allOrd, `INSERT INTO t_order (order_id, user_id, status) VALUES (5, 1, 'all')`)
		wantAt(t, e.placed(t, "t_order", "order_id"), 5, "ds_1.t_order_0")
		// A broadcast table joined to it is read on the hinted data
		// source; on its own it has no data source to honour the hint.
		if _, err := e.direct[1].Exec(`INSERT INTO t_dict (k, v) VALUES ('all', 'ds1')`); err != nil {
			t.Fatal(err)
		}
		var v string
		err := e.db.QueryRowContext(allOrd, `SELECT d.v FROM t_order o JOIN t_dict d ON d.k = o.status WHERE o.order_id = 5`).Scan(&v)
		if err != nil || v != "ds1" {
			t.Errorf("broadcast table joined under an AllTables hint: %q, %v; want ds_1's copy", v, err)
		}
		if _, err := e.db.QueryContext(all, `SELECT v FROM t_dict`); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("broadcast table alone under an AllTables hint: %v, want ErrUnusedHint", err)
		}
	})
}

// A hint strategy within a data source chosen by a column: the column
// picks the data source, the hint the table, and a change of the column
// is checked with the hint still in force.
func TestHintAndColumnRouteTogether(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_mix", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		tbl := func(n int) context.Context { return shardconf.WithHint(bg, "t_mix", shardconf.Hint{Table: []any{n}}) }
		e.exec(t, tbl(1), `INSERT INTO t_mix (id, user_id, note) VALUES (1, ?, 'a'), (2, ?, 'b')`, 4, 5)
		got := e.placed(t, "t_mix", "id")
		wantAt(t, got, 1, "ds_0.t_mix_1")
		wantAt(t, got, 2, "ds_1.t_mix_1")
		if _, err := e.db.ExecContext(bg, e.b.q(`INSERT INTO t_mix (id, user_id, note) VALUES (3, ?, 'c')`), 4); !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("INSERT without the table hint: %v, want ErrMissingShardingKey", err)
		}
		if n := e.exec(t, tbl(1), `UPDATE t_mix SET user_id = ? WHERE user_id = ? AND id = 1`, 6, 4); n != 1 {
			t.Errorf("UPDATE keeping the data source affected %d rows, want 1", n)
		}
		_, err := e.db.ExecContext(tbl(1), e.b.q(`UPDATE t_mix SET user_id = ? WHERE user_id = ? AND id = 1`), 7, 6)
		if !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("UPDATE moving the row to the other data source: %v, want ErrShardingKeyChange", err)
		}
		if ks := e.keys(t, tbl(1), `SELECT id FROM t_mix WHERE user_id = ?`, 6); fmt.Sprint(ks) != "[1]" {
			t.Errorf("SELECT after the refused UPDATE: %v, want [1]", ks)
		}
	})
}

// Bound tables joined: the driving table's hint places both, and a hint
// for the partner must agree with the pairing.
func TestHintBoundJoinFollowsTheDrivingTablesHint(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_join", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		for _, at := range [][2]int{{0, 1}, {1, 1}} {
			ctx := hintCtx(hintCtx(bg, "t_order", at[0], at[1]), "t_order_item", at[0], at[1])
			id := int64(10*at[0] + at[1])
			e.exec(t, ctx, `INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, 'j')`, id)
			e.exec(t, ctx, `INSERT INTO t_order_item (item_id, order_id, sku) VALUES (?, ?, 'sku')`, 100+id, id)
		}
		wantAt(t, e.placed(t, "t_order_item", "item_id"), 111, "ds_1.t_order_item_1")
		join := `SELECT i.item_id FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id WHERE o.user_id = ?`
		if ks := e.keys(t, hintCtx(bg, "t_order", 1, 1), join, 1); fmt.Sprint(ks) != "[111]" {
			t.Errorf("JOIN hinted at ds_1, table 1: %v, want [111]", ks)
		}
		agree := hintCtx(hintCtx(bg, "t_order", 0, 1), "t_order_item", 0, 1)
		if ks := e.keys(t, agree, join, 1); fmt.Sprint(ks) != "[101]" {
			t.Errorf("JOIN with agreeing hints: %v, want [101]", ks)
		}
		disagree := hintCtx(hintCtx(bg, "t_order", 0, 1), "t_order_item", 1, 1)
		if _, err := e.db.QueryContext(disagree, e.b.q(join), 1); !errors.Is(err, sqlhook.ErrUnsupported) || !strings.Contains(err.Error(), "t_order_item") {
			t.Errorf("JOIN whose partner hint disagrees: %v, want ErrUnsupported naming t_order_item", err)
		}
	})
}

// WithScatter: a hint-strategy table without a hint is read on every
// table; a hint still narrows the statement to its table.
func TestHintScatterReadsEveryTableWithoutAHintAndTheHintedOneWithIt(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_scatter", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		for i, at := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			e.exec(t, hintCtx(bg, "t_order", at[0], at[1]), `INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, 's')`, i)
		}
		if ks := e.keys(t, bg, `SELECT order_id FROM t_order WHERE status = 's'`); fmt.Sprint(ks) != "[0 1 2 3]" {
			t.Errorf("scatter SELECT without a hint: %v, want [0 1 2 3]", ks)
		}
		if ks := e.keys(t, hintCtx(bg, "t_order", 1, 0), `SELECT order_id FROM t_order WHERE status = 's'`); fmt.Sprint(ks) != "[2]" {
			t.Errorf("scatter SELECT with a hint: %v, want [2]", ks)
		}
		if _, err := e.db.ExecContext(bg, `INSERT INTO t_order (order_id, user_id, status) VALUES (9, 1, 's')`); !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("INSERT without a hint under WithScatter: %v, want ErrMissingShardingKey", err)
		}
	}, sqlhook.WithScatter())
}

// Statements sqlhook does not route by a logic table's rules ignore no
// hint: a physical table named directly takes the hint of its logic table
// for an INSERT (which must route to it) and refuses it otherwise, and a
// hint for a table outside the rules refuses a statement naming it.
func TestHintOnTablesNotRoutedByRulesRefusesTheStatement(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_phys", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		e.exec(t, hintCtx(bg, "t_order", 1, 1), `INSERT INTO t_order_1 (order_id, user_id, status) VALUES (1, 1, 'p')`)
		wantAt(t, e.placed(t, "t_order", "order_id"), 1, "ds_1.t_order_1")
		if _, err := e.db.ExecContext(hintCtx(bg, "t_order", 1, 0), `INSERT INTO t_order_1 (order_id, user_id, status) VALUES (2, 1, 'p')`); !errors.Is(err, sqlhook.ErrUnsupported) {
			t.Errorf("INSERT into t_order_1 hinted at t_order_0: %v, want ErrUnsupported", err)
		}
		if _, err := e.db.ExecContext(bg, `INSERT INTO t_order_1 (order_id, user_id, status) VALUES (3, 1, 'p')`); !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("INSERT into t_order_1 without a hint: %v, want ErrMissingShardingKey", err)
		}
		if _, err := e.db.ExecContext(hintCtx(bg, "t_order", 1, 1), `UPDATE t_order_1 SET status = 'x' WHERE order_id = 1`); !errors.Is(err, sqlhook.ErrUnsupported) {
			t.Errorf("UPDATE of physical table t_order_1 under a hint for t_order: %v, want ErrUnsupported", err)
		}
		if got := e.placed(t, "t_order", "order_id"); len(got) != 1 {
			t.Errorf("rows %v, want only row 1", got)
		}
		var status string
		if err := e.direct[1].QueryRow(`SELECT status FROM t_order_1 WHERE order_id = 1`).Scan(&status); err != nil || status != "p" {
			t.Errorf("row 1: %q, %v; want status p", status, err)
		}

		if _, err := e.db.Exec(`CREATE TABLE hint_plain (id INT)`); err != nil {
			t.Fatal(err)
		}
		plain := shardconf.WithHint(bg, "hint_plain", shardconf.Hint{Database: []any{1}})
		if _, err := e.db.ExecContext(plain, `INSERT INTO hint_plain (id) VALUES (1)`); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("INSERT into an unsharded table under its hint: %v, want ErrUnusedHint", err)
		}
		join := `SELECT o.order_id FROM t_order o WHERE o.order_id IN (SELECT id FROM hint_plain)`
		if _, err := e.db.QueryContext(hintCtx(plain, "t_order", 1, 1), join); !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("statement on a hinted table and an unsharded one under its hint: %v, want ErrUnusedHint", err)
		}
		var n int
		if err := e.direct[0].QueryRow(`SELECT count(*) FROM hint_plain`).Scan(&n); err != nil || n != 0 {
			t.Errorf("hint_plain rows after refused statements: %d, %v; want 0", n, err)
		}
	})
}
