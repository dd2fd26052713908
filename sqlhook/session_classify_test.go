package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Every statement on a connection with several data sources is either
// ordinary, applied to every data source, kept for the transaction, or
// refused; nothing inside a string or comment changes that, and
// MySQL's executable comments are read as code.
func TestSessionStatementsClassified(t *testing.T) {
	cases := []struct {
		d    Dialect
		q    string
		want sessKind
	}{
		{MySQL, `SELECT * FROM t WHERE a = '@x := 1'`, sessNone},
		{MySQL, `SELECT @x`, sessNone},
		{MySQL, `SELECT 1 -- SET @x := 1`, sessNone},
		{MySQL, `SELECT 1--1, @x := 5`, sessRefuse},
		{MySQL, "SELECT 1 #, @x := 5\n", sessNone},
		{MySQL, `SELECT 'it\'s', @x := 5`, sessRefuse},
		{PostgreSQL, `SELECT 1--1, set_config('a.b', 'c', false)`, sessNone},
		{MySQL, `SELECT ':= @x' /* @x := 1 */`, sessNone},
		{MySQL, `/*!40101 SELECT @x := 1 */`, sessRefuse},
		{MySQL, `SELECT @x := 1`, sessRefuse},
		{MySQL, `UPDATE t SET a = (@n := @n + 1)`, sessRefuse},
		{MySQL, `SELECT a INTO @v FROM t`, sessRefuse},
		{MySQL, `SET @u := 1`, sessApply},
		{MySQL, `SET @u = ?, @v = 'x'`, sessApply},
		{MySQL, `set names utf8mb4`, sessApply},
		{MySQL, `SET CHARACTER SET utf8mb4`, sessApply},
		{MySQL, `SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')`, sessRefuse},
		{MySQL, `SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_DATE'`, sessApply},
		{MySQL, `SET @@session.time_zone = '+00:00'`, sessApply},
		{MySQL, `SET time_zone = '+00:00', @a = 1`, sessApply},
		{MySQL, `SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED`, sessApply},
		{MySQL, `SET @u := RAND()`, sessRefuse},
		{MySQL, `SET @u := UUID()`, sessRefuse},
		{MySQL, `SET @u := CURRENT_TIMESTAMP`, sessRefuse},
		{MySQL, `SET @u := (SELECT 1)`, sessRefuse},
		{MySQL, `SET @u := @@server_id`, sessRefuse},
		{MySQL, `SET @u := @v + 1`, sessApply},
		{MySQL, `SET @@global.max_connections = 10`, sessRefuse},
		{MySQL, `SET a = 1, GLOBAL b = 2`, sessRefuse},
		{MySQL, `SET PERSIST max_connections = 10`, sessRefuse},
		{MySQL, `SET @@autocommit = 0`, sessRefuse},
		{MySQL, `SET TRANSACTION READ ONLY`, sessRefuse},
		{MySQL, `SET PASSWORD = 'x'`, sessRefuse},
		{MySQL, `SET STATEMENT max_statement_time=1 FOR SELECT 1`, sessRefuse},
		{MySQL, `USE app_1`, sessRefuse},
		{MySQL, `CREATE TEMPORARY TABLE x (a int)`, sessRefuse},
		{MySQL, `DROP TEMPORARY TABLE x`, sessRefuse},
		{MySQL, `LOCK TABLES t READ`, sessRefuse},
		{MySQL, `SELECT LAST_INSERT_ID()`, sessRefuse},
		{MySQL, `SELECT FOUND_ROWS()`, sessRefuse},
		{MySQL, `XA START 'x'`, sessRefuse},
		{MySQL, `CALL p(1)`, sessRefuse},
		{MySQL, `DO SLEEP(0)`, sessNone},
		{MySQL, `SHOW WARNINGS`, sessRefuse},
		{MySQL, `SHOW TABLES`, sessNone},
		{MySQL, `SELECT @@warning_count`, sessRefuse},
		{MySQL, `SELECT @@session.sql_mode`, sessNone},
		{PostgreSQL, `DO $$ BEGIN PERFORM set_config('a.b', 'c', false); END $$`, sessRefuse},
		{PostgreSQL, `CALL p()`, sessRefuse},
		{PostgreSQL, `CREATE TABLE pg_temp.x (a int)`, sessRefuse},
		{MySQL, `SELECT 1; SET @x = 1`, sessRefuse},
		{MySQL, `SELECT 1; SELECT 2`, sessNone},
		{MySQL, `SAVEPOINT a`, sessSavepoint},
		{MySQL, `ROLLBACK WORK TO SAVEPOINT a`, sessSavepoint},
		{MySQL, `ROLLBACK`, sessRefuse},
		{MySQL, `SELECT 'unterminated`, sessRefuse},
		{PostgreSQL, `SET search_path TO app, public`, sessApply},
		{PostgreSQL, `SET SESSION timezone = 'UTC'`, sessApply},
		{PostgreSQL, `SET ROLE reader`, sessApply},
		{PostgreSQL, `RESET ALL`, sessApply},
		{PostgreSQL, `SET LOCAL statement_timeout = '1s'`, sessTxLocal},
		{PostgreSQL, `SET CONSTRAINTS ALL DEFERRED`, sessTxLocal},
		{PostgreSQL, `SET TRANSACTION ISOLATION LEVEL SERIALIZABLE`, sessRefuse},
		{PostgreSQL, `CREATE TEMP TABLE x (a int)`, sessRefuse},
		{PostgreSQL, `CREATE GLOBAL TEMPORARY TABLE x (a int)`, sessRefuse},
		{PostgreSQL, `CREATE OR REPLACE TEMP VIEW v AS SELECT 1`, sessRefuse},
		{PostgreSQL, `SELECT * INTO TEMP x FROM t`, sessRefuse},
		{PostgreSQL, `INSERT INTO temp VALUES (1)`, sessNone},
		{PostgreSQL, `SELECT temp FROM weather`, sessNone},
		{PostgreSQL, `SELECT set_config('a.b', 'c', false)`, sessRefuse},
		{PostgreSQL, `SELECT currval('s')`, sessRefuse},
		{PostgreSQL, `SELECT $$ SET x = 1; CREATE TEMP TABLE y $$`, sessNone},
		{PostgreSQL, `SELECT E'it\'s; BEGIN'`, sessNone},
		{PostgreSQL, `SELECT 'a' /* nested /* BEGIN */ still */`, sessNone},
		{PostgreSQL, `DISCARD ALL`, sessRefuse},
		{PostgreSQL, `BEGIN`, sessRefuse},
		{PostgreSQL, `PREPARE TRANSACTION 'x'`, sessRefuse},
		{PostgreSQL, `LOCK TABLE t_note`, sessNone},
		{SQLite, `PRAGMA foreign_keys = ON`, sessApply},
		{SQLite, `PRAGMA main.cache_size = 100`, sessApply},
		{SQLite, `PRAGMA table_info(t_note)`, sessNone},
		{SQLite, `PRAGMA foreign_keys`, sessNone},
		{SQLite, `PRAGMA foreign_keys(1)`, sessRefuse},
		{SQLite, `ATTACH 'x.db' AS x`, sessRefuse},
		{SQLite, `CREATE TEMP TABLE x (a)`, sessRefuse},
		{SQLite, `CREATE TABLE "temp".x (a)`, sessRefuse},
		{SQLite, `SELECT changes()`, sessRefuse},
		{SQLite, `SELECT * FROM t WHERE a = @a`, sessNone},
	}
	names := map[sessKind]string{sessNone: "none", sessApply: "apply", sessTxLocal: "tx-local", sessSavepoint: "savepoint", sessRefuse: "refuse"}
	for _, c := range cases {
		if got := classifySession(c.d, c.q); got.kind != c.want {
			t.Errorf("%v %q: %s (%s), want %s", c.d, c.q, names[got.kind], got.why, names[c.want])
		}
	}
}

