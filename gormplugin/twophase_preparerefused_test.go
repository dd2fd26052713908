package gormplugin_test

import (
	"errors"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// PostgreSQL itself refuses to prepare some transactions: a deferred
// constraint violated at PREPARE TRANSACTION, a transaction that ran
// NOTIFY or touched a temporary table. Such a refusal in phase 1 rolls
// back every data source: the error names it, is no ErrTxInDoubt, and
// nothing of the transaction is committed anywhere (no fault injection).

func TestTwoPhaseCommitRollsBackEveryDataSourceWhenPostgreSQLRefusesToPrepare(t *testing.T) {
	e := newTwoPhase(t, "postgres", "preprefused", nil)
	for _, tb := range []string{"sharded_orders_0", "sharded_orders_1"} {
		if err := e.chk[1].Exec("ALTER TABLE " + tb + " ADD CONSTRAINT " + tb + "_amount_deferred UNIQUE (amount) DEFERRABLE INITIALLY DEFERRED").Error; err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, want string
		last       func(tx *gorm.DB) error
	}{
		{"deferred unique constraint on ds_1", "duplicate key", func(tx *gorm.DB) error {
			// ids 11 and 13 route to one table of ds_1: checked at PREPARE.
			return tx.Create(&[]ShardedOrder{{ID: 11, UserID: 1, Amount: 7}, {ID: 13, UserID: 1, Amount: 7}}).Error
		}},
		{"NOTIFY on ds_0", "NOTIFY", func(tx *gorm.DB) error { return tx.Exec("NOTIFY shardkey_a2").Error }},
		{"temporary table on ds_0", "temporary", func(tx *gorm.DB) error {
			return tx.Exec("CREATE TEMP TABLE shardkey_a2_tmp (x int)").Error
		}},
	} {
		err := e.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error; err != nil {
				return err
			}
			return c.last(tx)
		})
		if err == nil || errors.Is(err, gormplugin.ErrTxInDoubt) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: db.Transaction = %v, want PostgreSQL's refusal to prepare (%q), not in doubt", c.name, err, c.want)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("%s: committed by a transaction that could not prepare: %s", c.name, s)
		}
	}
	// The same transaction without the refusal commits on both.
	if err := e.db.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error; err != nil {
		t.Fatal(err)
	}
	if n := sources(e.placement(t)); n["ds_0"] != 1 || n["ds_1"] != 1 {
		t.Fatalf("rows per data source after a clean commit: %v", n)
	}
}
