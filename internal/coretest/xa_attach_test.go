package coretest

import (
	"context"
	"errors"
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
			for _, table := range []string{xa.DefaultLogTable, "no_such_log"} {
				c, err := xa.New(xa.Config{LogTable: table, Now: e.clock.Now, Interval: -1}, e.sources())
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Attach(context.Background()); err != nil {
					t.Fatalf("Attach: %v", err)
				}
				list, err := c.List(context.Background())
				c.Close()
				if err != nil {
					t.Fatalf("List with log %s: %v", table, err)
				}
				if table != xa.DefaultLogTable {
					continue // another log: another logtag, none of its branches
				}
				if len(list) != 2 || list[0].Decision != "" || list[0].Age < xaTimeout {
					t.Fatalf("List = %+v, want both branches, undecided, older than Timeout", list)
				}
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

// List on a log table that does not exist reports no decision and no
// error (a tool pointed at the wrong table still lists the branches).
func TestXAListOnAMissingLogTableShowsNoDecision(t *testing.T) {
	e := newXAEnv(t, xaPairs[2], "nolog")
	logless := e.logTag(e.nodes[0], "no_such_log")
	c, err := xa.New(xa.Config{LogTable: "no_such_log", Interval: -1}, e.sources())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Attach(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A branch of that log's deployment, prepared by hand.
	gtrid := "sk1:" + logless + e.newTx(e.coordinator(xa.Config{})).GTRID()[len(e.prefix)-1:]
	e.runOnce(e.nodes[0].src, e.nodes[0].direct, []string{"BEGIN", "INSERT INTO acct (id, v) VALUES (1, 1)",
		"PREPARE TRANSACTION '" + xa.PostgresGID(gtrid, "ds0") + "'"})
	list, err := c.List(context.Background())
	if err != nil || len(list) != 1 || list[0].GTRID != gtrid || list[0].Decision != "" {
		t.Fatalf("List = %+v, %v; want the one branch, no decision, no error", list, err)
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
