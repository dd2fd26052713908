// Writes in their smallest form, on the tester's layout, each checked
// against the physical tables directly: shapes where the layers and the
// oracle could part (a panic, a row stored where it does not route, a
// value the database changes after routing, a condition read as none).
package difftest

import (
	"context"
	"fmt"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// sqliteWorld is the tester's layout on two SQLite files, tables created.
func sqliteWorld(t *testing.T) *world {
	t.Helper()
	return newWorld(t, openBackend(t, "sqlite", "wcase"))
}

// rowsIn returns the t_order rows of one physical table, read directly.
func rowsIn(t *testing.T, w *world, tg shardconf.Target) []row {
	t.Helper()
	rows, err := readRows(w.dsOf(tg), "SELECT order_id, user_id, status, amount, note FROM "+tg.Table, 5)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestGormUpdateOfANamedTableNeverPanics: db.Table("t_order").Where(...)
// .Update / .Updates(Order{...}) through gormplugin, where GORM's Model is
// the Dest itself (a map, or a struct holding a slice, neither of which
// compares with ==), updates or is refused, never panics.
func TestGormUpdateOfANamedTableNeverPanics(t *testing.T) {
	w := sqliteWorld(t)
	c := newGormClient(t, w)
	for _, tc := range []struct {
		name string
		run  func(db *gorm.DB) error
	}{
		{"Update", func(db *gorm.DB) error {
			return db.Table("t_order").Where("user_id = ? AND order_id = ?", 1, 2).Update("status", "x").Error
		}},
		{"Updates(struct with a slice field)", func(db *gorm.DB) error {
			s := "x"
			return db.Table("t_order").Where("user_id = ? AND order_id = ?", 1, 2).Updates(Order{Status: &s}).Error
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			if err := tc.run(c.strict.Session(&gorm.Session{Logger: logger.Discard})); err != nil {
				t.Logf("refused: %v", err) // a refusal is fine; a panic is not
			}
		})
	}
}

// TestSQLHookInsertNamingAPhysicalTableStoresRowsOnlyWhereTheyRoute:
// through sqlhook, an INSERT naming a physical table is routed by its row,
// not sent to the default data source: (order 1, user 3) named in its own
// table t_order_1 lands in ds_1.t_order_1, and (order 0, user 0) named in
// another table of ds_0 (t_order_2) is refused. Every physical table
// holds only rows that route to it.
func TestSQLHookInsertNamingAPhysicalTableStoresRowsOnlyWhereTheyRoute(t *testing.T) {
	for _, name := range []string{"postgres", "mariadb", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, openBackend(t, name, "wcase"))
			db, err := sqlhook.Open(w.b.config(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{
				// order 1, user 3: ds_1.t_order_1, named in its own table
				"INSERT INTO t_order_1 (order_id, user_id, note) VALUES (1, 3, 'x')",
				// order 0, user 0: ds_0.t_order_0, named in another table of ds_0
				"INSERT INTO t_order_2 (order_id, user_id, note) VALUES (0, 0, 'y')",
			} {
				_, err = db.ExecContext(context.Background(), q)
				t.Logf("%s: %v", q, err)
			}
			s, err := w.snapshot()
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range w.physical["t_order"] {
				for _, r := range s.phys[tg]["t_order"] {
					if want, err := w.route(tables[0], r); err != nil || want != tg {
						t.Errorf("%s holds %v, which routes to %v (%v)", tg, r, want, err)
					}
				}
			}
		})
	}
}

// TestSQLHookRefusesSQLiteShardingValueBeyondInt64: on SQLite, a user_id
// above the int64 range (a uint64 argument, its decimal string, or a
// literal) would be routed by its exact value and stored as a REAL
// (9.223372036854776e+18): a sharding value that is no longer the one it
// was routed by (9223372036854775809 is odd, ds_1; the stored 2^63 is
// even) and that no integer condition finds. sqlhook refuses it and
// stores nothing. PostgreSQL and MariaDB reject the value themselves.
func TestSQLHookRefusesSQLiteShardingValueBeyondInt64(t *testing.T) {
	for i, arg := range []any{uint64(1<<63 + 1), "9223372036854775809", nil} {
		t.Run(fmt.Sprintf("%T", arg), func(t *testing.T) {
			w := newWorld(t, openBackend(t, "sqlite", fmt.Sprintf("wcase%d", i)))
			db, err := sqlhook.Open(w.b.config(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			q, args := "INSERT INTO t_order (order_id, user_id, note) VALUES (5, ?, 'x')", []any{arg}
			if arg == nil {
				q, args = "INSERT INTO t_order (order_id, user_id, note) VALUES (5, 9223372036854775809, 'x')", nil
			}
			_, err = db.ExecContext(context.Background(), q, args...)
			for _, tg := range w.physical["t_order"] {
				if rows := rowsIn(t, w, tg); len(rows) > 0 {
					t.Fatalf("accepted (err %v): %s holds %v", err, tg, rows)
				}
			}
			if err == nil {
				t.Fatal("accepted, and no row stored")
			}
		})
	}
}

// TestGormBetweenOnAShardingColumnRoutesAsTheRange: through gormplugin,
// Where("k BETWEEN ? AND ?") on a sharding column is the inclusive range,
// as Where("k >= ? AND k <= ?") is and as sqlhook reads it, so a strict
// *gorm.DB routes it through the algorithm's range (DoRangeSharding of a
// Go RangeShardingAlgorithm, or MOD's every-table answer) instead of
// refusing it with ErrMissingShardingKey.
func TestGormBetweenOnAShardingColumnRoutesAsTheRange(t *testing.T) {
	w := sqliteWorld(t)
	c := newGormClient(t, w)
	db := c.strict.Session(&gorm.Session{Logger: logger.Discard})
	for _, tc := range []struct{ name, where string }{
		{"t_algo, Go range algorithm", "k BETWEEN ? AND ?"},
		{"t_algo, the same as >= and <=", "k >= ? AND k <= ?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 21..25: one decade below the split, ds_0.t_algo_0 only
			if err := db.Model(&AlgoRow{}).Where(tc.where, 21, 25).Update("v", "x").Error; err != nil {
				t.Errorf("Where(%q, 21, 25).Update: %v", tc.where, err)
			}
		})
	}
	t.Run("t_order, MOD", func(t *testing.T) {
		err := db.Model(&Order{}).Where("user_id = ? AND order_id BETWEEN ? AND ?", 2, 3, 3).Update("status", "x").Error
		if err != nil {
			t.Errorf("user_id = 2 AND order_id BETWEEN 3 AND 3: %v", err)
		}
	})
}
