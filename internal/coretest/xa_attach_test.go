package coretest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/internal/xa"
)

// Attach lets a tool list what is prepared without changing anything: no
// log table is created, nothing is recovered, even past Timeout.
func TestXAAttachThenListChangesNothing(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "attach")
			tx := e.newTx(e.coordinator(xa.Config{}))
			e.orphan(tx, 1)
			e.clock.pastTimeout(1)
			c, err := xa.New(xa.Config{Now: e.clock.Now, Interval: -1}, e.sources())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Attach(context.Background()); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			list, err := c.List(context.Background())
			c.Close()
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(list) != 2 || list[0].Decision != "" || list[0].Age < xaTimeout {
				t.Fatalf("List = %+v, want both branches, undecided, older than Timeout", list)
			}
			for i := range e.nodes {
				if got := e.prepared(i, e.listed(i, tx.GTRID())); len(got) != 1 {
					t.Errorf("%s: %q prepared, want the branch untouched", e.nodes[i].src.Name, got)
				}
			}
			if d := e.decision(tx.GTRID()); d != "" {
				t.Errorf("decision %q written", d)
			}
		})
	}
}

// Without a log table, or with one that has no log id (never started),
// nothing prepared can be the deployment's: Attach says so.
func TestXAAttachToALogThatIsNotThereSaysNothingCanBeOurs(t *testing.T) {
	e := newXAEnv(t, xaPairs[2], "nolog")
	e.orphan(e.newTx(e.coordinator(xa.Config{})), 1) // the default log's: another log
	e.runOnce(e.nodes[0].src, e.nodes[0].direct, []string{"CREATE TABLE idless_log (gtrid varchar(64) PRIMARY KEY, " +
		"outcome char(1) NOT NULL, branches text NOT NULL, created_at timestamp NOT NULL)"})
	for _, table := range []string{"no_such_log", "idless_log"} {
		c, err := xa.New(xa.Config{LogTable: table, Interval: -1}, e.sources())
		if err != nil {
			t.Fatal(err)
		}
		err = c.Attach(context.Background())
		if !errors.Is(err, xa.ErrNoLog) {
			t.Errorf("Attach to %s = %v, want ErrNoLog", table, err)
		}
		if list, err := c.List(context.Background()); len(list) > 0 || !errors.Is(err, xa.ErrNotStarted) {
			t.Errorf("List after a failed Attach = %+v, %v", list, err)
		}
		c.Close()
	}
}

// A test hook carried by the context reaches Commit when Config.Hook is nil.
func TestXATestHookFromTheContextInjectsFaults(t *testing.T) {
	e := newXAEnv(t, xaPairs[0], "ctxhook")
	c := e.coordinator(xa.Config{})
	tx := e.newTx(c)
	var stages []xa.Stage
	ctx := xa.WithTestHook(context.Background(), func(s xa.Stage, _ string) error {
		stages = append(stages, s)
		return failAt(xa.StageDecided)(s, "")
	})
	err := tx.Commit(ctx, e.insertAll(tx, 1))
	if !errors.Is(err, xa.ErrInDoubt) || len(stages) != 2 {
		t.Fatalf("Commit = %v after stages %v, want in doubt at StageDecided", err, stages)
	}
	if rep, err := c.Recover(context.Background()); err != nil || len(rep.Committed) != 2 {
		t.Fatalf("Recover = %+v, %v", rep, err)
	}
	e.wantRows(1, 1)
}

// Start collects the log's garbage once: a process that lives less than
// Interval must not leave every C row behind.
func TestXAStartDeletesCommitDecisionsNoBranchNeeds(t *testing.T) {
	e := newXAEnv(t, xaPairs[1], "startgc")
	tx := e.newTx(e.coordinator(xa.Config{}))
	if err := tx.Commit(context.Background(), e.insertAll(tx, 1)); err != nil {
		t.Fatal(err)
	}
	e.release(false)
	if e.decision(tx.GTRID()) != "C" {
		t.Fatal("no C row")
	}
	e.coordinator(xa.Config{})
	if d := e.decision(tx.GTRID()); d != "" {
		t.Errorf("C row %q left after Start", d)
	}
}

