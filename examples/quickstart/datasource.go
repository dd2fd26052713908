package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
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
		name, err := ensurePostgres(ctx, dsn)
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
		if err := ensureMySQL(ctx, *cfg); err != nil {
			return nil, "", err
		}
		db, err := gorm.Open(mysql.Open(cfg.FormatDSN()), gcfg)
		return db, "MySQL database " + cfg.DBName, err
	}
}

// ensurePostgres creates the database of dsn when the server says it does
// not exist, through the server's postgres database.
func ensurePostgres(ctx context.Context, dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text would quote the DSN, password included
		}
		return "", fmt.Errorf("-dsn is not a valid URL: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return "", errors.New("-dsn names no database")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	err = db.PingContext(ctx)
	var pgErr *pgconn.PgError
	if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return name, err
	}
	u.Path = "/postgres"
	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+strings.ReplaceAll(name, `"`, `""`)+`"`); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return name, nil
}

// ensureMySQL creates the database of cfg if it does not exist.
func ensureMySQL(ctx context.Context, cfg gomysql.Config) error {
	name := cfg.DBName
	if name == "" {
		return errors.New("-dsn names no database")
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(name, "`", "``")+"`"); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
