package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// e2eRules is testdata/rules/two_sources.yaml (shared with the package's
// internal tests): t_order over two data sources by user_id and two
// tables each by order_id, t_order_item bound to it, t_dict broadcast,
// order_id generated. A fmt format: driver, DSN, driver, DSN.
var e2eRules = readTestdata("rules/two_sources.yaml")

// readTestdata is a file under testdata, read when the tests start.
func readTestdata(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

type e2eRow struct{ orderID, userID int64 }

type backend struct {
	name, driver string
	dsn          [2]string
	dollar       bool // $n placeholders
}

func backends(t *testing.T) []backend {
	dir := t.TempDir()
	return []backend{
		{name: "postgres", driver: "pgx", dollar: true,
			dsn: [2]string{dbtest.Postgres(t, "sqlhook_e2e_0"), dbtest.Postgres(t, "sqlhook_e2e_1")}},
		{name: "mariadb", driver: "mysql",
			dsn: [2]string{dbtest.MySQL(t, "sqlhook_e2e_0"), dbtest.MySQL(t, "sqlhook_e2e_1")}},
		{name: "sqlite", driver: "sqlite",
			dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}},
	}
}

// q spells ? placeholders as $1, $2, ... for PostgreSQL.
func (b backend) q(s string) string {
	if !b.dollar {
		return s
	}
	var out strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			fmt.Fprintf(&out, "$%d", n)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

func (b backend) config(t *testing.T) *shardconf.Config {
	t.Helper()
	cfg, err := shardconf.Parse(fmt.Appendf(nil, e2eRules, b.driver, b.dsn[0], b.driver, b.dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// direct opens data source i without sqlhook, to check what landed where.
func (b backend) direct(t *testing.T, i int) *sql.DB {
	t.Helper()
	db, err := sql.Open(b.driver, b.dsn[i])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestEndToEnd(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { endToEnd(t, b) })
	}
}

func endToEnd(t *testing.T, b backend) {
	ctx := context.Background()
	db, err := sqlhook.Open(b.config(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	scatter, err := sqlhook.Open(b.config(t), sqlhook.WithScatter())
	if err != nil {
		t.Fatal(err)
	}
	defer scatter.Close()
	d0, d1 := b.direct(t, 0), b.direct(t, 1)

	// DDL reaches every physical table.
	for _, ddl := range []string{
		`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(64), amount INT)`,
		`CREATE TABLE t_order_item (item_id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL, user_id BIGINT NOT NULL, sku VARCHAR(16))`,
		`CREATE TABLE t_dict (k VARCHAR(16) PRIMARY KEY, v VARCHAR(16))`,
		`CREATE INDEX idx_status ON t_order (status)`,
	} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	for _, direct := range []*sql.DB{d0, d1} {
		for _, tbl := range []string{"t_order_0", "t_order_1", "t_order_item_0", "t_order_item_1", "t_dict"} {
			count(t, direct, tbl) // fails when the table is missing
		}
	}

	// A multi-row INSERT without keys: keys are generated, rows split by
	// target, and each row lands where its sharding values say.
	res, err := db.ExecContext(ctx, b.q(`INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?), (?, ?, ?)`),
		1, "new", 10, 2, "new", 20, 3, "t_order", 30, 4, "paid", 40)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 4 {
		t.Errorf("rows affected %d, want 4", n)
	}
	more := 0
	for u := int64(1); u <= 8; u++ {
		if _, err := db.ExecContext(ctx, b.q(`INSERT INTO t_order (user_id, status, amount) VALUES (?, 'more', ?)`), u, u*100); err != nil {
			t.Fatal(err)
		}
		more++
	}
	total := 0
	var all []e2eRow
	for ds, direct := range []*sql.DB{d0, d1} {
		for tb := range 2 {
			rows, err := direct.Query(fmt.Sprintf("SELECT order_id, user_id FROM t_order_%d", tb))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var r e2eRow
				if err := rows.Scan(&r.orderID, &r.userID); err != nil {
					t.Fatal(err)
				}
				if r.userID%2 != int64(ds) || r.orderID%2 != int64(tb) {
					t.Errorf("row %+v is in ds_%d.t_order_%d", r, ds, tb)
				}
				all = append(all, r)
				total++
			}
			rows.Close()
		}
	}
	if total != 4+more {
		t.Fatalf("%d rows stored, want %d", total, 4+more)
	}

	// A point SELECT finds each row; a literal equal to a table name is data.
	for _, r := range all {
		var uid int64
		if err := db.QueryRowContext(ctx, b.q(`SELECT user_id FROM t_order WHERE user_id = ? AND order_id = ?`), r.userID, r.orderID).Scan(&uid); err != nil {
			t.Fatalf("point select %+v: %v", r, err)
		}
	}
	var status string
	if err := db.QueryRowContext(ctx, b.q(`SELECT status FROM t_order /* t_order */ WHERE user_id = ? AND status = 't_order' AND order_id IN (?, ?)`),
		3, idsOf(all, 3)[0], idsOf(all, 3)[1]).Scan(&status); err != nil || status != "t_order" {
		t.Errorf("literal t_order: %q, %v", status, err)
	}

	// A value is data, whatever it spells.
	evil := "x'); DROP TABLE t_order_0; --"
	if _, err := db.ExecContext(ctx, b.q(`INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, 0)`), 9, evil); err != nil {
		t.Fatal(err)
	}
	var back string
	if err := scatter.QueryRowContext(ctx, b.q(`SELECT status FROM t_order WHERE user_id = ? AND status = ?`), 9, evil).Scan(&back); err != nil || back != evil {
		t.Errorf("injection text: %q, %v", back, err)
	}
	if _, err := db.ExecContext(ctx, b.q(`DELETE FROM t_order WHERE user_id = ? AND status = ?`), 9, evil); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("DELETE without order_id: %v", err)
	}
	if _, err := scatter.ExecContext(ctx, b.q(`DELETE FROM t_order WHERE user_id = ? AND status = ?`), 9, evil); err != nil {
		t.Fatal(err)
	}
	count(t, d1, "t_order_0") // still there

	// Without a sharding key: refused before anything runs, unless scatter.
	if _, err := db.QueryContext(ctx, `SELECT count(*) FROM t_order`); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("unkeyed SELECT: %v, want ErrMissingShardingKey", err)
	}
	var n, sum, lo, hi int64
	if err := scatter.QueryRowContext(ctx, `SELECT count(*), sum(amount), min(amount), max(amount) FROM t_order`).Scan(&n, &sum, &lo, &hi); err != nil {
		t.Fatal(err)
	}
	if n != int64(total) || sum != 10+20+30+40+3600 || lo != 10 || hi != 800 {
		t.Errorf("aggregates: count %d sum %d min %d max %d", n, sum, lo, hi)
	}
	rows, err := scatter.QueryContext(ctx, b.q(`SELECT amount, user_id FROM t_order ORDER BY amount DESC LIMIT ? OFFSET ?`), 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	var amounts []int64
	for rows.Next() {
		var a, u int64
		if err := rows.Scan(&a, &u); err != nil {
			t.Fatal(err)
		}
		amounts = append(amounts, a)
	}
	rows.Close()
	if fmt.Sprint(amounts) != "[700 600 500]" {
		t.Errorf("ORDER BY amount DESC LIMIT 3 OFFSET 1 = %v", amounts)
	}

	// UPDATE across targets sums rows affected; DELETE by key.
	ids := idsOf(all, 1)
	res, err = db.ExecContext(ctx, b.q(`UPDATE t_order SET status = ? WHERE user_id = ? AND order_id IN (?, ?)`), "done", 1, ids[0], ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("UPDATE affected %d, want 2", n)
	}
	if _, err := db.ExecContext(ctx, b.q(`UPDATE t_order SET user_id = 2 WHERE user_id = ? AND order_id = ?`), 1, ids[0]); !errors.Is(err, sqlhook.ErrUnsupported) {
		t.Errorf("UPDATE of a sharding column: %v", err)
	}

	// Binding tables JOIN on matching shards.
	for _, oid := range ids {
		if _, err := db.ExecContext(ctx, b.q(`INSERT INTO t_order_item (item_id, order_id, user_id, sku) VALUES (?, ?, ?, ?)`), oid+1, oid, 1, "sku"); err != nil {
			t.Fatal(err)
		}
	}
	var joined int
	if err := db.QueryRowContext(ctx, b.q(`SELECT count(*) FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id WHERE o.user_id = ? AND o.order_id IN (?, ?)`), 1, ids[0], ids[1]).Scan(&joined); err != nil {
		t.Fatal(err)
	}
	if joined != 2 {
		t.Errorf("binding JOIN found %d rows, want 2", joined)
	}

	// Broadcast: a write reaches every data source.
	if _, err := db.ExecContext(ctx, b.q(`INSERT INTO t_dict (k, v) VALUES (?, ?)`), "a", "b"); err != nil {
		t.Fatal(err)
	}
	if count(t, d0, "t_dict") != 1 || count(t, d1, "t_dict") != 1 {
		t.Error("broadcast INSERT did not reach both data sources")
	}

	// Prepared statements route at execution.
	stmt, err := db.PrepareContext(ctx, b.q(`SELECT user_id FROM t_order WHERE user_id = ? AND order_id = ?`))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all[:4] {
		var uid int64
		if err := stmt.QueryRowContext(ctx, r.userID, r.orderID).Scan(&uid); err != nil || uid != r.userID {
			t.Errorf("prepared %+v: %d, %v", r, uid, err)
		}
	}
	stmt.Close()

	// Transactions: one data source commits or rolls back as one; a second
	// data source is refused before the statement runs.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, b.q(`INSERT INTO t_order (user_id, status) VALUES (?, 'tx')`), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, b.q(`INSERT INTO t_order (user_id, status) VALUES (?, 'tx')`), 3); !errors.Is(err, sqlhook.ErrCrossSourceTx) {
		t.Errorf("second data source in a tx: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var txRows int
	if err := scatter.QueryRowContext(ctx, `SELECT count(*) FROM t_order WHERE status = 'tx'`).Scan(&txRows); err != nil || txRows != 0 {
		t.Errorf("rolled-back rows visible: %d, %v", txRows, err)
	}

	// RETURNING (PostgreSQL, SQLite) gives the generated key back.
	if b.driver != "mysql" {
		var oid int64
		if err := db.QueryRowContext(ctx, b.q(`INSERT INTO t_order (user_id, status) VALUES (?, 'ret') RETURNING order_id`), 6).Scan(&oid); err != nil || oid == 0 {
			t.Errorf("RETURNING: %d, %v", oid, err)
		}
	}
}

// idsOf lists the order ids of user u, sorted.
func idsOf(all []e2eRow, u int64) []int64 {
	var out []int64
	for _, r := range all {
		if r.userID == u {
			out = append(out, r.orderID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
