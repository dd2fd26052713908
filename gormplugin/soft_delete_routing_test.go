package gormplugin_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/gormplugin"
)

// SoftItem is soft-deleted (gorm.DeletedAt).
type SoftItem struct {
	ID        int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID    int64
	Note      string `gorm:"size:20"`
	DeletedAt gorm.DeletedAt
}

// softEnv is a sharded database (two data sources) and an oracle: one
// plain soft_items table holding the same rows, given the same statements.
type softEnv struct {
	db, oracle *gorm.DB
	raw        map[string]*gorm.DB // data source -> a handle without the plugin
}

func newSoftEnv(t *testing.T, be string) *softEnv {
	t.Helper()
	d0 := dialectorFor(t, be, "softdel_"+be+"_ds0")
	d1 := dialectorFor(t, be, "softdel_"+be+"_ds1")
	e := &softEnv{db: reopen(t, d0, nil), oracle: reopen(t, dialectorFor(t, be, "softdel_"+be+"_oracle"), nil),
		raw: map[string]*gorm.DB{"ds_0": reopen(t, d0, nil), "ds_1": reopen(t, d1, nil)}}
	p0, _ := e.db.DB()
	p1, _ := e.raw["ds_1"].DB()
	if err := e.db.Use(gormplugin.New(nil, gormplugin.WithRules(twoByTwoRules(t, "soft_items")),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}), gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		if err := db.AutoMigrate(&SoftItem{}); err != nil {
			t.Fatal(err)
		}
		for u := int64(0); u < 2; u++ { // one batch per user: one data source
			var batch []SoftItem
			for id := int64(1); id <= 40; id++ {
				if id/2%2 == u { // each user has odd and even ids: both tables
					batch = append(batch, SoftItem{ID: id, UserID: u, Note: fmt.Sprint("n", id)})
				}
			}
			if err := db.Create(&batch).Error; err != nil {
				t.Fatal("create:", err)
			}
		}
	}
	return e
}

// both runs a write on the sharded database and on the oracle; the rows
// affected must be the same (the sum over the tables the write reached).
func (e *softEnv) both(t *testing.T, what string, write func(db *gorm.DB) *gorm.DB) {
	t.Helper()
	got, want := write(e.db), write(e.oracle)
	if got.Error != nil || want.Error != nil {
		t.Fatalf("%s: sharded %v, oracle %v", what, got.Error, want.Error)
	}
	if got.RowsAffected != want.RowsAffected || want.RowsAffected == 0 {
		t.Fatalf("%s: %d rows affected, one table gives %d", what, got.RowsAffected, want.RowsAffected)
	}
}

// state is every row, soft-deleted or not, ordered by id: what Find
// shows, and what Unscoped shows.
func state(t *testing.T, db *gorm.DB) (live, all []SoftItem) {
	t.Helper()
	if err := db.Order("id").Find(&live).Error; err != nil {
		t.Fatal("find:", err)
	}
	if err := db.Unscoped().Order("id").Find(&all).Error; err != nil {
		t.Fatal("unscoped find:", err)
	}
	return live, all
}

// same checks that the sharded database holds what the oracle holds:
// Find hides the same soft-deleted rows and Unscoped shows them, and each
// row is in the physical table its keys route to, and in no other.
func (e *softEnv) same(t *testing.T) {
	t.Helper()
	gl, ga := state(t, e.db)
	wl, wa := state(t, e.oracle)
	if softIDs(gl) != softIDs(wl) || softIDs(ga) != softIDs(wa) {
		t.Fatalf("Find %s / Unscoped %s, one table gives %s / %s", softIDs(gl), softIDs(ga), softIDs(wl), softIDs(wa))
	}
	for i := range wa {
		g, w := ga[i], wa[i]
		if g.Note != w.Note || g.DeletedAt.Valid != w.DeletedAt.Valid {
			t.Fatalf("row %d: %+v, one table gives %+v", w.ID, g, w)
		}
	}
	for ds, raw := range e.raw {
		for tb := 0; tb < 2; tb++ {
			var rows []SoftItem
			table := fmt.Sprint("soft_items_", tb)
			if err := raw.Table(table).Unscoped().Order("id").Find(&rows).Error; err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if fmt.Sprint("ds_", r.UserID%2) != ds || r.ID%2 != int64(tb) {
					t.Fatalf("row %d (user %d) is in %s.%s", r.ID, r.UserID, ds, table)
				}
			}
		}
	}
}

func softIDs(rows []SoftItem) string {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return fmt.Sprint(out)
}

// deletedAt lists the distinct deleted_at times of the soft-deleted rows.
func deletedAt(t *testing.T, db *gorm.DB, user int64) []time.Time {
	t.Helper()
	var rows []SoftItem
	if err := db.Unscoped().Where("user_id = ? AND deleted_at IS NOT NULL", user).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for _, r := range rows {
		if !slices.ContainsFunc(out, r.DeletedAt.Time.Equal) {
			out = append(out, r.DeletedAt.Time)
		}
	}
	return out
}

var softBackends = []string{"sqlite", "postgres", "mariadb"}

