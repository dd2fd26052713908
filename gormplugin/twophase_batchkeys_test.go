package gormplugin_test

import (
	"testing"
)

// A primary key names one row of a sharded table across every physical
// table: the plugin refuses a create whose explicit key is already in
// another table ("duplicated key not allowed"), and a database refuses a
// key twice in one table. A batch over several data sources
// (WithTwoPhaseCommit) whose rows carry the same key for users of
// different data sources must be refused too, not committed in two
// tables: each row's key check ran before the other row was written.

func TestTwoPhaseBatchGivingOneKeyToRowsOfTwoDataSourcesIsRefused(t *testing.T) {
	eachTwoPhase(t, "batchdupkey", func(t *testing.T, e *tpEnv) {
		for _, rows := range [][]ShardedOrder{
			{{ID: 9, UserID: 0, Amount: 1}, {ID: 9, UserID: 1, Amount: 2}},
			{{ID: 31, UserID: 1, Amount: 1}, {ID: 31, UserID: 0, Amount: 2}},
			{{ID: 40, UserID: 0}, {ID: 41, UserID: 2}, {ID: 43, UserID: 1}, {ID: 41, UserID: 3}},
		} {
			err := e.db.Create(&rows).Error
			p := e.placement(t) // fails the test when a key is in two tables
			if err == nil {
				t.Fatalf("Create of %+v over both data sources with a key given twice = nil; stored %v", rows, p)
			}
			if len(p) != 0 {
				t.Fatalf("Create of %+v = %v, yet stored %v", rows, err, p)
			}
		}
	})
}
