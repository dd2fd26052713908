package gormplugin_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// A hook that fails after some data sources were written (AfterCreate of
// a batch over both, AfterUpdate and AfterDelete of a write over both),
// or before (BeforeCreate of the batch's last row), makes the whole write
// fail and leaves nothing of it on any data source, in GORM's default
// transaction and under SkipDefaultTransaction (the plugin's own
// transaction).

// tpa2HookFail names the hook that fails ("" for none).
var tpa2HookFail atomic.Value

// TPA2HookedOrder is sharded_orders with hooks that fail on demand.
type TPA2HookedOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

func (TPA2HookedOrder) TableName() string { return "sharded_orders" }

func tpa2Hook(name string, o *TPA2HookedOrder) error {
	if v, _ := tpa2HookFail.Load().(string); v == name && (o == nil || o.UserID == 3) {
		return errors.New(name + " refuses")
	}
	return nil
}

func (o *TPA2HookedOrder) BeforeCreate(*gorm.DB) error { return tpa2Hook("BeforeCreate", o) }
func (o *TPA2HookedOrder) AfterCreate(*gorm.DB) error  { return tpa2Hook("AfterCreate", o) }
func (o *TPA2HookedOrder) AfterUpdate(*gorm.DB) error  { return tpa2Hook("AfterUpdate", nil) }
func (o *TPA2HookedOrder) AfterDelete(*gorm.DB) error  { return tpa2Hook("AfterDelete", nil) }

func TestTwoPhaseHookFailingAfterSomeDataSourcesWroteCommitsNothing(t *testing.T) {
	tpa2HookFail.Store("")
	for _, skip := range []bool{false, true} {
		for _, be := range twoPhaseBackends {
			t.Run(fmt.Sprintf("%s/SkipDefaultTransaction=%v", be, skip), func(t *testing.T) {
				cfg := func() *gorm.Config { return &gorm.Config{SkipDefaultTransaction: skip} }
				e := newTwoPhase(t, be, fmt.Sprintf("hookfail_%s_%v", be, skip), cfg, gormplugin.WithScatter())
				defer tpa2HookFail.Store("")
				for _, hook := range []string{"BeforeCreate", "AfterCreate"} {
					tpa2HookFail.Store(hook)
					// Users 0..3 (both data sources): GORM runs every
					// AfterCreate once the batch's rows are inserted in both.
					err := e.db.Create(&[]TPA2HookedOrder{{UserID: 0}, {UserID: 1}, {UserID: 2}, {UserID: 3}}).Error
					if err == nil || !strings.Contains(err.Error(), hook+" refuses") {
						t.Fatalf("Create with a failing %s = %v", hook, err)
					}
					if s := e.snapshot(t); s != "" {
						t.Fatalf("Create failed by %s, yet committed: %s", hook, s)
					}
				}
				tpa2HookFail.Store("")
				e.seed(t)
				before := e.snapshot(t)
				for hook, write := range map[string]func() error{
					"AfterUpdate": func() error {
						return e.db.Model(&TPA2HookedOrder{}).Where("user_id IN ?", []int64{0, 1}).Update("amount", 55).Error
					},
					"AfterDelete": func() error {
						return e.db.Where("user_id IN ?", []int64{0, 1}).Delete(&TPA2HookedOrder{}).Error
					},
				} {
					tpa2HookFail.Store(hook)
					if err := write(); err == nil || !strings.Contains(err.Error(), hook+" refuses") {
						t.Fatalf("write with a failing %s = %v", hook, err)
					}
					if after := e.snapshot(t); after != before {
						t.Fatalf("write failed by %s, yet changed the tables:\nbefore %s\nafter  %s", hook, before, after)
					}
				}
			})
		}
	}
}

// Under SkipDefaultTransaction, a parent with children in the other data
// source is created, saved (FullSaveAssociations) and deleted with its
// children (Select("Items")) in one two-phase transaction: a failure at
// commit leaves parents and children as they were.
func TestTwoPhaseWithoutDefaultTransactionParentAndChildrenInTwoDataSourcesStayTogether(t *testing.T) {
	var failNext atomic.Bool
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StagePrepared && failNext.Load() {
			return errors.New("injected failure after every branch prepared")
		}
		return nil
	})
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			cfg := func() *gorm.Config { return &gorm.Config{SkipDefaultTransaction: true} }
			e := newTwoPhaseOf(t, be, "assocskip_"+be, tpAssocRules, []any{&TPParent{}, &TPItem{}}, cfg, hook, gormplugin.WithScatter())
			failing := func(what string, write func() error, parents, items [2]int64) {
				t.Helper()
				failNext.Store(true)
				err := write()
				failNext.Store(false)
				if err == nil || !strings.Contains(err.Error(), "injected failure") {
					t.Fatalf("%s = %v, want the injected failure", what, err)
				}
				if p, i := e.counts(t, "tp_parents"), e.counts(t, "tp_items"); p != parents || i != items {
					t.Fatalf("after the failed %s: parents %v, items %v per data source; want %v, %v", what, p, i, parents, items)
				}
			}
			failing("Create", func() error {
				return e.db.Create(&TPParent{UserID: 1, Items: []TPItem{{UserID: 0, Name: "x"}, {UserID: 1, Name: "y"}}}).Error
			}, [2]int64{}, [2]int64{})
			parent := TPParent{UserID: 1, Items: []TPItem{{UserID: 0, Name: "x"}, {UserID: 1, Name: "y"}}}
			if err := e.db.Create(&parent).Error; err != nil {
				t.Fatal(err)
			}
			parent.Items[0].Name = "x2"
			parent.Items = append(parent.Items, TPItem{UserID: 0, Name: "z"})
			failing("Save", func() error {
				return e.db.Session(&gorm.Session{FullSaveAssociations: true}).Save(&parent).Error
			}, [2]int64{0, 1}, [2]int64{1, 1})
			var names []string
			for _, chk := range e.chk {
				var items []TPItem
				if err := chk.Order("name").Find(&items).Error; err != nil {
					t.Fatal(err)
				}
				for _, it := range items {
					names = append(names, it.Name)
				}
			}
			if fmt.Sprint(names) != "[x y]" {
				t.Fatalf("children after the failed Save: %v, want [x y]", names)
			}
			failing("Delete with its children", func() error {
				return e.db.Select("Items").Delete(&parent).Error
			}, [2]int64{0, 1}, [2]int64{1, 1})
		})
	}
}
