package coretest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"go.uber.org/goleak"
)

// manySources opens n data sources of dialect kind ("pg" or "my") with
// names of xa.MaxSourceName bytes, all on one database (a data source
// may be listed under several names), each on a pool of its own, with
// table acct. Cleanup rolls back every prepared branch of the test.
func manySources(t *testing.T, kind, test string, n int) ([]xa.Source, *sql.DB) {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	d, drv, dsn := dialect.Postgres, "pgx", ""
	if kind == "my" {
		d, drv, dsn = dialect.MySQL, "mysql", dbtest.MySQL(t, "xa_"+test+"_my")
	} else {
		dsn = dbtest.Postgres(t, "xa_"+test+"_pg")
	}
	admin, err := sql.Open(drv, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	var srcs []xa.Source
	for i := range n {
		name := fmt.Sprintf("ds%02d_", i)
		name += strings.Repeat("x", xa.MaxSourceName-len(name))
		db, err := sql.Open(drv, dsn)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, xa.Source{Name: name, Dialect: d, DB: db})
	}
	t.Cleanup(func() {
		// Every branch id of the test names a source "dsNN_xxx...".
		match := func(id string) bool { return strings.HasPrefix(id, "sk1:") && strings.Contains(id, "xxxxxxxx") }
		if _, err := rollbackPrepared(srcs[0], match); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		for _, s := range srcs {
			s.DB.Close()
		}
		admin.Close()
	})
	return srcs, admin
}

// A transaction may span every data source New accepted, whatever their
// names' lengths: 17 data sources with names of the longest length New
// accepts (64 bytes) commit. (A broadcast table's write reaches every
// data source in one transaction.)
func TestXATwoPhaseCommitSpansEveryDataSourceNewAccepts(t *testing.T) {
	for _, kind := range []string{"pg", "my"} {
		t.Run(kind, func(t *testing.T) {
			srcs, admin := manySources(t, kind, "manysrc", 17)
			c, err := xa.New(xa.Config{Interval: -1, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}, srcs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			tx, err := c.NewTx()
			if err != nil {
				t.Fatal(err)
			}
			open := newBranches(t)
			var bs []xa.Branch
			for i, s := range srcs {
				bs = append(bs, open.open(tx, s, fmt.Sprintf("INSERT INTO acct (id, v) VALUES (%d, 1)", i)))
			}
			err = tx.Commit(ctx, bs)
			if err != nil {
				open.drop()
			}
			var n int
			if qerr := admin.QueryRow("SELECT count(*) FROM acct").Scan(&n); qerr != nil {
				t.Fatal(qerr)
			}
			if err != nil {
				t.Fatalf("Commit = %v (in doubt: %v); %d of %d rows visible", err, errors.Is(err, xa.ErrInDoubt), n, len(srcs))
			}
			if n != len(srcs) {
				t.Fatalf("Commit = nil, but %d of %d rows are there", n, len(srcs))
			}
		})
	}
}
