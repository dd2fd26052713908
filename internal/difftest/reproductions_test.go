//go:build difftest_repro

// Minimal reproductions of the divergences the differential tester found,
// each checking the physical tables directly. They are behind a build tag
// so that CI reports a divergence once (through TestWritesAgreeWithOracle);
// run them with
//
//	SHARDKEY_REQUIRE_DB=1 go test -tags difftest_repro -run Repro -v ./internal/difftest/
package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// reproWorld is the tester's layout on two SQLite files, tables created.
func reproWorld(t *testing.T) *world {
	t.Helper()
	return newWorld(t, openBackend(t, "sqlite", "repro"))
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

// TestReproUpdateNamedTableDoesNotPanic: db.Table("t_order").Where(...)
// .Update / .Updates(Order{...}) through gormplugin, where GORM's Model is
// the Dest itself (a map, or a struct holding a slice). Found at seed
// 20261126: "panic: runtime error: comparing uncomparable type
// map[string]interface {}" (and "... difftest.Order").
func TestReproUpdateNamedTableDoesNotPanic(t *testing.T) {
	w := reproWorld(t)
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

// TestReproSQLHookInsertIntoPhysicalTableIsRouted: through sqlhook, an
// INSERT naming a physical table (t_order_1) was sent unchanged to the
// default data source. Found at seed 3, step 60 (sql.physical.insert): the
// row (order 1, user 3) routes to ds_1.t_order_1 and was stored in
// ds_0.t_order_1; seed 20261126 step 398 on MariaDB: (order 0, user 0)
// routes to ds_0.t_order_0 and was stored in ds_0.t_order_2.
func TestReproSQLHookInsertIntoPhysicalTableIsRouted(t *testing.T) {
	for _, name := range []string{"postgres", "mariadb", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, openBackend(t, name, "repro"))
			db, err := sqlhook.Open(w.b.config(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{
				// order 1, user 3: ds_1.t_order_1, named in its own table but sent to ds_0
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

// TestReproSQLiteShardingValueBeyondInt64IsRefused: on SQLite, a
// user_id above the int64 range (a uint64 argument, its decimal string,
// or a literal) is accepted and routed by its exact value, and SQLite
// stores it as a REAL (9.223372036854776e+18): a sharding value that no
// longer is the one it was routed by (9223372036854775809 is odd, ds_1;
// the stored 2^63 is even) and that no integer condition finds. PostgreSQL
// and MariaDB reject the value themselves. Found at seed 20261126,
// step 34 (sql.insert.hugeuser).
func TestReproSQLiteShardingValueBeyondInt64IsRefused(t *testing.T) {
	for i, arg := range []any{uint64(1<<63 + 1), "9223372036854775809", nil} {
		t.Run(fmt.Sprintf("%T", arg), func(t *testing.T) {
			w := newWorld(t, openBackend(t, "sqlite", fmt.Sprintf("repro%d", i)))
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

// TestReproGormBetweenOnShardingColumnRoutesAsRange: through gormplugin,
// Where("k BETWEEN ? AND ?") on a sharding column is read as no condition
// at all (conds.go's comparison reads only "col op value" and "col IN"),
// so a strict *gorm.DB refuses it with ErrMissingShardingKey, while
// sqlhook routes the same statement through the algorithm's range
// (DoRangeSharding of a Go RangeShardingAlgorithm, or MOD's every-table
// answer) and Where("k >= ? AND k <= ?") is routed by gormplugin too. A
// refusal, not a wrong answer: fail closed, but a Go range algorithm's
// BETWEEN never reaches it from GORM. Found by gorm.algo.update.between
// and gorm.algo.delete.between (100% refused at every seed).
func TestReproGormBetweenOnShardingColumnRoutesAsRange(t *testing.T) {
	w := reproWorld(t)
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

var _ = sql.ErrNoRows
var _ = gormplugin.ErrUnsupported
