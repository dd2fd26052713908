package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// captureStdout runs f with os.Stdout redirected and returns what it wrote
// (run prints with fmt.Printf).
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	ferr := f()
	os.Stdout = saved
	w.Close()
	out := <-done
	r.Close()
	return string(out), ferr
}

func TestRunSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	out, err := captureStdout(t, func() error {
		return run(context.Background(), path, "sharding.yaml")
	})
	t.Logf("output:\n%s", out)
	if err != nil {
		t.Fatalf("run: %v", err)
	}

	if !regexp.MustCompile(`(?m)^user (\d+), post (\d+) by user (\d+)$`).MatchString(out) {
		t.Errorf("no user/post line in the output")
	}
	if m := regexp.MustCompile(`(?m)^user (\d+), post \d+ by user (\d+)$`).FindStringSubmatch(out); m != nil && m[1] != m[2] {
		t.Errorf("post's author %s is not user %s", m[2], m[1])
	}

	// "order <id> (table orders_<n>): amount <a>": the table printed is id % 4.
	printed := map[int64]struct {
		table  int
		amount int64
	}{}
	for _, m := range regexp.MustCompile(`(?m)^order (\d+) \(table orders_(\d)\): amount (\d+)$`).FindAllStringSubmatch(out, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		table, _ := strconv.Atoi(m[2])
		amount, _ := strconv.ParseInt(m[3], 10, 64)
		if int(id%4) != table {
			t.Errorf("order %d printed as in orders_%d", id, table)
		}
		printed[id] = struct {
			table  int
			amount int64
		}{table, amount}
	}
	if len(printed) != 3 {
		t.Fatalf("%d orders printed, want 3", len(printed))
	}

	// Read the physical tables without sqlhook: every order is in
	// orders_<id % 4>, with the amount printed.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	found := 0
	for table := 0; table < 4; table++ {
		rows, err := db.Query(fmt.Sprintf(`SELECT id, amount FROM orders_%d`, table))
		if err != nil {
			t.Fatalf("orders_%d: %v", table, err)
		}
		for rows.Next() {
			var id, amount int64
			if err := rows.Scan(&id, &amount); err != nil {
				t.Fatal(err)
			}
			found++
			if int(id%4) != table {
				t.Errorf("order %d is in orders_%d, want orders_%d", id, table, id%4)
			}
			p, ok := printed[id]
			if !ok || p.table != table || p.amount != amount {
				t.Errorf("orders_%d holds order %d amount %d; printed: %+v (%v)", table, id, amount, p, ok)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	if found != 3 {
		t.Errorf("%d orders in the physical tables, want 3", found)
	}
	if _, err := db.Exec(`SELECT 1 FROM orders`); err == nil {
		t.Error("a physical table named orders exists")
	}
	// users and posts are ordinary tables.
	for _, table := range []string{"users", "posts"} {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d rows, %v; want 1", table, n, err)
		}
	}
}

// TestRunTwice: a second start on the same database migrates again (ent's
// migration on the physical tables finds them) and adds three orders; the
// user is found, not created again.
func TestRunTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	for round := 1; round <= 2; round++ {
		if out, err := captureStdout(t, func() error { return run(context.Background(), path, "") }); err != nil {
			t.Fatalf("run %d: %v\n%s", round, err, out)
		}
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	total := 0
	for table := 0; table < 4; table++ {
		var n int
		if err := db.QueryRow(fmt.Sprintf(`SELECT COUNT(*) FROM orders_%d`, table)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		total += n
		// Each physical table has its own index on user_id.
		var idx int
		if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name = ?`,
			fmt.Sprintf("orders_%d", table), fmt.Sprintf("order_user_id_orders_%d", table)).Scan(&idx); err != nil || idx != 1 {
			t.Errorf("orders_%d: index order_user_id_orders_%d: %d, %v", table, table, idx, err)
		}
	}
	if total != 6 {
		t.Errorf("%d orders after two runs, want 6", total)
	}
	var users int
	if err := db.QueryRow(`SELECT COUNT(*) FROM users`).Scan(&users); err != nil || users != 1 {
		t.Errorf("users: %d, %v; want 1", users, err)
	}
}