// A savepoint statement is read alone, its name compared as the
// database compares it; anything after it is refused, since it would
// run on every data source of the transaction.
func TestSavepointStatementsParsed(t *testing.T) {
	cases := []struct {
		d    Dialect
		q    string
		ok   bool
		want spStmt
	}{
		{PostgreSQL, `SAVEPOINT Sp1`, true, spStmt{spSet, "sp1"}},
		{PostgreSQL, `SAVEPOINT "Sp1"`, true, spStmt{spSet, "Sp1"}},
		{MySQL, "SAVEPOINT `Sp1`", true, spStmt{spSet, "sp1"}},
		{PostgreSQL, `RELEASE sp`, true, spStmt{spRelease, "sp"}},
		{PostgreSQL, `RELEASE SAVEPOINT sp;`, true, spStmt{spRelease, "sp"}},
		{PostgreSQL, `RELEASE savepoint`, true, spStmt{spRelease, "savepoint"}},
		{SQLite, `ROLLBACK TRANSACTION TO SAVEPOINT sp`, true, spStmt{spRollback, "sp"}},
		{MySQL, `/* gorm */ ROLLBACK TO sp`, true, spStmt{spRollback, "sp"}},
		{PostgreSQL, `SAVEPOINT a; DELETE FROM t_note`, false, spStmt{}},
		{PostgreSQL, `ROLLBACK TO SAVEPOINT a, b`, false, spStmt{}},
		{PostgreSQL, `ROLLBACK`, false, spStmt{}},
	}
	for _, c := range cases {
		got, ok := parseSavepoint(c.d, c.q)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%v %q: %+v %v, want %+v %v", c.d, c.q, got, ok, c.want, c.ok)
		}
	}
}

