package sqlhook_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/sqlhook"
)

// covBackends are the three databases, each as two data sources of
// e2eRules, in databases of this file's own (cov_ prefix).
func covBackends(t *testing.T, name string) []backend {
	dir := t.TempDir()
	return []backend{
		{name: "postgres", driver: "pgx", dollar: true,
			dsn: [2]string{dbtest.Postgres(t, "cov_"+name+"_0"), dbtest.Postgres(t, "cov_"+name+"_1")}},
		{name: "mariadb", driver: "mysql",
			dsn: [2]string{dbtest.MySQL(t, "cov_"+name+"_0"), dbtest.MySQL(t, "cov_"+name+"_1")}},
		{name: "sqlite", driver: "sqlite",
			dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}},
	}
}

// covWorld is a backend with t_order (sharded), t_dict (broadcast) and
// t_x (unsharded, on the default data source) created and filled through
// sqlhook, and both data sources open directly.
type covWorld struct {
	b      backend
	db     *sql.DB // sqlhook, WithScatter
	direct [2]*sql.DB
}

func openCovWorld(t *testing.T, b backend) covWorld {
	t.Helper()
	db, err := sqlhook.Open(b.config(t), sqlhook.WithScatter())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := covWorld{b: b, db: db, direct: [2]*sql.DB{b.direct(t, 0), b.direct(t, 1)}}
	for _, q := range []string{
		`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(16))`,
		`CREATE TABLE t_dict (k VARCHAR(16) PRIMARY KEY, v VARCHAR(16))`,
		`CREATE TABLE t_x (k VARCHAR(16) PRIMARY KEY, v VARCHAR(16))`,
		`INSERT INTO t_dict (k, v) VALUES ('a', '1'), ('b', '2')`,
		`INSERT INTO t_x (k, v) VALUES ('a', 'x')`,
		`INSERT INTO t_order (order_id, user_id, status) VALUES (10, 1, 'new'), (11, 1, 'new'), (20, 2, 'new'), (21, 2, 'new')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %s: %v", b.name, q, err)
		}
	}
	return w
}

// snapshot is everything in both data sources: each table's and view's
// rows (sorted), and the names of functions, procedures and triggers.
func (w covWorld) snapshot(t *testing.T) string {
	t.Helper()
	var out strings.Builder
	for i, d := range w.direct {
		names := w.objects(t, d)
		for _, obj := range names {
			fmt.Fprintf(&out, "ds_%d %s\n", i, obj)
			kind, name, _ := strings.Cut(obj, " ")
			if kind != "table" && kind != "view" {
				continue
			}
			for _, r := range dumpRows(t, d, name) {
				fmt.Fprintf(&out, "ds_%d %s: %s\n", i, name, r)
			}
		}
	}
	return out.String()
}

// objects lists "kind name" for the tables, views, routines and triggers
// of one data source, sorted.
func (w covWorld) objects(t *testing.T, d *sql.DB) []string {
	t.Helper()
	var q string
	switch w.b.driver {
	case "pgx":
		q = `SELECT CASE WHEN table_type = 'VIEW' THEN 'view' ELSE 'table' END, table_name FROM information_schema.tables WHERE table_schema = 'public'
			UNION ALL SELECT 'routine', proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace
			UNION ALL SELECT 'trigger', tgname FROM pg_trigger WHERE NOT tgisinternal`
	case "mysql":
		q = `SELECT CASE WHEN table_type = 'VIEW' THEN 'view' ELSE 'table' END, table_name FROM information_schema.tables WHERE table_schema = DATABASE()
			UNION ALL SELECT 'routine', routine_name FROM information_schema.routines WHERE routine_schema = DATABASE()
			UNION ALL SELECT 'trigger', trigger_name FROM information_schema.triggers WHERE trigger_schema = DATABASE()`
	default:
		q = `SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')`
	}
	rows, err := d.Query(q)
	if err != nil {
		t.Fatalf("%s: list objects: %v", w.b.name, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			t.Fatal(err)
		}
		out = append(out, kind+" "+name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// dumpRows is every row of table, each as text, sorted.
func dumpRows(t *testing.T, d *sql.DB, table string) []string {
	t.Helper()
	rows, err := d.Query("SELECT * FROM " + table)
	if err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts = append(parts, fmt.Sprint(v))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// rowsOf is the (order_id, user_id) pairs of physical table t_order_<n> in
// data source ds.
func (w covWorld) rowsOf(t *testing.T, ds, n int) [][2]int64 {
	t.Helper()
	rows, err := w.direct[ds].Query(fmt.Sprintf("SELECT order_id, user_id FROM t_order_%d ORDER BY order_id", n))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]int64
	for rows.Next() {
		var r [2]int64
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// sameSnapshot fails the test with the difference when after is not
// before.
func sameSnapshot(t *testing.T, what, before, after string) {
	t.Helper()
	if before == after {
		return
	}
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	var diff []string
	for _, l := range b {
		if !slices.Contains(a, l) {
			diff = append(diff, "- "+l)
		}
	}
	for _, l := range a {
		if !slices.Contains(b, l) {
			diff = append(diff, "+ "+l)
		}
	}
	t.Errorf("%s changed the databases:\n%s", what, strings.Join(diff, "\n"))
}
