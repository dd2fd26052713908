package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// openTwoDSNamed is openTwoDS with databases named <name>_ds0/ds1, name
// carrying the test's own prefix.
func openTwoDSNamed(t *testing.T, be, name, rules string, cfg func() *gorm.Config, models []any, opts ...gormplugin.Option) *twoDS {
	t.Helper()
	if cfg == nil {
		cfg = func() *gorm.Config { return &gorm.Config{} }
	}
	d0, d1 := dialectorFor(t, be, name+"_ds0"), dialectorFor(t, be, name+"_ds1")
	e := &twoDS{be: be, rules: rulesOf(t, rules)}
	e.db, e.db1 = reopen(t, d0, cfg()), reopen(t, d1, cfg())
	e.chk = [2]*gorm.DB{reopen(t, d0, nil), reopen(t, d1, nil)}
	p0, _ := e.db.DB()
	p1, _ := e.db1.DB()
	pools := map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}
	for _, db := range []*gorm.DB{e.db, e.db1} {
		all := append([]gormplugin.Option{gormplugin.WithRules(e.rules), gormplugin.WithDataSources(pools)}, opts...)
		if err := db.Use(gormplugin.New(nil, all...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.AutoMigrate(models...); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRawWriteNamingPhysicalTableIsRefused: raw SQL that names a physical
// table and may write runs unchecked on the default data source; an
// UPDATE of a sharding column there left a row in a table its values do
// not route to. It is refused and nothing changes; a raw read of a
// physical table still runs.
func TestRawWriteNamingPhysicalTableIsRefused(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDSNamed(t, be, "gormplugin_raw_"+be, dbRules, nil, []any{&ShardedOrder{}})
			for placed := false; !placed; { // a row of user 0 in ds_0.sharded_orders_1
				o := ShardedOrder{UserID: 0}
				if err := e.db.Create(&o).Error; err != nil {
					t.Fatal(err)
				}
				placed = o.ID%2 == 1
			}
			before := e.snapshot(t)
			for _, q := range []string{
				"UPDATE sharded_orders_1 SET user_id = 1",
				"update SHARDED_ORDERS_1 set user_id = user_id + 1",
				"DELETE FROM sharded_orders_1",
				"INSERT INTO sharded_orders_1 (id, user_id, amount) VALUES (3, 1, 0)",
			} {
				if err := e.db.Exec(q).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
					t.Errorf("%s: %v, want ErrUnsupported", q, err)
				}
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("refused raw writes changed the tables:\n%s\n%s", before, after)
			}
			var n int64
			if err := e.db.Raw("SELECT count(*) FROM sharded_orders_1").Scan(&n).Error; err != nil || n == 0 {
				t.Fatalf("raw read of a physical table: %d rows, %v", n, err)
			}
		})
	}
}
