package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/examples/internal/exampledb"
)

// openDataSource opens data source ds: a SQLite file in c.dir, or the
// database c.dsn names once {ds} is replaced (created if missing). It
// returns the database's name for the report, without credentials.
func openDataSource(ctx context.Context, c config, ds string) (*gorm.DB, string, error) {
	gcfg := &gorm.Config{Logger: logger.Discard}
	if c.dsn == "" {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return nil, "", err
		}
		path := filepath.Join(c.dir, ds+".db")
		// WAL and a busy timeout: the progress of one writer does not stall
		// readers, and a second connection waits instead of failing.
		db, err := gorm.Open(sqlite.Open(path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)"), gcfg)
		return db, path, err
	}
	if !strings.Contains(c.dsn, "{ds}") {
		return nil, "", errors.New("-dsn must contain {ds}, replaced by each data source's name (one database per data source)")
	}
	dsn := strings.ReplaceAll(c.dsn, "{ds}", ds)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		name, err := exampledb.EnsurePostgres(ctx, dsn)
		if err != nil {
			return nil, "", err
		}
		db, err := gorm.Open(postgres.Open(dsn), gcfg)
		return db, "PostgreSQL database " + name, err
	default:
		cfg, err := gomysql.ParseDSN(dsn)
		if err != nil {
			return nil, "", fmt.Errorf("-dsn is neither a postgres:// URL nor a MySQL DSN: %w", err)
		}
		cfg.ParseTime = true // time.Time columns
		if err := exampledb.EnsureMySQL(ctx, *cfg); err != nil {
			return nil, "", err
		}
		db, err := gorm.Open(mysql.Open(cfg.FormatDSN()), gcfg)
		return db, "MySQL database " + cfg.DBName, err
	}
}
