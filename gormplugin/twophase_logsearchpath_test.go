package gormplugin_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// The decision log lives in the data source's pool, which the application
// uses too. A session whose search_path resolves the log's name to another
// table (a tenant schema cloned from public, log included; SET search_path
// on pooled sessions, or a role/database default differing between the
// process that decides and the one that recovers) must not make a decided
// commit look undecided: recovery would roll back the branches still
// prepared while the others are committed.

func TestTwoPhaseDecisionIsFoundWhateverSearchPathTheSessionsHave(t *testing.T) {
	var fail atomic.Bool
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StageCommittedOne && fail.Load() {
			return errors.New("injected failure after the first branch committed")
		}
		return nil
	})
	e := newTwoPhase(t, "postgres", "logsearchpath", nil, hook, gormplugin.WithTwoPhaseRecovery(time.Second, -1))
	chk0 := e.chk[0]
	var dbname string
	if err := chk0.Raw("SELECT current_database()").Scan(&dbname).Error; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chk0.Exec("ALTER DATABASE " + dbname + " RESET search_path") })
	for _, q := range []string{
		"CREATE SCHEMA tenant_a2",
		"CREATE TABLE tenant_a2.shardkey_xa_log (LIKE public.shardkey_xa_log INCLUDING ALL)",
		"INSERT INTO tenant_a2.shardkey_xa_log SELECT * FROM public.shardkey_xa_log",
		"ALTER DATABASE " + dbname + " SET search_path = tenant_a2, public",
	} {
		if err := chk0.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	p0, err := e.db.DB()
	if err != nil {
		t.Fatal(err)
	}
	p0.SetMaxIdleConns(0) // every session of ds_0's pool from now on has the tenant's search_path
	fail.Store(true)
	err = e.db.Transaction(func(tx *gorm.DB) error {
		return tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error
	})
	fail.Store(false)
	var doubt *gormplugin.TxInDoubtError
	if !errors.As(err, &doubt) || !doubt.Decided {
		t.Fatalf("commit = %v, want in doubt with the decision logged", err)
	}
	// The recovering sessions have the default search_path again.
	if err := chk0.Exec("ALTER DATABASE " + dbname + " RESET search_path").Error; err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past the timeout: an undecided branch would be rolled back
	if _, err := e.p.TwoPhaseCoordinator().Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := e.placement(t); len(p) != 2 {
		t.Fatalf("a decided commit (committed %v, pending %v) ended with %d of its 2 rows: %s", doubt.Committed, doubt.Pending, len(p), e.snapshot(t))
	}
}
