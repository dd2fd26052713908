package dbtest

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// Default server addresses (trust auth on loopback).
const (
	DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultMySQLDSN    = "root@tcp(127.0.0.1:3306)/test?parseTime=true"
)

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// SkipShort skips t under go test -short: what needs a database server is
// slow by the standard of the inner loop -short serves. It skips even
// with SHARDKEY_REQUIRE_DB=1, which asks that a server be there, not that
// tests the caller asked to leave out run; CI never passes -short.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s test skipped", what)
	}
}

// unavailable skips or fails the test, as SHARDKEY_REQUIRE_DB says.
func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("SHARDKEY_REQUIRE_DB") == "1" {
		t.Fatalf("%s is required (SHARDKEY_REQUIRE_DB=1) but unreachable: %v", what, err)
	}
	t.Skipf("%s unreachable (set SHARDKEY_REQUIRE_DB=1 to fail instead): %v", what, err)
}

var unsafeName = regexp.MustCompile(`[^a-z0-9_]+`)

// dbName turns a test-chosen name into a database name of its own.
func dbName(name string) string {
	return "shardkey_" + unsafeName.ReplaceAllString(strings.ToLower(name), "_")
}

func ping(driver, dsn string) (*sql.DB, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	var lastErr error
	for i := 0; i < 3; i++ {
		if lastErr = db.Ping(); lastErr == nil {
			return db, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	db.Close()
	return nil, lastErr
}

// Postgres creates (dropping any leftover) the database shardkey_<name>
// and returns a pgx DSN for it. Each test package uses its own names, so
// packages can run in parallel. Under -short it skips t (see SkipShort).
func Postgres(t testing.TB, name string) string {
	t.Helper()
	SkipShort(t, "PostgreSQL")
	admin := env("SHARDKEY_PG_DSN", DefaultPostgresDSN)
	db, err := ping("pgx", admin)
	if err != nil {
		unavailable(t, "PostgreSQL", err)
	}
	defer db.Close()
	n := dbName(name)
	if _, err := db.Exec(fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, n)); err != nil {
		t.Fatalf("drop %s: %v", n, err)
	}
	if _, err := db.Exec(fmt.Sprintf(`CREATE DATABASE %s`, n)); err != nil {
		t.Fatalf("create %s: %v", n, err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("SHARDKEY_PG_DSN: %v", err)
	}
	u.Path = "/" + n
	return u.String()
}

// MySQL creates (dropping any leftover) the database shardkey_<name> on
// MariaDB/MySQL and returns a go-sql-driver DSN for it. Under -short it
// skips t (see SkipShort).
func MySQL(t testing.TB, name string) string {
	t.Helper()
	SkipShort(t, "MariaDB/MySQL")
	admin := env("SHARDKEY_MYSQL_DSN", DefaultMySQLDSN)
	db, err := ping("mysql", admin)
	if err != nil {
		unavailable(t, "MariaDB/MySQL", err)
	}
	defer db.Close()
	n := dbName(name)
	if _, err := db.Exec("DROP DATABASE IF EXISTS " + n); err != nil {
		t.Fatalf("drop %s: %v", n, err)
	}
	if _, err := db.Exec("CREATE DATABASE " + n); err != nil {
		t.Fatalf("create %s: %v", n, err)
	}
	cfg, err := mysql.ParseDSN(admin)
	if err != nil {
		t.Fatalf("SHARDKEY_MYSQL_DSN: %v", err)
	}
	cfg.DBName = n
	cfg.ParseTime = true
	return cfg.FormatDSN()
}
