package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"
)

// A savepoint name goes into SQL text on every branch of a two-phase
// transaction (SAVEPOINT <name>, ROLLBACK TO SAVEPOINT <name>). A name
// that is not one identifier (built from input, say) must be refused,
// not run: "sp; COMMIT" would commit every PostgreSQL branch on its own,
// past the refusal of raw transaction control.

func TestTwoPhaseSavepointNameThatIsNoIdentifierRunsNothing(t *testing.T) {
	eachTwoPhase(t, "spname", func(t *testing.T, e *tpEnv) {
		for _, name := range []string{"sp1; COMMIT", "sp1; ROLLBACK", "sp1 /* x */; COMMIT"} {
			var spErr, rbErr error
			err := e.db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error; err != nil {
					return err
				}
				spErr = tx.SavePoint(name).Error
				rbErr = tx.RollbackTo(name).Error
				return errors.New("the caller rolls back")
			})
			if err == nil {
				t.Fatal("the transaction did not fail")
			}
			if spErr == nil || rbErr == nil {
				t.Errorf("SavePoint(%q) = %v, RollbackTo = %v: want both refused", name, spErr, rbErr)
			}
			if s := e.snapshot(t); s != "" {
				t.Fatalf("after SavePoint(%q) (%v) the rolled-back transaction committed: %s", name, spErr, s)
			}
		}
	})
}
