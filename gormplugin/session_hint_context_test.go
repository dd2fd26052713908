package gormplugin_test

import (
	"context"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/shardconf"
)

// Every statement routes by the context it runs with, however the
// *gorm.DB was derived: a chain reused with another WithContext (its
// routing decision must not stick to the shared statement), WithContext
// twice (the last wins), a Scope that sets the context, Session's
// Context, and FindInBatches (each batch, and statements run in its
// callback, keep the caller's hint).
func TestHintGormEachStatementRoutesByTheContextItRunsWith(t *testing.T) {
	eachHintBackend(t, "hint_sessions", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		for i, at := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			if err := e.db.WithContext(hintAt(bg, "hint_orders", at[0], at[1])).Create(&HintOrder{ID: int64(i + 1), UserID: 7}).Error; err != nil {
				t.Fatal(err)
			}
		}
		c := func(ds, tb int) context.Context { return hintAt(bg, "hint_orders", ds, tb) }
		find := func(name string, q *gorm.DB, want string) {
			t.Helper()
			var os []HintOrder
			if err := q.Find(&os).Error; err != nil || fmt.Sprint(idsOf(os)) != want {
				t.Errorf("%s: %v, %v; want %s", name, idsOf(os), err, want)
			}
		}
		chain := e.db.WithContext(c(0, 1)).Model(&HintOrder{}).Where("user_id = ?", 7)
		var n int64
		if err := chain.Count(&n).Error; err != nil || n != 1 {
			t.Errorf("Count on the chain: %d, %v; want 1", n, err)
		}
		find("the chain under another WithContext", chain.WithContext(c(1, 0)), "[3]")
		find("the chain again", chain, "[2]")
		find("the chain under Session's Context", chain.Session(&gorm.Session{Context: c(1, 1)}), "[4]")
		find("the chain once more", chain, "[2]")
		find("WithContext twice", e.db.WithContext(c(0, 0)).WithContext(c(1, 1)), "[4]")
		find("a Scope setting the context", e.db.WithContext(c(0, 0)).Scopes(func(d *gorm.DB) *gorm.DB { return d.WithContext(c(1, 0)) }), "[3]")
		find("Session's Context", e.db.Session(&gorm.Session{Context: c(0, 1)}), "[2]")

		two := shardconf.WithHint(bg, "hint_orders", shardconf.Hint{Database: []any{1}, Table: []any{0, 1}})
		var batch []HintOrder
		var seen []string
		err := e.db.WithContext(two).Order("id").FindInBatches(&batch, 1, func(tx *gorm.DB, _ int) error {
			var again []HintOrder
			err := tx.Find(&again).Error
			seen = append(seen, fmt.Sprint(idsOf(batch), idsOf(again)))
			return err
		}).Error
		if err != nil || fmt.Sprint(seen) != "[[3] [3 4] [4] [3 4]]" {
			t.Errorf("FindInBatches over two hinted tables: %v, %v; want batches [3], [4], each callback reading [3 4]", seen, err)
		}
	})
}