// A MariaDB XA branch that only read and was prepared, left to recovery:
// another session's XA COMMIT of it gets XA_RBROLLBACK (the server ended
// it when its session went). Recovery must not count that as committed;
// rolling such a branch back is done.
func TestXARecoveryNeverCountsARolledBackReadOnlyXABranchAsCommitted(t *testing.T) {
	e := newXAEnv(t, xaPairs[1], "rbrollback")
	rec := e.coordinator(xa.Config{})
	crash := e.coordinator(xa.Config{Hook: failAt(xa.StageDecided)})
	tx := e.newTx(crash)
	bs := []xa.Branch{e.begin(tx, 0, "INSERT INTO acct (id, v) VALUES (1, 1)"), e.begin(tx, 1, "SELECT count(*) FROM acct")}
	err := tx.Commit(context.Background(), bs)
	e.release(true)
	if !errors.Is(err, xa.ErrInDoubt) {
		t.Fatalf("Commit = %v, want in doubt", err)
	}
	e.clock.pastTimeout(1) // MySQL branches are finished only past Timeout
	rep, err := rec.Recover(context.Background())
	t.Logf("Recover: %+v, %v", rep, err)
	for _, b := range rep.Committed {
		if b.Source == "ds1" {
			t.Errorf("the read-only branch counted as committed: %+v", rep)
		}
	}
	if len(rep.Committed) != 1 || rep.Committed[0].Source != "ds0" {
		t.Errorf("the writing branch not committed: %+v", rep)
	}
	e.wantNothingPrepared()
	if e.rows(0, 1) != 1 {
		t.Error("ds0's row missing")
	}
}

// Coordinators starting at once on a fresh log agree on its id: one
// writer wins, everyone reads its id.
func TestXACoordinatorsStartingAtOnceAgreeOnTheLogID(t *testing.T) {
	for _, pair := range xaPairs[:2] {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "startrace")
			const n = 8
			cs := make([]*xa.Coordinator, n)
			for i := range cs {
				c, err := xa.New(xa.Config{Interval: -1, Now: e.clock.Now}, e.sources())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				cs[i] = c
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, c := range cs {
				wg.Go(func() { errs[i] = c.Start(context.Background()) })
			}
			wg.Wait()
			for i, c := range cs {
				if errs[i] != nil {
					t.Fatalf("Start %d: %v", i, errs[i])
				}
				if c.BranchPrefix() != cs[0].BranchPrefix() || len(c.BranchPrefix()) != len("sk1:")+16+1 {
					t.Fatalf("prefixes %q and %q", c.BranchPrefix(), cs[0].BranchPrefix())
				}
			}
		})
	}
}

// Every log statement names the table the coordinator located at Start:
// a pool session whose search_path finds another table of that name (a
// tenant schema cloned from public) must not receive the decision, or
// recovery, reading the located table, would roll back a decided commit.
func TestXALogStatementsUseTheTableLocatedAtStartWhateverTheSearchPath(t *testing.T) {
	e := newXAEnv(t, xaPairs[0], "logpath")
	rec := e.coordinator(xa.Config{})
	crash := e.coordinator(xa.Config{Hook: failAt(xa.StageDecided)}) // located public's table
	n := e.nodes[0]
	for _, q := range []string{
		"CREATE SCHEMA tenant",
		"CREATE TABLE tenant.shardkey_xa_log AS TABLE public.shardkey_xa_log",
		"ALTER DATABASE " + n.dbName + " SET search_path = tenant, public",
	} {
		if _, err := n.direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	n.src.DB.SetMaxIdleConns(0) // new sessions take the database's search_path
	tx := e.newTx(crash)
	err := tx.Commit(context.Background(), e.insertAll(tx, 1))
	if !errors.Is(err, xa.ErrInDoubt) {
		t.Fatalf("Commit = %v, want in doubt (decided)", err)
	}
	if _, err := n.direct.Exec("ALTER DATABASE " + n.dbName + " RESET search_path"); err != nil {
		t.Fatal(err)
	}
	var inTenant int
	if err := n.direct.QueryRow("SELECT count(*) FROM tenant.shardkey_xa_log WHERE gtrid = $1", tx.GTRID()).Scan(&inTenant); err != nil {
		t.Fatal(err)
	}
	if inTenant != 0 || e.decision(tx.GTRID()) != "C" {
		t.Fatalf("the decision went to the tenant's table (%d rows there; public: %q)", inTenant, e.decision(tx.GTRID()))
	}
	e.clock.pastTimeout(1)
	if rep, err := rec.Recover(context.Background()); err != nil || len(rep.Committed) != 2 {
		t.Fatalf("Recover = %+v, %v; want both branches committed", rep, err)
	}
	e.wantRows(1, 1)
}
