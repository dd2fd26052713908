package gormplugin_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	"go.uber.org/goleak"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// Data sources that are readwrite-splitting groups: a read inside a
// two-phase transaction runs on the transaction's branch on the group's
// write database (it sees the transaction's rows), never on a read
// database, whether it reads one data source, both, or runs in a hook.

func TestTwoPhaseReadsInsideATransactionOverReadWriteSplittingGroupsUseTheBranches(t *testing.T) {
	gormplugin.StartMergedDB()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	for _, e := range rwEnvs(t, "postgres", "mysql") {
		t.Run(e.name, func(t *testing.T) {
			db := e.gormOn(t, "w_0")
			p := gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, rwRules)), gormplugin.WithDataSources(e.pools()),
				gormplugin.WithScatter(), gormplugin.WithTwoPhaseCommit(), gormplugin.WithTwoPhaseRecovery(0, -1))
			if err := db.Use(p); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				left, err := p.TwoPhaseCoordinator().List(context.Background())
				if err != nil {
					t.Errorf("list prepared branches: %v", err)
				}
				for _, b := range left { // fail, and roll back: a prepared branch blocks other tests
					t.Errorf("prepared branch left behind: %+v", b)
					q := "ROLLBACK PREPARED '" + b.GTRID + ":" + b.Source + "'"
					if e.name == "mysql" {
						q = fmt.Sprintf("XA ROLLBACK X'%x',X'%x',%d", b.GTRID, b.Source, xa.FormatID)
					}
					if _, err := e.dbs["w_"+b.Source[len(b.Source)-1:]].Exec(q); err != nil {
						t.Errorf("%s: %v", q, err)
					}
				}
				_ = p.Close()
			})
			e.seedReplica(t, "r_0", 70, 0, "replica0")
			e.seedReplica(t, "r_1", 71, 1, "replica1")
			var seen []string
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&RWOrder{UserID: 0, Note: "a"}).Error; err != nil {
					return err
				}
				if err := tx.Create(&RWOrder{UserID: 1, Note: "b", seen: &seen}).Error; err != nil {
					return err
				}
				var one, both []string
				if err := tx.Model(&RWOrder{}).Where("user_id = ?", 1).Pluck("note", &one).Error; err != nil {
					return err
				}
				if err := tx.Model(&RWOrder{}).Pluck("note", &both).Error; err != nil {
					return err
				}
				sort.Strings(both)
				var n int64
				if err := tx.Model(&RWOrder{}).Count(&n).Error; err != nil {
					return err
				}
				if !slices.Equal(one, []string{"b"}) || !slices.Equal(both, []string{"a", "b"}) || n != 2 {
					return fmt.Errorf("reads in the transaction: user 1 %v, both %v, count %d; want [b], [a b], 2 (the write databases' branches)", one, both, n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seen, []string{"b"}) {
				t.Fatalf("a read in a hook of the transaction saw %v, want [b]", seen)
			}
		})
	}
}
