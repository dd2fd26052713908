package dbtest

import (
	"database/sql"
	"flag"
	"testing"
)

func TestPostgresAndMySQLDatabases(t *testing.T) {
	for _, tc := range []struct{ driver, dsn string }{
		{"pgx", Postgres(t, "dbtest_self")},
		{"mysql", MySQL(t, "dbtest_self")},
	} {
		db, err := sql.Open(tc.driver, tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		q := "SELECT current_database()"
		if tc.driver == "mysql" {
			q = "SELECT DATABASE()"
		}
		if err := db.QueryRow(q).Scan(&name); err != nil || name != "shardkey_dbtest_self" {
			t.Fatalf("%s: connected to %q, %v", tc.driver, name, err)
		}
		db.Close()
	}
}

// TestShortSkipsDatabaseTests: under -short a test asking for a database
// is skipped before any server is reached, even with SHARDKEY_REQUIRE_DB=1.
func TestShortSkipsDatabaseTests(t *testing.T) {
	if !testing.Short() { // as under go test -short, for this test alone
		if err := flag.Set("test.short", "true"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set("test.short", "false") })
	}
	t.Setenv("SHARDKEY_REQUIRE_DB", "1")
	t.Setenv("SHARDKEY_PG_DSN", "postgres://nobody@127.0.0.1:1/none?sslmode=disable")
	t.Setenv("SHARDKEY_MYSQL_DSN", "nobody@tcp(127.0.0.1:1)/none")
	for name, get := range map[string]func(testing.TB, string) string{"postgres": Postgres, "mysql": MySQL} {
		t.Run(name, func(t *testing.T) {
			get(t, "dbtest_short")
			t.Fatal("handed out a database under -short")
		})
	}
}
