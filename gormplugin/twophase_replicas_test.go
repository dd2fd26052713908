package gormplugin_test

import (
	"context"
	"slices"
	"testing"

	"go.uber.org/goleak"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Data sources that are readwrite-splitting groups: a two-phase
// transaction's branches are on the groups' write databases, and reads
// outside transactions still go to the read databases.
func TestTwoPhaseOverReadWriteSplittingGroupsWritesTheWriteDatabases(t *testing.T) {
	gormplugin.StartMergedDB()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // after the pools rwEnvs opens close
	for _, e := range rwEnvs(t, "postgres", "mysql") {
		t.Run(e.name, func(t *testing.T) {
			db := e.gormOn(t, "w_0")
			p := gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, rwRules)), gormplugin.WithDataSources(e.pools()),
				gormplugin.WithScatter(), gormplugin.WithTwoPhaseCommit(), gormplugin.WithTwoPhaseRecovery(0, -1))
			if err := db.Use(p); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if left, err := p.TwoPhaseCoordinator().List(context.Background()); err != nil || len(left) > 0 {
					t.Errorf("prepared branches left: %v %v", left, err)
				}
				_ = p.Close()
			})
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&RWOrder{UserID: 0, Note: "a"}).Error; err != nil {
					return err
				}
				return tx.Create(&RWOrder{UserID: 1, Note: "b"}).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			for ds, want := range map[string][]string{"w_0": {"a"}, "w_1": {"b"}, "r_0": nil, "r_1": nil} {
				if got := e.notes(t, ds); !slices.Equal(got, want) {
					t.Fatalf("%s holds %v, want %v", ds, got, want)
				}
			}
			e.seedReplica(t, "r_1", 77, 1, "replica")
			var notes []string
			if err := db.Model(&RWOrder{}).Where("user_id = ?", 1).Pluck("note", &notes).Error; err != nil || !slices.Equal(notes, []string{"replica"}) {
				t.Fatalf("read outside a transaction = %v, %v; want the read database's row", notes, err)
			}
		})
	}
}
