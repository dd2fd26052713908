package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// seedOrders stores orders 2 and 4 of user 0 in ds_0 and 3 and 5 of user
// 1 in ds_1, directly.
func seedOrders(t *testing.T, b txBackend) {
	t.Helper()
	for i, ids := range [][]int64{{2, 4}, {3, 5}} {
		for _, id := range ids {
			mustExecDB(t, b.direct(t, i), b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), id, i)
		}
	}
}

// scatterValues runs a scatter read of every order with expr as second
// column and returns order id -> the column's text.
func scatterValues(t *testing.T, conn *sql.Conn, expr string) map[int64]string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), `SELECT order_id, `+expr+` FROM t_order`)
	if err != nil {
		t.Fatalf("scatter read of %s: %v", expr, err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var v sql.NullString
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out[id] = v.String
		if !v.Valid {
			out[id] = "NULL"
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantEvery(t *testing.T, got map[int64]string, want string) {
	t.Helper()
	if len(got) != 4 {
		t.Errorf("scatter read returned %d orders (%v), want 4", len(got), got)
	}
	for id, v := range got {
		if v != want {
			t.Errorf("order %d sees %s, want %s (every data source must have the session's value)", id, v, want)
		}
	}
}

// A session variable set on a connection with two data sources reaches
// both: the data source opened after the SET gets it replayed, one open
// at the time of the SET gets it too, and a scatter read sees the same
// value everywhere.
func TestSessionVariablesReachEveryDataSource(t *testing.T) {
	ctx := context.Background()
	for _, b := range txBackends(t, "sessvar") {
		var set1, set2, read string
		switch b.name {
		case "mariadb":
			set1, set2, read = `SET @u := 1`, `SET @u = ?`, `@u`
		case "postgres":
			set1, set2, read = `SET app.u = '1'`, `SET app.u TO '2'`, `current_setting('app.u')`
		case "sqlite":
			set1, set2, read = `PRAGMA case_sensitive_like = 1`, `PRAGMA case_sensitive_like = 0`, `CASE WHEN 'a' LIKE 'A' THEN 'insensitive' ELSE 'sensitive' END`
		}
		t.Run(b.name, func(t *testing.T) {
			seedOrders(t, b)
			db := b.open(t, sqlhook.WithScatter())
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, set1); err != nil { // only ds_0 is open
				t.Fatal(err)
			}
			want1, want2 := "1", "2"
			if b.name == "sqlite" {
				want1, want2 = "sensitive", "insensitive"
			}
			wantEvery(t, scatterValues(t, conn, read), want1)
			var args []any
			if b.name == "mariadb" {
				args = []any{2}
			}
			if _, err := conn.ExecContext(ctx, set2, args...); err != nil { // both open
				t.Fatal(err)
			}
			wantEvery(t, scatterValues(t, conn, read), want2)
			if b.name == "mariadb" {
				// A prepared SET reaches every data source as well.
				st, err := conn.PrepareContext(ctx, `SET @u = ?`)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				if _, err := st.ExecContext(ctx, 3); err != nil {
					t.Fatal(err)
				}
				wantEvery(t, scatterValues(t, conn, read), "3")
			}
		})
	}
}

// Statements whose session state sqlhook cannot keep the same on every
// data source are refused before anything is sent, on a connection with
// two data sources.
func TestSessionStateRefusedAcrossDataSources(t *testing.T) {
	ctx := context.Background()
	refused := map[string][]string{
		"mariadb": {
			`SELECT @x := 1`,
			`SELECT 1 INTO @x`,
			`SET @x := NOW()`,
			`SET @x = (SELECT max(order_id) FROM t_note)`,
			`SET GLOBAL max_connections = 200`,
			`SET autocommit = 0`,
			`SET TRANSACTION ISOLATION LEVEL SERIALIZABLE`,
			`USE mysql`,
			`CREATE TEMPORARY TABLE tmp (a INT)`,
			`SELECT LAST_INSERT_ID()`,
			`START TRANSACTION`,
			`BEGIN`,
			`LOCK TABLES t_note WRITE`,
			`PREPARE s FROM 'SELECT 1'`,
			`SET @x := 1; SELECT 1`,
			`/*!40101 SET @x := (SELECT 1) */`,
			`SAVEPOINT outside`,
		},
		"postgres": {
			`CREATE TEMP TABLE tmp (a int)`,
			`CREATE TEMPORARY TABLE tmp AS SELECT 1 AS a`,
			`SELECT 1 AS a INTO TEMP tmp`,
			`SELECT set_config('app.u', '1', false)`,
			`SELECT lastval()`,
			`BEGIN`,
			`COMMIT`,
			`DISCARD ALL`,
			`SET TRANSACTION ISOLATION LEVEL SERIALIZABLE`,
			`PREPARE s AS SELECT 1`,
		},
		"sqlite": {
			`CREATE TEMP TABLE tmp (a int)`,
			`CREATE TABLE temp.tmp (a int)`,
			`ATTACH DATABASE ':memory:' AS other`,
			`SELECT last_insert_rowid()`,
			`BEGIN`,
			`PRAGMA foreign_keys(1)`,
		},
	}
	for _, b := range txBackends(t, "sessrefuse") {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, sqlhook.WithScatter())
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			for _, q := range refused[b.name] {
				if _, err := conn.ExecContext(ctx, q); !errors.Is(err, sqlhook.ErrSessionState) || !errors.Is(err, sqlhook.ErrUnsupported) {
					t.Errorf("%s: %v, want ErrSessionState (and ErrUnsupported)", q, err)
				}
			}
			if b.name == "mariadb" {
				// Nothing ran: @x is still NULL on the default data source.
				var x sql.NullInt64
				if err := conn.QueryRowContext(ctx, `SELECT @x`).Scan(&x); err != nil || x.Valid {
					t.Errorf("SELECT @x after refusals: %v, %v; want NULL", x, err)
				}
			}
			// A SET in a transaction is transactional on PostgreSQL, a
			// pragma may be ignored there on SQLite: refused; SET LOCAL
			// is fine.
			if b.name == "sqlite" {
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(`PRAGMA foreign_keys = ON`); !errors.Is(err, sqlhook.ErrSessionState) {
					t.Errorf("PRAGMA in a transaction: %v, want ErrSessionState", err)
				}
				tx.Rollback()
			}
			if b.name == "postgres" {
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(`SET app.u = '1'`); !errors.Is(err, sqlhook.ErrSessionState) {
					t.Errorf("SET in a transaction: %v, want ErrSessionState", err)
				}
				if _, err := tx.Exec(`SET LOCAL app.u = '1'`); err != nil {
					t.Errorf("SET LOCAL in a transaction: %v", err)
				}
				tx.Rollback()
			}
		})
	}
}

