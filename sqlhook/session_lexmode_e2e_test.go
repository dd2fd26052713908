package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// openLexModeDB opens t_order sharded by user_id over n databases of
// driver drv (two tables on one data source when n is 1).
func openLexModeDB(t *testing.T, drv string, dsns []string) *sql.DB {
	t.Helper()
	rules := "dataSources:\n"
	for i, dsn := range dsns {
		rules += fmt.Sprintf("  ds_%d: {driver: %s, dsn: %q}\n", i, drv, dsn)
	}
	nodes := "ds_${0..1}.t_order"
	if len(dsns) == 1 {
		nodes = "ds_0.t_order_${0..1}"
	}
	rules += `rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ` + nodes + `
      tableStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`
	if len(dsns) == 2 {
		rules = fmt.Sprintf(txRules, drv, dsns[0], drv, dsns[1])
	}
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Under NO_BACKSLASH_ESCAPES MariaDB reads 'a\' as a whole string, so
// SELECT 'a\', @x := 5, '\' -- ' assigns @x while a reader assuming the
// default mode sees three strings; routing reads likewise. A session
// change of sql_mode or of the client character set that makes the
// server read text differently is refused, with one data source as with
// two, and nothing is sent; a harmless sql_mode is accepted.
func TestSessionLexModeChangesRefusedOnMariaDB(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d data sources", n), func(t *testing.T) {
			var dsns []string
			for i := range n {
				dsns = append(dsns, dbtest.MySQL(t, fmt.Sprintf("tadv_lexmode%d_%d", n, i)))
			}
			db := openLexModeDB(t, "mysql", dsns)
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			for _, q := range []string{
				`SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'`,
				`SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')`,
				`/*!40101 SET SQL_MODE='PIPES_AS_CONCAT' */`,
				`SET NAMES gbk`,
			} {
				if _, err := conn.ExecContext(ctx, q); !errors.Is(err, sqlhook.ErrSessionState) {
					t.Errorf("%s: %v, want ErrSessionState", q, err)
				}
			}
			var mode string
			if err := conn.QueryRowContext(ctx, `SELECT @@SESSION.sql_mode`).Scan(&mode); err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "PIPES_AS_CONCAT"} {
				if strings.Contains(mode, bad) {
					t.Errorf("sql_mode is %s after the refusals: a refused SET was sent", mode)
				}
			}
			if _, err := conn.ExecContext(ctx, `SET SESSION sql_mode = 'STRICT_TRANS_TABLES'`); err != nil {
				t.Errorf("a harmless sql_mode was refused: %v", err)
			}
			if err := conn.QueryRowContext(ctx, `SELECT @@SESSION.sql_mode`).Scan(&mode); err != nil || mode != "STRICT_TRANS_TABLES" {
				t.Errorf("sql_mode %q, %v; want STRICT_TRANS_TABLES", mode, err)
			}
		})
	}
}

// PostgreSQL: standard_conforming_strings off (and set_config of it,
// however spelled) is refused with one data source.
func TestSessionLexModeChangesRefusedOnPostgres(t *testing.T) {
	ctx := context.Background()
	db := openLexModeDB(t, "pgx", []string{dbtest.Postgres(t, "tadv_lexmode_pg")})
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		`SET standard_conforming_strings = off`,
		`SELECT "set_config"('standard_conforming_strings', 'off', false)`,
		`SET client_encoding = 'SJIS'`,
	} {
		if _, err := conn.ExecContext(ctx, q); !errors.Is(err, sqlhook.ErrSessionState) {
			t.Errorf("%s: %v, want ErrSessionState", q, err)
		}
	}
	var scs string
	if err := conn.QueryRowContext(ctx, `SHOW standard_conforming_strings`).Scan(&scs); err != nil || scs != "on" {
		t.Errorf("standard_conforming_strings %q, %v; want on (nothing sent)", scs, err)
	}
	if _, err := conn.ExecContext(ctx, `SET search_path TO public`); err != nil {
		t.Errorf("SET search_path on one data source: %v", err)
	}
}
