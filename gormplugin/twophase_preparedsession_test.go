package gormplugin_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// A session with PrepareStmt taken from a transaction
// (tx.Session(&gorm.Session{PrepareStmt: true})) is that transaction's:
// GORM wraps a transaction's pool in a PreparedStmtTX when the pool is a
// gorm.Tx, and otherwise in a PreparedStmtDB over the *gorm.DB's own pool
// (outside the transaction). Under WithTwoPhaseCommit its statements must
// stay in the two-phase transaction, or be refused: never commit on their
// own, never read past the transaction's writes.

func TestTwoPhasePrepareStmtSessionOfATransactionNeverLeavesIt(t *testing.T) {
	eachTwoPhase(t, "prepsessiontx", func(t *testing.T, e *tpEnv) {
		var writeErr, readErr error
		var seen int64
		err := e.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&ShardedOrder{UserID: 0, Amount: 1}).Error; err != nil {
				return err
			}
			ps := tx.Session(&gorm.Session{PrepareStmt: true})
			writeErr = ps.Create(&ShardedOrder{UserID: 1, Amount: 2}).Error
			readErr = ps.Model(&ShardedOrder{}).Where("user_id = ?", 0).Count(&seen).Error
			return errors.New("the caller rolls back")
		})
		if err == nil {
			t.Fatal("the transaction did not fail")
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("db.Transaction = %v, yet the write of its PrepareStmt session (error %v) committed: %s", err, writeErr, s)
		}
		if readErr == nil && seen != 1 {
			t.Fatalf("a read of the transaction's PrepareStmt session counted %d rows of user 0, want the transaction's 1 (or a refusal)", seen)
		}
	}, gormplugin.WithScatter())
}

// Every other kind of session taken from a two-phase transaction stays in
// it too: its batch over both data sources is counted inside the
// transaction and rolled back with it.
func TestTwoPhaseSessionsOfATransactionStayInIt(t *testing.T) {
	eachTwoPhase(t, "sessionstx", func(t *testing.T, e *tpEnv) {
		for name, session := range map[string]func(tx *gorm.DB) *gorm.DB{
			"NewDB":                  func(tx *gorm.DB) *gorm.DB { return tx.Session(&gorm.Session{NewDB: true}) },
			"SkipDefaultTransaction": func(tx *gorm.DB) *gorm.DB { return tx.Session(&gorm.Session{SkipDefaultTransaction: true}) },
			"Context":                func(tx *gorm.DB) *gorm.DB { return tx.Session(&gorm.Session{Context: context.Background()}) },
			"WithContext":            func(tx *gorm.DB) *gorm.DB { return tx.WithContext(context.Background()) },
			"Initialized":            func(tx *gorm.DB) *gorm.DB { return tx.Session(&gorm.Session{Initialized: true}) },
			"FullSaveAssociations":   func(tx *gorm.DB) *gorm.DB { return tx.Session(&gorm.Session{FullSaveAssociations: true}) },
			"CreateBatchSize":        func(tx *gorm.DB) *gorm.DB { return tx.Session(&gorm.Session{CreateBatchSize: 1}) },
			"Unscoped":               func(tx *gorm.DB) *gorm.DB { return tx.Unscoped() },
		} {
			var writeErr, countErr error
			var n int64
			err := e.db.Transaction(func(tx *gorm.DB) error {
				s := session(tx)
				writeErr = s.Create(&[]ShardedOrder{{UserID: 0}, {UserID: 1}, {UserID: 2}, {UserID: 3}}).Error
				countErr = s.Model(&ShardedOrder{}).Count(&n).Error
				return errors.New("the caller rolls back")
			})
			if err == nil || writeErr != nil || countErr != nil || n != 4 {
				t.Errorf("%s session: transaction %v, write %v, count %d (%v); want the 4 rows counted inside", name, err, writeErr, n, countErr)
			}
			if s := e.snapshot(t); s != "" {
				t.Fatalf("%s session: its write outlived the rollback: %s", name, s)
			}
		}
	}, gormplugin.WithScatter())
}
