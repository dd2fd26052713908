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

	"github.com/shardkey/shardkey/internal/dbtest"
)

func TestSQLite(t *testing.T) {
	dsn := "file:" + filepath.Join(t.TempDir(), "orders.db")
	check(t, "sqlite", dsn)
}

func TestPostgres(t *testing.T) {
	check(t, "pgx", dbtest.Postgres(t, "ex_sqlx"))
}

// check runs the example and then reads the physical tables with a plain
// connection (no sqlhook): every row is in orders_<id % 4>.
func check(t *testing.T, driver, dsn string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), driver, dsn, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Logf("output:\n%s", out.String())
	for _, want := range []string{
		"NamedExec inserted 4 orders",
		"Get: order ",
		"Select id IN (...): 3 orders",
		"refused: shardconf: missing sharding key",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}

	// The ids the example printed, with the table it said they went to.
	printed := map[int64]int{}
	for _, m := range regexp.MustCompile(`order (\d+) -> orders_(\d)`).FindAllStringSubmatch(out.String(), -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		table, _ := strconv.Atoi(m[2])
		printed[id] = table
	}
	if len(printed) != 3 {
		t.Fatalf("printed %d RETURNING ids, want 3", len(printed))
	}

	plain, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	total, used := 0, 0
	found := map[int64]int{}
	for table := 0; table < 4; table++ {
		rows, err := plain.Query(fmt.Sprintf(`SELECT id FROM orders_%d`, table))
		if err != nil {
			t.Fatalf("orders_%d: %v", table, err)
		}
		n := 0
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			if id <= 0 {
				t.Errorf("orders_%d holds id %d: not a generated key", table, id)
			}
			if got := int(id % 4); got != table {
				t.Errorf("id %d is in orders_%d, want orders_%d", id, table, got)
			}
			found[id] = table
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		total += n
		if n > 0 {
			used++
		}
	}
	if total != 7 {
		t.Errorf("%d rows in the physical tables, want 7", total)
	}
	if used < 2 {
		t.Errorf("rows in %d physical tables, want them spread over at least 2", used)
	}
	for id, table := range printed {
		if got, ok := found[id]; !ok || got != table {
			t.Errorf("order %d printed as in orders_%d, found in orders_%d (present: %v)", id, table, got, ok)
		}
	}
	// The logic table itself was never created.
	if _, err := plain.Exec(`SELECT 1 FROM orders`); err == nil {
		t.Error("a physical table named orders exists")
	}
}
