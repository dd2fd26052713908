package gormplugin_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// BenchmarkTwoPhaseCreate: a Create of two rows in GORM's default
// transaction, on one data source without WithTwoPhaseCommit (a local
// transaction), with it on one data source (PostgreSQL: a local
// transaction on a connection of the branch's own; MariaDB: XA ... ONE
// PHASE), and with it over both (prepare, decision log, commit).
func BenchmarkTwoPhaseCreate(b *testing.B) {
	for _, be := range twoPhaseBackends {
		for _, c := range []struct {
			name     string
			twoPhase bool
			users    [2]int64
		}{{"local/one_source", false, [2]int64{0, 2}}, {"2pc/one_source", true, [2]int64{0, 2}}, {"2pc/two_sources", true, [2]int64{0, 1}}} {
			b.Run(be+"/"+c.name, func(b *testing.B) {
				d0, d1 := dialectorFor(b, be, "tpbench_"+be+"_ds0"), dialectorFor(b, be, "tpbench_"+be+"_ds1")
				db, db1 := reopen(b, d0, nil), reopen(b, d1, nil)
				p0, _ := db.DB()
				p1, _ := db1.DB()
				opts := []gormplugin.Option{gormplugin.WithRules(rulesOf(b, dbRules)),
					gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1})}
				if c.twoPhase {
					opts = append(opts, gormplugin.WithTwoPhaseCommit(), gormplugin.WithTwoPhaseRecovery(0, -1))
				}
				p := gormplugin.New(nil, opts...)
				if err := db.Use(p); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = p.Close() })
				if err := db.AutoMigrate(&ShardedOrder{}); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					rows := []ShardedOrder{{UserID: c.users[0]}, {UserID: c.users[1]}}
					if err := db.Create(&rows).Error; err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