// SET LOCAL in a transaction across data sources reaches a data source
// that joins later, and a ROLLBACK TO takes it back on every one.
func TestSetLocalReplayedToLateJoiningDataSource(t *testing.T) {
	ctx := context.Background()
	b := txBackends(t, "setlocal")[0] // PostgreSQL
	seedOrders(t, b)
	db := b.open(t, sqlhook.WithScatter(), sqlhook.WithMultiSourceTx())
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustTx(t, tx, `SET LOCAL app.u = 'before'`) // pending: no data source yet
	mustTx(t, tx, `SELECT 1`)                   // ds_0 begins
	mustTx(t, tx, `SAVEPOINT sp`)
	mustTx(t, tx, `SET LOCAL app.u = 'after'`)
	mustTx(t, tx, `ROLLBACK TO SAVEPOINT sp`)
	rows, err := tx.Query(`SELECT order_id, current_setting('app.u', true) FROM t_order`) // ds_1 joins
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for rows.Next() {
		var id int64
		var v sql.NullString
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		got[id] = v.String
	}
	rows.Close()
	wantEvery(t, got, "before")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// A pooled connection that carries session state is not handed out
// again (the driver may or may not have reset its state, so the record
// of what each data source has could be wrong): the next user gets a
// fresh connection, the same on every data source.
func TestPooledConnWithSessionStateIsNotReused(t *testing.T) {
	b := txBackends(t, "sessreset")[1] // MariaDB
	seedOrders(t, b)
	db := b.open(t, sqlhook.WithScatter())
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`SET @u := 9`); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wantEvery(t, scatterValues(t, conn, `@u`), "NULL")
}

// With one data source nothing is classified: statements that would be
// refused across data sources run as on the driver.
func TestSingleDataSourceSessionStatementsPassThrough(t *testing.T) {
	ctx := context.Background()
	b := txBackends(t, "sessone")[1] // MariaDB
	cfg, err := shardconf.Parse(fmt.Appendf(nil, `
dataSources:
  ds_0: {driver: mysql, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order
`, b.dsn[0]))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var x int
	if err := conn.QueryRowContext(ctx, `SELECT @x := 5`).Scan(&x); err != nil || x != 5 {
		t.Fatalf("SELECT @x := 5 on one data source: %d, %v", x, err)
	}
	if _, err := conn.ExecContext(ctx, `CREATE TEMPORARY TABLE tmp (a INT)`); err != nil {
		t.Errorf("CREATE TEMPORARY TABLE on one data source: %v", err)
	}
}
