package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// checkPlacement reads every physical table directly and checks that each
// row is where the rules put it (user_id % 2 → ds_N, order_id % 4 →
// t_order_N) and that no key repeats; it returns the number of rows.
func checkPlacement(t *testing.T, open func(ds string) *sql.DB) int {
	t.Helper()
	seen := map[int64]string{}
	for d := 0; d < 2; d++ {
		db := open(fmt.Sprintf("ds_%d", d))
		for tbl := 0; tbl < 4; tbl++ {
			rows, err := db.Query(fmt.Sprintf("SELECT order_id, user_id FROM t_order_%d", tbl))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var id, user int64
				if err := rows.Scan(&id, &user); err != nil {
					t.Fatal(err)
				}
				where := fmt.Sprintf("ds_%d.t_order_%d", d, tbl)
				if user%2 != int64(d) || id%4 != int64(tbl) {
					t.Fatalf("order %d of user %d is in %s", id, user, where)
				}
				if prev, dup := seen[id]; dup {
					t.Fatalf("order id %d in %s and %s", id, prev, where)
				}
				seen[id] = where
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if n == 0 {
				t.Errorf("ds_%d.t_order_%d is empty", d, tbl)
			}
		}
	}
	return len(seen)
}

var totalLine = regexp.MustCompile(`(?m)^  total +(\d+)$`)

// runTwice runs the quickstart twice on the same data sources (the
// set-up is idempotent) and checks the report of each run.
func runTwice(t *testing.T, c config, open func(ds string) *sql.DB) {
	t.Helper()
	for round := 1; round <= 2; round++ {
		var out bytes.Buffer
		if err := run(context.Background(), c, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", round, err, out.String())
		}
		report := out.String()
		for _, want := range []string{
			"rules: t_order in 2 data sources × 4 tables",
			"created (if missing) 8 physical tables of t_order",
			fmt.Sprintf("inserted %d orders in ", c.orders),
			"read 6 orders back by key",
			"scatter over 4 tables of ds_",
			"scatter over all 8 tables of ds_0 and ds_1: ",
			"refused, as it should be: a query by order_id alone",
			"missing sharding key",
			", worker 3, sequence ",
		} {
			if !strings.Contains(report, want) {
				t.Errorf("run %d: the report lacks %q:\n%s", round, want, report)
			}
		}
		m := totalLine.FindStringSubmatch(report)
		if m == nil {
			t.Fatalf("run %d: no total in the report:\n%s", round, report)
		}
		if total, _ := strconv.Atoi(m[1]); total != round*c.orders {
			t.Errorf("run %d: report total %d, want %d", round, total, round*c.orders)
		}
		if n := checkPlacement(t, open); n != round*c.orders {
			t.Errorf("run %d: %d rows in the tables, want %d", round, n, round*c.orders)
		}
	}
}

func openSQL(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestQuickstartSQLite(t *testing.T) {
	dir := t.TempDir()
	c := config{dir: dir, orders: 3000, batch: 250, worker: 3}
	runTwice(t, c, func(ds string) *sql.DB { return openSQL(t, "sqlite", filepath.Join(dir, ds+".db")) })
}

func TestQuickstartPostgres(t *testing.T) {
	dsn0 := dbtest.Postgres(t, "quickstart_ds_0")
	dbtest.Postgres(t, "quickstart_ds_1")
	tmpl := strings.Replace(dsn0, "quickstart_ds_0", "quickstart_{ds}", 1)
	c := config{dsn: tmpl, orders: 2000, batch: 300, worker: 3}
	runTwice(t, c, func(ds string) *sql.DB {
		return openSQL(t, "pgx", strings.ReplaceAll(tmpl, "{ds}", ds))
	})
}

func TestQuickstartMySQL(t *testing.T) {
	dsn0 := dbtest.MySQL(t, "quickstart_ds_0")
	dbtest.MySQL(t, "quickstart_ds_1")
	tmpl := strings.Replace(dsn0, "quickstart_ds_0", "quickstart_{ds}", 1)
	c := config{dsn: tmpl, orders: 2000, batch: 300, worker: 3}
	runTwice(t, c, func(ds string) *sql.DB {
		return openSQL(t, "mysql", strings.ReplaceAll(tmpl, "{ds}", ds))
	})
}

// TestQuickstartCreatesDatabases: a -dsn naming databases that do not
// exist yet gets them created.
func TestQuickstartCreatesDatabases(t *testing.T) {
	dsn := dbtest.Postgres(t, "quickstart_admin") // only to learn the server's address
	admin := openSQL(t, "pgx", dsn)
	for _, ds := range []string{"ds_0", "ds_1"} {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS shardkey_quickstart_new_" + ds + " WITH (FORCE)"); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := strings.Replace(dsn, "quickstart_admin", "quickstart_new_{ds}", 1)
	var out bytes.Buffer
	if err := run(context.Background(), config{dsn: tmpl, orders: 100, batch: 50, worker: 3}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Cleanup(func() {
		for _, ds := range []string{"ds_0", "ds_1"} {
			admin.Exec("DROP DATABASE IF EXISTS shardkey_quickstart_new_" + ds + " WITH (FORCE)")
		}
	})
	if !strings.Contains(out.String(), "PostgreSQL database shardkey_quickstart_new_ds_1") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestQuickstartErrors(t *testing.T) {
	for _, c := range []config{
		{dsn: "postgres://127.0.0.1/x", orders: 1, batch: 1, worker: 1},         // no {ds}
		{dir: t.TempDir(), orders: 1, batch: 1, worker: 5000},                   // worker id out of range
		{dir: t.TempDir(), orders: 1, batch: 0, worker: 1},                      // batch
		{dir: t.TempDir(), rules: "testdata/missing.yaml", orders: 1, batch: 1}, // no such file
	} {
		if err := run(context.Background(), c, &bytes.Buffer{}); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
