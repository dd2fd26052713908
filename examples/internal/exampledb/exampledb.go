// Package exampledb creates the databases the examples run on, when a
// -dsn names a PostgreSQL or MySQL/MariaDB database that does not exist.
package exampledb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // sql.Open("pgx", ...)
)

// EnsurePostgres creates the database of dsn when the server says it does
// not exist, through the server's postgres database.
func EnsurePostgres(ctx context.Context, dsn string) (string, error) {
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

// EnsureMySQL creates the database of cfg if it does not exist.
func EnsureMySQL(ctx context.Context, cfg gomysql.Config) error {
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
