package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"

	"github.com/shardkey/shardkey/examples/internal/exampledb"
	"github.com/shardkey/shardkey/shardconf"
)

// loadRules reads the built-in rules and, when tmpl is not "", replaces
// each data source's driver and DSN with tmpl's, {ds} replaced by the
// data source's name.
func loadRules(tmpl string) (*shardconf.Config, error) {
	cfg, err := shardconf.Parse(defaultRules)
	if err != nil {
		return nil, err
	}
	if tmpl == "" {
		return cfg, nil
	}
	if !strings.Contains(tmpl, "{ds}") {
		return nil, errors.New("-dsn must contain {ds}, replaced by each data source's name (one database per data source)")
	}
	for i := range cfg.DataSources {
		ds := &cfg.DataSources[i]
		ds.DSN = strings.ReplaceAll(tmpl, "{ds}", ds.Name)
		ds.Driver = driverOf(ds.DSN)
	}
	return cfg, nil
}

// driverOf is the database/sql driver a DSN's form selects.
func driverOf(dsn string) string {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "pgx"
	case strings.HasPrefix(dsn, "file:"), strings.HasSuffix(dsn, ".db"):
		return "sqlite"
	default:
		return "mysql"
	}
}

// ensureDatabase creates the database of a PostgreSQL or MySQL data source
// when it does not exist (SQLite creates its file itself) and says what
// it is, without credentials.
func ensureDatabase(ctx context.Context, ds shardconf.DataSource) (string, error) {
	switch ds.Driver {
	case "pgx":
		name, err := exampledb.EnsurePostgres(ctx, ds.DSN)
		return "PostgreSQL database " + name, err
	case "mysql":
		cfg, err := gomysql.ParseDSN(ds.DSN)
		if err != nil {
			return "", fmt.Errorf("data source %s: neither a postgres:// URL, a SQLite file nor a MySQL DSN: %w", ds.Name, err)
		}
		return "MySQL/MariaDB database " + cfg.DBName, exampledb.EnsureMySQL(ctx, *cfg)
	default:
		return "SQLite file " + ds.DSN, nil
	}
}