// The transaction's log follows the database's savepoint stack:
// RELEASE drops the savepoint and later ones (SET LOCALs stay), ROLLBACK
// TO drops what followed it, and MySQL replaces a savepoint of the same
// name where PostgreSQL and SQLite keep both.
func TestSavepointLogFollowsTheDatabaseStack(t *testing.T) {
	names := func(tx *tx) []string {
		var out []string
		for _, e := range tx.log {
			if e.name == "" {
				out = append(out, "local:"+e.sql)
			} else {
				out = append(out, e.name)
			}
		}
		return out
	}
	run := func(d Dialect, steps ...string) []string {
		tx := &tx{}
		for _, s := range steps {
			if rest, ok := strings.CutPrefix(s, "local "); ok {
				tx.log = append(tx.log, txEntry{sql: rest})
				continue
			}
			sp, ok := parseSavepoint(d, s)
			if !ok {
				t.Fatalf("parse %q", s)
			}
			if sp.kind == spSet || tx.find(sp.name) >= 0 {
				tx.apply(d, sp, s)
			}
		}
		return names(tx)
	}
	for _, c := range []struct {
		d     Dialect
		steps []string
		want  []string
	}{
		{PostgreSQL, []string{"SAVEPOINT a", "SAVEPOINT b", "SAVEPOINT a"}, []string{"a", "b", "a"}},
		{MySQL, []string{"SAVEPOINT a", "SAVEPOINT b", "SAVEPOINT a"}, []string{"b", "a"}},
		{PostgreSQL, []string{"SAVEPOINT a", "local x", "SAVEPOINT b", "local y", "RELEASE a"}, []string{"local:x", "local:y"}},
		{PostgreSQL, []string{"SAVEPOINT a", "local x", "SAVEPOINT b", "local y", "ROLLBACK TO b"}, []string{"a", "local:x", "b"}},
		{PostgreSQL, []string{"SAVEPOINT a", "SAVEPOINT b", "SAVEPOINT a", "ROLLBACK TO a"}, []string{"a", "b", "a"}},
		{PostgreSQL, []string{"SAVEPOINT a", "SAVEPOINT b", "SAVEPOINT a", "RELEASE a", "RELEASE a"}, nil},
	} {
		if got := run(c.d, c.steps...); !slices.Equal(got, c.want) {
			t.Errorf("%v %q: log %q, want %q", c.d, c.steps, got, c.want)
		}
	}
}

// spRoute is prefixRoute that marks savepoint statements as the routing
// core does.
func spRoute(def string) routeFunc {
	base := prefixRoute(def, noMerge)
	return func(ctx context.Context, q string, args []driver.NamedValue) (*routed, error) {
		r, err := base(ctx, q, args)
		if err == nil && r.passthrough {
			r.txControl = isSavepoint(q)
		}
		return r, err
	}
}

