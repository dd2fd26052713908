package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"
)

// Raw transaction control is refused in a two-phase transaction
// (twophase_sql.go) by reading the statement's words. With
// standard_conforming_strings off (a session SET, set_config, or a legacy
// database default) PostgreSQL reads a backslash in a plain string as an
// escape, so a text whose COMMIT looks quoted to a reader of standard
// strings runs it: the PostgreSQL branch then commits on its own, and
// db.Transaction returns an error with that data source's rows committed.

func TestTwoPhaseRawCommitIsRefusedWhateverStringSyntaxTheSessionUses(t *testing.T) {
	e := newTwoPhase(t, "postgres", "rawcommitscs", nil)
	for _, set := range []string{
		"SET standard_conforming_strings = off",
		"SELECT set_config('standard_conforming_strings', 'off', false)",
	} {
		err := e.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error; err != nil {
				return err
			}
			_ = tx.Exec(set).Error
			// Standard strings: 'a\' then ' ; COMMIT ; --'. Escaped
			// strings: 'a\' , ' then COMMIT.
			_ = tx.Exec(`SELECT 'a\' , ' ; COMMIT ; --'`).Error
			return errors.New("the caller rolls back")
		})
		if err == nil {
			t.Fatalf("%s: the transaction did not fail", set)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("after %q and a COMMIT inside what reads as a string, db.Transaction = %v, yet committed: %s", set, err, s)
		}
	}
}
