package sqlhook_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// One database may be listed under two data source names (rules written
// for a split that has not happened yet). Its two branches are two
// sessions of one database: their branch ids must differ, a commit must
// commit both, and recovery — listing that database's prepared branches
// once per name — must commit each branch of a decided transaction
// exactly once, with no branch left prepared.
func TestTwoPhaseCommitWithOneDatabaseUnderTwoNames(t *testing.T) {
	for _, b := range tpBackends(t, "samedb") {
		t.Run(b.name, func(t *testing.T) {
			same := b
			same.dsn[1] = b.dsn[0]
			cfg, err := shardconf.Parse(fmt.Appendf(nil, txRules, b.driver, b.dsn[0], b.driver, b.dsn[0]))
			if err != nil {
				t.Fatal(err)
			}
			st := &stages{}
			t.Cleanup(func() { noBranchesLeft(t, same) })
			db, err := sqlhook.Open(cfg, sqlhook.WithTwoPhaseCommit(), sqlhook.WithTwoPhaseHook(st.hook),
				// MariaDB branches are finished once 2 s old (see the held-conn test)
				sqlhook.WithTwoPhaseRecovery(2*time.Second, time.Second))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1) // "ds_1"
			b.insertOrder(t, tx, 2, 2) // "ds_0"
			if err := tx.Commit(); err != nil {
				t.Fatalf("commit: %v", err)
			}
			if got := st.got(); !slices.Contains(got, xa.StagePrepared) {
				t.Fatalf("stages %v: not a two-phase commit", got)
			}
			st.mu.Lock()
			st.failAt = xa.StageDecided
			st.mu.Unlock()
			tx, err = db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 3, 1)
			b.insertOrder(t, tx, 4, 2)
			err = tx.Commit()
			var ide *sqlhook.TxInDoubtError
			if !errors.As(err, &ide) || !ide.Decided {
				t.Fatalf("commit: %v, want a decided *TxInDoubtError", err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for len(b.orders(t, 0)) < 4 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if got := b.orders(t, 0); !slices.Equal(got, []int64{1, 2, 3, 4}) {
				t.Errorf("orders %v, want [1 2 3 4]", got)
			}
		})
	}
}
