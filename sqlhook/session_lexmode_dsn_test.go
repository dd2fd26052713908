package sqlhook

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// A data source whose DSN makes the driver set a sql_mode, client
// character set or standard_conforming_strings that changes how
// statements are read is refused when the rules are opened; the usual
// DSNs pass.
func TestDataSourceDSNChangingHowStatementsAreReadIsRefused(t *testing.T) {
	cases := []struct {
		driver, dsn string
		refused     bool
	}{
		{"mysql", "root@tcp(127.0.0.1:3306)/app?charset=gbk", true},
		{"mysql", "root@tcp(127.0.0.1:3306)/app?charset=utf8mb4,gbk", true},
		{"mysql", "root@tcp(127.0.0.1:3306)/app?sql_mode=%27ANSI_QUOTES%27", true},
		{"mysql", "root@tcp(127.0.0.1:3306)/app?sql_mode='TRADITIONAL,NO_BACKSLASH_ESCAPES'", true},
		{"mysql", "root@tcp(127.0.0.1:3306)/app?charset=utf8mb4&parseTime=true&sql_mode=%27TRADITIONAL%27", false},
		{"mysql", "u:p?w@tcp(127.0.0.1:3306)/app", false},
		{"pgx", "postgres://u@h/app?options=-c%20standard_conforming_strings%3Doff", true},
		{"pgx", "host=h dbname=app standard_conforming_strings=off", true},
		{"pgx", "postgres://u@h/app?client_encoding=SJIS", true},
		{"pgx", "postgres://u@h/app?client_encoding=UTF8&sslmode=disable", false},
		{"pgx", "postgres://u@h/app?sslmode=disable", false},
		{"sqlite", "file:x.db?_pragma=foreign_keys(1)", false},
	}
	for _, c := range cases {
		err := dsnLexModeError(shardconf.DataSource{Name: "ds_0", Driver: c.driver, DSN: c.dsn})
		if (err != nil) != c.refused || err != nil && !errors.Is(err, ErrDataSource) {
			t.Errorf("%s %s: %v, want refused=%v (ErrDataSource)", c.driver, c.dsn, err, c.refused)
		}
	}
}
