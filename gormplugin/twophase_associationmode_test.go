package gormplugin_test

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Association mode (Append, Replace, Delete, Clear) on a parent whose
// has-many children live in both data sources, inside a two-phase
// transaction: each operation's several statements (saving children,
// detaching the others over both data sources) are seen by a Count in
// the transaction and undone whole by its rollback; a committed Replace
// leaves exactly the new child attached.

func TestTwoPhaseAssociationModeOverChildrenInBothDataSourcesIsOneTransaction(t *testing.T) {
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			e := newTwoPhaseOf(t, be, "assocmode_"+be, tpAssocRules, []any{&TPParent{}, &TPItem{}}, nil, gormplugin.WithScatter())
			parent := TPParent{UserID: 0, Items: []TPItem{{UserID: 0, Name: "near"}, {UserID: 1, Name: "far"}}}
			if err := e.db.Create(&parent).Error; err != nil {
				t.Fatal(err)
			}
			children := func() string { // name@data source, attached (+) or not (-), sorted
				var out []string
				for i, chk := range e.chk {
					var items []TPItem
					if err := chk.Find(&items).Error; err != nil {
						t.Fatal(err)
					}
					for _, it := range items {
						out = append(out, fmt.Sprintf("%s@ds_%d%s", it.Name, i, map[bool]string{true: "+", false: "-"}[it.ParentID == parent.ID]))
					}
				}
				sort.Strings(out)
				return fmt.Sprint(out)
			}
			before := children()
			orig := append([]TPItem(nil), parent.Items...)
			for _, c := range []struct {
				op   string
				run  func(a *gorm.Association) error
				want int64
			}{
				{"Append", func(a *gorm.Association) error {
					return a.Append(&TPItem{UserID: 1, Name: "new1"}, &TPItem{UserID: 0, Name: "new0"})
				}, 4},
				{"Replace", func(a *gorm.Association) error { return a.Replace(&TPItem{UserID: 1, Name: "rep1"}) }, 1},
				{"Delete", func(a *gorm.Association) error { far := orig[1]; return a.Delete(&far) }, 1},
				{"Clear", func(a *gorm.Association) error { return a.Clear() }, 0},
			} {
				parent.Items = append([]TPItem(nil), orig...)
				var n int64
				err := e.db.Transaction(func(tx *gorm.DB) error {
					if err := c.run(tx.Model(&parent).Association("Items")); err != nil {
						return err
					}
					n = tx.Model(&parent).Association("Items").Count()
					return errors.New("the caller rolls back")
				})
				if err == nil || err.Error() != "the caller rolls back" {
					t.Fatalf("%s in a transaction: %v", c.op, err)
				}
				if n != c.want {
					t.Errorf("after %s the transaction counts %d children, want %d", c.op, n, c.want)
				}
				if after := children(); after != before {
					t.Fatalf("%s rolled back, yet the children changed: %s -> %s", c.op, before, after)
				}
			}
			parent.Items = append([]TPItem(nil), orig...)
			err := e.db.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&parent).Association("Items").Replace(&TPItem{UserID: 1, Name: "rep1"})
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := children(), "[far@ds_1- near@ds_0- rep1@ds_1+]"; got != want {
				t.Fatalf("after a committed Replace: %s, want %s", got, want)
			}
		})
	}
}
