package coretest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"go.uber.org/goleak"
)

// deployment is one application's data sources ds_0 (holding its
// decision log) and ds_1, each a database of its own on the shared
// MariaDB server.
type deployment struct {
	srcs   []xa.Source
	prefix *string // the branch ids' "sk1:<logtag>:", known once started
}

func newDeployment(t *testing.T, logDB string) deployment {
	t.Helper()
	d := deployment{prefix: new(string)}
	for i, name := range []string{logDB, logDB + "_data"} {
		dsn := dbtest.MySQL(t, name)
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		d.srcs = append(d.srcs, xa.Source{Name: fmt.Sprintf("ds_%d", i), Dialect: dialect.MySQL, DB: db})
	}
	t.Cleanup(func() {
		for _, s := range d.srcs {
			if *d.prefix != "" {
				rollbackOurs(t, s, *d.prefix)
			}
			s.DB.Close()
		}
	})
	return d
}

func (d deployment) coordinator(t *testing.T, cfg xa.Config) *xa.Coordinator {
	t.Helper()
	cfg.Interval, cfg.Timeout = -1, xaTimeout
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := xa.New(cfg, d.srcs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	*d.prefix = c.BranchPrefix()
	return c
}

func (d deployment) rows(t *testing.T, i int) int {
	t.Helper()
	var n int
	if err := d.srcs[i].DB.QueryRow("SELECT count(*) FROM acct").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Two applications whose data sources share a MariaDB server (XA RECOVER
// lists the whole server's branches) and have the same data source
// names, each with its decision log in a database of its own. A's
// recovery must never roll back B's transaction that B's log decided to
// commit. (The logs' database names collide under FNV-32a, which the
// logtag once was: a hash of the log's name, equal too for two logs of
// the same name on two servers, production's and staging's "app".)
func TestXARecoveryNeverTouchesAnotherDeploymentsBranchesOnASharedServer(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	a := newDeployment(t, "xa_tag_232789")
	b := newDeployment(t, "xa_tag_429192")
	clock := new(xaClock)
	ra := a.coordinator(t, xa.Config{Now: clock.Now})
	cb := b.coordinator(t, xa.Config{Hook: failAt(xa.StageDecided)})
	tx, err := cb.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	open := newBranches(t)
	bs := []xa.Branch{
		open.open(tx, b.srcs[0], "INSERT INTO acct (id, v) VALUES (1, 1)"),
		open.open(tx, b.srcs[1], "INSERT INTO acct (id, v) VALUES (1, 1)"),
	}
	err = tx.Commit(context.Background(), bs)
	var ide *xa.InDoubtError
	if !errors.As(err, &ide) || !ide.Decided {
		t.Fatalf("B's Commit = %v, want a decided *InDoubtError", err)
	}
	open.drop() // B's process is gone; its branches wait for recovery
	clock.pastTimeout(2)
	rep, err := ra.Recover(context.Background())
	t.Logf("A's recovery: %+v, %v", rep, err)
	if n := len(rep.Committed) + len(rep.RolledBack); n > 0 {
		t.Errorf("A's recovery finished %d of B's branches", n)
	}
	rep, err = b.coordinator(t, xa.Config{Now: clock.Now}).Recover(context.Background()) // past Timeout: MySQL branches are finished only then
	if err != nil || len(rep.Errors) > 0 {
		t.Errorf("B's recovery: %+v, %v", rep, err)
	}
	for i := range b.srcs {
		if n := b.rows(t, i); n != 1 {
			t.Errorf("B's decided commit: %d rows on %s, want 1", n, b.srcs[i].Name)
		}
	}
}

// A copy of a database is a common way to make another deployment
// (staging from a dump of production, restored next to it on the same
// server): the copy holds the decision log too, and whatever identifies
// the log in it. B's log is copied from A's before B first starts; their
// data sources share the server and the names. B's recovery must never
// roll back A's transaction that A's log decided to commit.
func TestXARecoveryNeverTouchesTheBranchesOfTheDeploymentItsLogWasCopiedFrom(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	a := newDeployment(t, "xa_copied_from")
	b := newDeployment(t, "xa_copied_to")
	ca := a.coordinator(t, xa.Config{Hook: failAt(xa.StageDecided)})
	for _, q := range []string{
		"CREATE TABLE shardkey_xa_copied_to.shardkey_xa_log LIKE shardkey_xa_copied_from.shardkey_xa_log",
		"INSERT INTO shardkey_xa_copied_to.shardkey_xa_log SELECT * FROM shardkey_xa_copied_from.shardkey_xa_log",
	} {
		if _, err := b.srcs[0].DB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	clock := new(xaClock)
	rb := b.coordinator(t, xa.Config{Now: clock.Now})
	tx, err := ca.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	open := newBranches(t)
	bs := []xa.Branch{
		open.open(tx, a.srcs[0], "INSERT INTO acct (id, v) VALUES (1, 1)"),
		open.open(tx, a.srcs[1], "INSERT INTO acct (id, v) VALUES (1, 1)"),
	}
	err = tx.Commit(context.Background(), bs)
	var ide *xa.InDoubtError
	if !errors.As(err, &ide) || !ide.Decided {
		t.Fatalf("A's Commit = %v, want a decided *InDoubtError", err)
	}
	open.drop()
	clock.pastTimeout(2)
	rep, err := rb.Recover(context.Background())
	t.Logf("B's recovery: %+v, %v", rep, err)
	if n := len(rep.Committed) + len(rep.RolledBack); n > 0 {
		t.Errorf("B's recovery finished %d of A's branches", n)
	}
	rep, err = a.coordinator(t, xa.Config{Now: clock.Now}).Recover(context.Background()) // past Timeout: MySQL branches are finished only then
	if err != nil || len(rep.Errors) > 0 {
		t.Errorf("A's recovery: %+v, %v", rep, err)
	}
	for i := range a.srcs {
		if n := a.rows(t, i); n != 1 {
			t.Errorf("A's decided commit: %d rows on %s, want 1", n, a.srcs[i].Name)
		}
	}
}
