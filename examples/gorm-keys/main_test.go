package main

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest" // registers "pgx"
	"github.com/shardkey/shardkey/keygen"
)

var (
	customerLine = regexp.MustCompile(`(?m)^ *customer (\d+): (\w+)$`)
	orderLine    = regexp.MustCompile(`(?m)^  order (\d+): customer (\d+), amount (\d+)$`)
	decodedLine  = regexp.MustCompile(`(?m)^decoded (\d+): time (\S+), worker (\d+), sequence (\d+)$`)
	rowsLine     = regexp.MustCompile(`(?m)^rows: customers (\d+), orders (\d+)$`)
)

func TestSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	testDatabase(t, "sqlite", path, "sqlite", path)
}

func TestPostgres(t *testing.T) {
	dsn := dbtest.Postgres(t, "ex_gorm_keys")
	testDatabase(t, "postgres", dsn, "pgx", dsn)
}

func TestMySQL(t *testing.T) {
	dsn := dbtest.MySQL(t, "ex_gorm_keys")
	testDatabase(t, "mysql", dsn, "mysql", dsn)
}

// TestDefault runs the example as `go run` does: a SQLite file in a
// temporary directory, worker 1.
func TestDefault(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), config{Worker: 1}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "database: sqlite\n") || !strings.Contains(out.String(), "rows: customers 6, orders 2\n") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestBadWorker(t *testing.T) {
	err := run(context.Background(), config{DSN: filepath.Join(t.TempDir(), "x.db"), Worker: 5000}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "worker-id") {
		t.Fatalf("worker 5000: %v", err)
	}
}

// testDatabase runs the example twice on one database (the set-up is
// idempotent, the rows add up) and checks its output against the tables.
func testDatabase(t *testing.T, kind, dsn, driver, sqlDSN string) {
	const worker = 5
	ctx := context.Background()
	db, err := sql.Open(driver, sqlDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	for round := 1; round <= 2; round++ {
		var out bytes.Buffer
		if err := run(ctx, config{DSN: dsn, Worker: worker}, &out); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, out.String())
		}
		text := out.String()
		t.Logf("round %d:\n%s", round, text)
		if !strings.HasPrefix(text, "database: "+kind+"\n") {
			t.Fatalf("database line: %q", text)
		}

		// Six customers: Ada, then a batch of five with ascending keys.
		cs := customerLine.FindAllStringSubmatch(text, -1)
		names := []string{"Ada", "Grace", "Edsger", "Barbara", "Donald", "Frances"}
		if len(cs) != len(names) {
			t.Fatalf("customers: %q", cs)
		}
		ids := map[int64]string{}
		var prev int64
		for i, c := range cs {
			id := atoi(t, c[1])
			if c[2] != names[i] || id <= prev {
				t.Fatalf("customer %d: %q after key %d", i, c, prev)
			}
			prev = id
			ids[id] = c[2]
		}
		ada := atoi(t, cs[0][1])

		// Ada's orders carry her key, and their own keys were issued after it.
		ols := orderLine.FindAllStringSubmatch(text, -1)
		if len(ols) != 2 {
			t.Fatalf("orders: %q", ols)
		}
		orders := map[int64]int64{}
		for _, o := range ols {
			id, cust := atoi(t, o[1]), atoi(t, o[2])
			if cust != ada || id <= ada {
				t.Fatalf("order %q of customer %d", o, ada)
			}
			orders[id] = atoi(t, o[3])
		}

		// The decoded key names this worker; its time is the key's.
		d := decodedLine.FindStringSubmatch(text)
		if d == nil || atoi(t, d[1]) != ada || d[3] != strconv.Itoa(worker) {
			t.Fatalf("decoded line: %q", d)
		}
		at, err := time.Parse(time.RFC3339Nano, d[2])
		if err != nil || time.Since(at).Abs() > time.Hour {
			t.Fatalf("decoded time %q: %v", d[2], err)
		}
		layout, _ := keygen.LayoutFor("SNOWFLAKE", nil)
		for id := range ids {
			if p, err := layout.Decompose(id); err != nil || p.Worker != worker {
				t.Fatalf("key %d: worker %d, %v", id, p.Worker, err)
			}
		}

		r := rowsLine.FindStringSubmatch(text)
		if r == nil || atoi(t, r[1]) != int64(6*round) || atoi(t, r[2]) != int64(2*round) {
			t.Fatalf("rows line after round %d: %q", round, r)
		}

		// The rows are in the database with the printed keys.
		for id, name := range ids {
			var got string
			if err := db.QueryRowContext(ctx, rebind(driver, "SELECT name FROM customers WHERE id = ?"), id).Scan(&got); err != nil || got != name {
				t.Fatalf("customer %d: %q, %v", id, got, err)
			}
		}
		for id, amount := range orders {
			var cust, amt int64
			if err := db.QueryRowContext(ctx, rebind(driver, "SELECT customer_id, amount FROM orders WHERE id = ?"), id).Scan(&cust, &amt); err != nil || cust != ada || amt != amount {
				t.Fatalf("order %d: customer %d amount %d, %v", id, cust, amt, err)
			}
		}
	}

	// The key columns are plain integers: no auto-increment, identity or
	// sequence default.
	for _, table := range []string{"customers", "orders"} {
		switch driver {
		case "sqlite":
			var ddl string
			if err := db.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE name = ?", table).Scan(&ddl); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.ToUpper(ddl), "AUTOINCREMENT") {
				t.Fatalf("%s: %s", table, ddl)
			}
		case "pgx":
			var typ, identity string
			var def sql.NullString
			err := db.QueryRowContext(ctx, `SELECT data_type, is_identity, column_default FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'id'`, table).Scan(&typ, &identity, &def)
			if err != nil || typ != "bigint" || identity != "NO" || def.Valid {
				t.Fatalf("%s.id: %s identity %s default %v, %v", table, typ, identity, def, err)
			}
		case "mysql":
			var typ, extra string
			err := db.QueryRowContext(ctx, `SELECT data_type, extra FROM information_schema.columns
				WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'id'`, table).Scan(&typ, &extra)
			if err != nil || typ != "bigint" || strings.Contains(strings.ToLower(extra), "auto_increment") {
				t.Fatalf("%s.id: %s %q, %v", table, typ, extra, err)
			}
		}
	}
}

func rebind(driver, q string) string {
	if driver != "pgx" {
		return q
	}
	return strings.Replace(q, "?", "$1", 1)
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
