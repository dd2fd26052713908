package dbtest

import (
	"database/sql"
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
