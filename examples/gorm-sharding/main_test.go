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

	"github.com/shardkey/shardkey/internal/dbtest" // registers "pgx"
	"github.com/shardkey/shardkey/keygen"
)

var (
	orderLine   = regexp.MustCompile(`(?m)^order (\d+): user (\d+), amount (\d+), (\w+) -> (ds_\d)\.(t_order_\d)$`)
	updatedLine = regexp.MustCompile(`(?m)^updated order (\d+): shipped$`)
	tableLine   = regexp.MustCompile(`(?m)^(ds_\d)\.(t_order_\d): (\d+) rows$`)
)

// The lines that do not depend on keys.
var fixedLines = []string{
	"t_order: sharded by user_id, order_id over ds_0.t_order_0, ds_0.t_order_1, ds_1.t_order_0, ds_1.t_order_1\n",
	"batch for users 1 and 2: refused, unsupported (",
	"user 3, 3 order ids: 3 orders, amounts [300 301 302]\n",
	"status = paid: refused, missing sharding key (",
	"user_id = 3 alone: refused, missing sharding key (",
	"alone: refused, missing sharding key (",
	"scatter user_id = 3, paid, largest: amounts [302]\n",
	"scatter status = paid over both databases: ",
	"update status = paid over both databases: refused, unsupported (",
}

func TestSQLite(t *testing.T) {
	dir := t.TempDir()
	cfg := config{Dir: dir, Worker: 6}
	testDatabases(t, cfg, "sqlite", []string{filepath.Join(dir, "ds_0.db"), filepath.Join(dir, "ds_1.db")})
}

func TestPostgres(t *testing.T) {
	dsns := []string{dbtest.Postgres(t, "ex_gorm_shard_0"), dbtest.Postgres(t, "ex_gorm_shard_1")}
	testDatabases(t, config{DSNs: dsns, Worker: 6}, "pgx", dsns)
}

func TestMySQL(t *testing.T) {
	dsns := []string{dbtest.MySQL(t, "ex_gorm_shard_0"), dbtest.MySQL(t, "ex_gorm_shard_1")}
	testDatabases(t, config{DSNs: dsns, Worker: 6}, "mysql", dsns)
}

// TestDefault runs the example as `go run` does, and with the rule file
// named instead of the built-in copy.
func TestDefault(t *testing.T) {
	for _, rules := range []string{"", "sharding.yaml"} {
		var out bytes.Buffer
		if err := run(context.Background(), config{Rules: rules, Worker: 1}, &out); err != nil {
			t.Fatalf("rules %q: %v\n%s", rules, err, out.String())
		}
		if !strings.HasPrefix(out.String(), "data source ds_0: sqlite\ndata source ds_1: sqlite\n") || !strings.HasSuffix(out.String(), "t_order: 12 rows\n") {
			t.Fatalf("rules %q, output:\n%s", rules, out.String())
		}
	}
}

// testDatabases runs the example twice on the same two databases (the
// set-up is idempotent, the rows add up) and checks every printed order
// against the physical table its user_id and order_id select.
func testDatabases(t *testing.T, cfg config, driver string, dsns []string) {
	ctx := context.Background()
	var dbs []*sql.DB
	for _, dsn := range dsns {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs = append(dbs, db)
	}
	layout, _ := keygen.LayoutFor("SNOWFLAKE", nil)
	type order struct{ user, amount int64 }
	all := map[int64]order{}
	for round := 1; round <= 2; round++ {
		var out bytes.Buffer
		if err := run(ctx, cfg, &out); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, out.String())
		}
		text := out.String()
		t.Logf("round %d:\n%s", round, text)
		for _, l := range fixedLines {
			if !strings.Contains(text, l) {
				t.Errorf("output lacks %q", l)
			}
		}

		scatter3 := "scatter user_id = 3 (ds_1.t_order_0, ds_1.t_order_1): 3 orders, amounts [300 301 302]\n"
		if round == 2 {
			scatter3 = "scatter user_id = 3 (ds_1.t_order_0, ds_1.t_order_1): 6 orders, amounts [300 300 301 301 302 302]\n"
		}
		if !strings.Contains(text, scatter3) {
			t.Errorf("output lacks %q", scatter3)
		}

		// Every order is where its user_id (database) and order_id (table)
		// say, and only there.
		lines := orderLine.FindAllStringSubmatch(text, -1)
		if len(lines) != 12 {
			t.Fatalf("%d order lines", len(lines))
		}
		for _, l := range lines {
			id, user, amount := atoi(t, l[1]), atoi(t, l[2]), atoi(t, l[3])
			ds, table := int(user%2), fmt.Sprintf("t_order_%d", id%2)
			if l[5] != fmt.Sprintf("ds_%d", ds) || l[6] != table {
				t.Fatalf("order %d of user %d printed in %s.%s", id, user, l[5], l[6])
			}
			if p, err := layout.Decompose(id); err != nil || p.Worker != int64(cfg.Worker) {
				t.Fatalf("order %d: worker %d, %v", id, p.Worker, err)
			}
			all[id] = order{user, amount}
			for d, db := range dbs {
				for tb := 0; tb < 2; tb++ {
					phys := fmt.Sprintf("t_order_%d", tb)
					var u, a int64
					err := db.QueryRowContext(ctx, rebind(driver, "SELECT user_id, amount FROM "+phys+" WHERE order_id = ?"), id).Scan(&u, &a)
					here := d == ds && phys == table
					switch {
					case here && (err != nil || u != user || a != amount):
						t.Fatalf("order %d in ds_%d.%s: user %d amount %d, %v", id, d, phys, u, a, err)
					case !here && err != sql.ErrNoRows:
						t.Fatalf("order %d also in ds_%d.%s (%v)", id, d, phys, err)
					}
				}
			}
		}

		// The updated order is shipped in its table.
		up := updatedLine.FindStringSubmatch(text)
		if up == nil {
			t.Fatal("no update line")
		}
		id := atoi(t, up[1])
		o := all[id]
		var status string
		q := rebind(driver, fmt.Sprintf("SELECT status FROM t_order_%d WHERE order_id = ?", id%2))
		if err := dbs[o.user%2].QueryRowContext(ctx, q, id).Scan(&status); err != nil || status != "shipped" {
			t.Fatalf("updated order %d: %q, %v", id, status, err)
		}

		// The per-table counts are those of every round's orders.
		want := map[string]int64{}
		for id, o := range all {
			want[fmt.Sprintf("ds_%d.t_order_%d", o.user%2, id%2)]++
		}
		counts := tableLine.FindAllStringSubmatch(text, -1)
		if len(counts) != 4 {
			t.Fatalf("table lines: %q", counts)
		}
		for _, c := range counts {
			if n := atoi(t, c[3]); n != want[c[1]+"."+c[2]] {
				t.Fatalf("%s.%s: %d rows printed, %d created", c[1], c[2], n, want[c[1]+"."+c[2]])
			}
		}
		if !strings.HasSuffix(text, fmt.Sprintf("t_order: %d rows\n", 12*round)) {
			t.Fatalf("round %d: total line", round)
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