func TestSoftDeleteOverTablesOfOneDataSourceHidesTheRowsInEachTable(t *testing.T) {
	for _, be := range softBackends {
		t.Run(be, func(t *testing.T) {
			e := newSoftEnv(t, be)
			for u := int64(0); u < 2; u++ {
				e.both(t, "soft delete", func(db *gorm.DB) *gorm.DB {
					return db.Where("user_id = ? AND id % 3 = 0", u).Delete(&SoftItem{})
				})
			}
			e.same(t)
			// Again: the rows already soft-deleted are not counted twice.
			e.both(t, "soft delete again", func(db *gorm.DB) *gorm.DB {
				return db.Where("user_id = ? AND id % 2 = 0", 0).Delete(&SoftItem{})
			})
			e.same(t)
			// One statement stamps one time, in every table it reached.
			if ts := deletedAt(t, e.db, 1); len(ts) != 1 {
				t.Fatalf("the soft-deleted rows of user 1 have %d deleted_at times: %v", len(ts), ts)
			}
		})
	}
}

func TestHardDeleteOverTablesOfOneDataSourceRemovesTheRowsOfEachTable(t *testing.T) {
	for _, be := range softBackends {
		t.Run(be, func(t *testing.T) {
			e := newSoftEnv(t, be)
			e.both(t, "soft delete", func(db *gorm.DB) *gorm.DB {
				return db.Where("user_id = ? AND id % 3 = 0", 1).Delete(&SoftItem{})
			})
			// Unscoped deletes soft-deleted rows too.
			e.both(t, "hard delete", func(db *gorm.DB) *gorm.DB {
				return db.Unscoped().Where("user_id = ? AND id % 2 = 1", 1).Delete(&SoftItem{})
			})
			e.same(t)
		})
	}
}

func TestUpdateOverTablesOfOneDataSourceSkipsSoftDeletedRows(t *testing.T) {
	for _, be := range softBackends {
		t.Run(be, func(t *testing.T) {
			e := newSoftEnv(t, be)
			e.both(t, "soft delete", func(db *gorm.DB) *gorm.DB {
				return db.Where("user_id = ? AND id % 3 = 0", 0).Delete(&SoftItem{})
			})
			e.both(t, "Update", func(db *gorm.DB) *gorm.DB {
				return db.Model(&SoftItem{}).Where("user_id = ?", 0).Update("note", "u")
			})
			e.same(t)
			e.both(t, "Updates of a map", func(db *gorm.DB) *gorm.DB {
				return db.Model(&SoftItem{}).Where("user_id = ? AND id > ?", 0, 20).Updates(map[string]any{"note": "m"})
			})
			e.same(t)
			e.both(t, "UpdateColumn", func(db *gorm.DB) *gorm.DB {
				return db.Model(&SoftItem{}).Where("user_id = ?", 0).UpdateColumn("note", "c")
			})
			e.same(t)
			// A SET of the caller's own: GORM adds the soft-delete condition
			// while building, once per table.
			e.both(t, "Updates with a SET clause", func(db *gorm.DB) *gorm.DB {
				return db.Model(&SoftItem{}).Where("user_id = ?", 0).
					Clauses(clause.Set{{Column: clause.Column{Name: "note"}, Value: "s"}}).Updates(map[string]any{})
			})
			e.same(t)
		})
	}
}

func TestSoftDeleteOfLoadedRowsOverTablesOfOneDataSource(t *testing.T) {
	for _, be := range softBackends {
		t.Run(be, func(t *testing.T) {
			e := newSoftEnv(t, be)
			for _, db := range []*gorm.DB{e.db, e.oracle} {
				var one SoftItem
				if err := db.Where("user_id = ? AND id = ?", 1, 31).First(&one).Error; err != nil {
					t.Fatal(err)
				}
				if res := db.Delete(&one); res.Error != nil || res.RowsAffected != 1 || !one.DeletedAt.Valid {
					t.Fatalf("Delete(&row): %v, %d rows, deleted_at %v", res.Error, res.RowsAffected, one.DeletedAt)
				}
			}
			e.same(t)
			var gl, ol []SoftItem
			for db, rows := range map[*gorm.DB]*[]SoftItem{e.db: &gl, e.oracle: &ol} {
				if err := db.Where("user_id = ? AND id < ?", 1, 20).Order("id").Find(rows).Error; err != nil {
					t.Fatal(err)
				}
			}
			if softIDs(gl) != softIDs(ol) || len(gl) < 2 {
				t.Fatalf("loaded %s, one table gives %s", softIDs(gl), softIDs(ol))
			}
			// A loaded row soft-deleted since, in the table the delete reaches
			// last: it is not deleted again (its deleted_at stays, and it is
			// not counted).
			e.both(t, "soft delete of row 3", func(db *gorm.DB) *gorm.DB {
				return db.Where("user_id = ? AND id = ?", 1, 3).Delete(&SoftItem{})
			})
			var before SoftItem
			if err := e.db.Unscoped().Where("user_id = ? AND id = ?", 1, 3).First(&before).Error; err != nil {
				t.Fatal(err)
			}
			// The loaded rows span both tables of user 1's data source.
			e.both(t, "Delete(&rows)", func(db *gorm.DB) *gorm.DB {
				rows := gl
				if db == e.oracle {
					rows = ol
				}
				return db.Where("user_id = ?", 1).Delete(&rows)
			})
			var after SoftItem
			if err := e.db.Unscoped().Where("user_id = ? AND id = ?", 1, 3).First(&after).Error; err != nil {
				t.Fatal(err)
			}
			if !after.DeletedAt.Time.Equal(before.DeletedAt.Time) {
				t.Fatalf("row 3, soft-deleted at %v, was stamped again: %v", before.DeletedAt.Time, after.DeletedAt.Time)
			}
			for _, r := range gl {
				if !r.DeletedAt.Valid {
					t.Fatalf("loaded row %d has no deleted_at after the delete", r.ID)
				}
			}
			e.same(t)
		})
	}
}