// A data source that cannot be given the savepoints as it joins leaves
// the transaction unusable: the statement fails, later ones fail, and
// Commit rolls back every data source.
func TestSavepointReplayFailureAbortsTransaction(t *testing.T) {
	log := &fkLog{}
	sources, _, ds1 := fakeSources(log, true)
	ds1.execErr = errors.New("disk full")
	db := openRouted(t, sources, spRoute("ds_0"), WithDialect(SQLite), WithMultiSourceTx())
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("ds_0: UPDATE a"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("SAVEPOINT sp"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("ds_1: UPDATE b"); !errors.Is(err, ErrTxAborted) {
		t.Fatalf("statement whose data source could not take the savepoint: %v, want ErrTxAborted", err)
	}
	if _, err := tx.Exec("ds_0: UPDATE c"); !errors.Is(err, ErrTxAborted) {
		t.Errorf("later statement: %v, want ErrTxAborted", err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrTxAborted) {
		t.Errorf("Commit: %v, want ErrTxAborted", err)
	}
	if log.count("ds_0 commit")+log.count("ds_1 commit") != 0 || log.count("ds_0 rollback") != 1 || log.count("ds_1 rollback") != 1 {
		t.Errorf("events %q: want both data sources rolled back, none committed", log.all())
	}
	if slices.Contains(log.of("ds_1"), "exec UPDATE b") || slices.Contains(log.of("ds_0"), "exec UPDATE c") {
		t.Errorf("a statement ran in the aborted transaction: %q", log.all())
	}
}

// A statement that ran on some of its units and failed on the next is
// not committed in part: the transaction fails until Rollback.
func TestPartialStatementIsNeverCommitted(t *testing.T) {
	log := &fkLog{}
	sources, _, ds1 := fakeSources(log, true)
	ds1.execErr = errors.New("constraint violated")
	db := openRouted(t, sources, spRoute("ds_0"), WithDialect(SQLite), WithMultiSourceTx())
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("ds_0,ds_1: UPDATE a"); err == nil {
		t.Fatal("the second unit's failure was not reported")
	}
	if _, err := tx.Exec("ds_0: UPDATE b"); !errors.Is(err, ErrTxAborted) {
		t.Errorf("statement after a partial one: %v, want ErrTxAborted", err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrTxAborted) {
		t.Errorf("Commit after a partial statement: %v, want ErrTxAborted", err)
	}
	if log.count("ds_0 commit") != 0 || log.count("ds_0 rollback") != 1 {
		t.Errorf("events %q: ds_0 must be rolled back", log.all())
	}
}

// Reading any text for session state or a savepoint never panics, in
// any dialect.
func FuzzSessionClassification(f *testing.F) {
	for _, s := range []string{"SET @x := 1", "/*!40101 SET @x := (SELECT 1) */", "SELECT $$a$$, $1, E'\\'' --", "PRAGMA a.b(1)",
		"ROLLBACK TO SAVEPOINT `a`", "SELECT @'x' := 1, @@session.y", "CREATE TEMP TABLE [x] (a)", "SET a = 1, GLOBAL b = 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, d := range []Dialect{PostgreSQL, MySQL, SQLite} {
			classifySession(d, q)
			parseSavepoint(d, q)
		}
	})
}

// A session statement that ran on the default data source and failed on
// another leaves the conns different: the conn runs nothing more and is
// retired.
func TestPartialSessionStatementRetiresConn(t *testing.T) {
	ctx := context.Background()
	log := &fkLog{}
	sources, _, ds1 := fakeSources(log, true)
	ds1.execErr = errors.New("read-only variable")
	db := openRouted(t, sources, spRoute("ds_0"), WithDialect(MySQL))
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "ds_1: SELECT 1") // opens ds_1
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if _, err := conn.ExecContext(ctx, "SET @u := 1"); err == nil || !strings.Contains(err.Error(), "retired") {
		t.Fatalf("SET failing on ds_1 after ds_0: %v, want the conn retired", err)
	}
	if _, err := conn.ExecContext(ctx, "UPDATE after"); !errors.Is(err, driver.ErrBadConn) {
		t.Errorf("statement on the retired conn: %v, want driver.ErrBadConn", err)
	}
	if slices.Contains(log.of("ds_0"), "exec UPDATE after") {
		t.Errorf("a statement ran on the retired conn: %q", log.of("ds_0"))
	}
}
