package gormplugin_test

import (
	"database/sql"
	"errors"
	"testing"

	"gorm.io/gorm"
)

// How a two-phase transaction ends through GORM: a panic inside
// db.Transaction (or inside a nested one) rolls back every data source;
// after Commit the transaction is done (a second Commit, a Rollback, a
// write or a read through it fail with sql.ErrTxDone) and its rows are
// committed once; CreateInBatches failing in a later batch commits none
// of the earlier batches.

func TestTwoPhasePanicInsideATransactionCommitsNothing(t *testing.T) {
	eachTwoPhase(t, "panic", func(t *testing.T, e *tpEnv) {
		for _, nested := range []bool{false, true} {
			func() {
				defer func() {
					if r := recover(); r == nil {
						t.Fatal("the panic did not reach the caller")
					}
				}()
				_ = e.db.Transaction(func(tx *gorm.DB) error {
					rows := batch()
					if err := tx.Create(&rows).Error; err != nil {
						return err
					}
					if !nested {
						panic("boom")
					}
					return tx.Transaction(func(tx2 *gorm.DB) error {
						if err := tx2.Create(&ShardedOrder{UserID: 1, Amount: 9}).Error; err != nil {
							return err
						}
						panic("boom inside")
					})
				})
			}()
			if s := e.snapshot(t); s != "" {
				t.Fatalf("committed after a panic (nested %v): %s", nested, s)
			}
		}
		// Nothing is left holding locks: the same rows commit now.
		rows := batch()
		if err := e.db.Create(&rows).Error; err != nil {
			t.Fatal(err)
		}
	})
}

func TestTwoPhaseTransactionIsDoneAfterCommit(t *testing.T) {
	eachTwoPhase(t, "done", func(t *testing.T, e *tpEnv) {
		tx := e.db.Begin()
		rows := batch()
		if err := tx.Create(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit().Error; err != nil {
			t.Fatal(err)
		}
		var n int64
		for what, err := range map[string]error{
			"second Commit":         tx.Commit().Error,
			"Rollback after Commit": tx.Rollback().Error,
			"Create after Commit":   tx.Create(&ShardedOrder{UserID: 1}).Error,
			"Create of both after":  tx.Create(&[]ShardedOrder{{UserID: 0}, {UserID: 1}}).Error,
			"read after Commit":     tx.Model(&ShardedOrder{}).Where("user_id = ?", 1).Count(&n).Error,
		} {
			if !errors.Is(err, sql.ErrTxDone) {
				t.Errorf("%s = %v, want sql.ErrTxDone", what, err)
			}
		}
		if p := e.placement(t); len(p) != len(rows) {
			t.Fatalf("%d rows stored, want %d", len(p), len(rows))
		}
	})
}

func TestTwoPhaseCreateInBatchesFailingInALaterBatchCommitsNothing(t *testing.T) {
	eachTwoPhase(t, "inbatches", func(t *testing.T, e *tpEnv) {
		e.takeKey(t, 8009) // user 1's row with key 8009 exists in ds_1
		var rows []ShardedOrder
		for i := 0; i < 10; i++ {
			rows = append(rows, ShardedOrder{ID: int64(8000 + i), UserID: int64(i % 4)})
		}
		rows[9].UserID = 1 // the last batch's row takes the key
		before := e.snapshot(t)
		if err := e.db.CreateInBatches(&rows, 3).Error; err == nil {
			t.Fatal("CreateInBatches with a taken key in its last batch succeeded")
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("earlier batches committed:\nbefore %s\nafter  %s", before, after)
		}
	})
}
