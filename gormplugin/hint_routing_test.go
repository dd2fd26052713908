package gormplugin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// hintGormRules places hint_orders and its bound hint_items by
// HINT_INLINE on both strategies (id generated), hint_mixes by user_id
// across data sources and by hint within one, hint_users by a column
// only; hint_dicts is broadcast. Written as a ShardingSphere user writes
// a hint rule.
const hintGormRules = `
rules:
- !SHARDING
  tables:
    hint_orders:
      actualDataNodes: ds_${0..1}.hint_orders_${0..1}
      databaseStrategy:
        hint:
          shardingAlgorithmName: db_hint
      tableStrategy:
        hint:
          shardingAlgorithmName: order_hint
      keyGenerateStrategy:
        column: id
        keyGeneratorName: snow
    hint_items:
      actualDataNodes: ds_${0..1}.hint_items_${0..1}
      databaseStrategy:
        hint:
          shardingAlgorithmName: db_hint
      tableStrategy:
        hint:
          shardingAlgorithmName: item_hint
    hint_mixes:
      actualDataNodes: ds_${0..1}.hint_mixes_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: user_mod
      tableStrategy:
        hint:
          shardingAlgorithmName: mix_hint
    hint_users:
      actualDataNodes: ds_${0..1}.hint_users
      databaseStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: user_mod
  bindingTables:
    - hint_orders,hint_items
  broadcastTables:
    - hint_dicts
  shardingAlgorithms:
    db_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: ds_${value % 2}
    order_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: hint_orders_${value % 2}
    item_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: hint_items_${value % 2}
    mix_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: hint_mixes_${value}
    user_mod:
      type: MOD
      props:
        sharding-count: 2
  keyGenerators:
    snow:
      type: SNOWFLAKE
      props:
        worker-id: 9
`

type HintOrder struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	Status string `gorm:"size:16"`
	Items  []HintItem
}

type HintItem struct {
	ID          int64 `gorm:"primaryKey;autoIncrement:false"`
	HintOrderID int64
	Sku         string `gorm:"size:16"`
}

type HintMix struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	Note   string `gorm:"size:16"`
}

type HintUser struct {
	ID   int64  `gorm:"primaryKey;autoIncrement:false"`
	Name string `gorm:"size:16"`
}

type HintDict struct {
	K string `gorm:"primaryKey;size:16"`
	V string `gorm:"size:16"`
}

type HintNote struct { // not in the rules
	ID   int64  `gorm:"primaryKey"`
	Text string `gorm:"size:16"`
}

// eachHintBackend runs f on every backend with fresh databases migrated
// for hintGormRules.
func eachHintBackend(t *testing.T, name string, f func(t *testing.T, e *twoDS), opts ...gormplugin.Option) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDS(t, be, name+"_"+be, hintGormRules, nil,
				[]any{&HintOrder{}, &HintItem{}, &HintMix{}, &HintUser{}, &HintDict{}, &HintNote{}}, opts...)
			f(t, e)
		})
	}
}

// hintAt is a context hinting table at data source ds and table tb.
func hintAt(ctx context.Context, table string, ds, tb int) context.Context {
	return shardconf.WithHint(ctx, table, shardconf.Hint{Database: []any{ds}, Table: []any{tb}})
}

// where reads every physical table of table through connections without
// the plugin and returns the tables each id is in ("ds_i.table_j").
func (e *twoDS) where(t *testing.T, table string) map[int64][]string {
	t.Helper()
	out := map[int64][]string{}
	targets, err := e.rules.Targets(table)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		chk := e.chk[0]
		if tg.DataSource == "ds_1" {
			chk = e.chk[1]
		}
		var ids []int64
		if err := chk.Table(tg.Table).Pluck("id", &ids).Error; err != nil {
			t.Fatalf("read %s: %v", tg, err)
		}
		for _, id := range ids {
			out[id] = append(out[id], tg.String())
		}
	}
	return out
}

func wantIn(t *testing.T, got map[int64][]string, id int64, at string) {
	t.Helper()
	if len(got[id]) != 1 || got[id][0] != at {
		t.Errorf("row %d is in %v, want exactly %s", id, got[id], at)
	}
}

func idsOf(os []HintOrder) []int64 {
	var out []int64
	for _, o := range os {
		out = append(out, o.ID)
	}
	slices.Sort(out)
	return out
}

func TestHintGormPlacesCreateFindUpdateDeleteInTheHintedTable(t *testing.T) {
	eachHintBackend(t, "hint_crud", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		// One row per physical table, same values: only the hint differs.
		for i, at := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			o := HintOrder{ID: int64(100 + i), UserID: 7, Status: "new"}
			if err := e.db.WithContext(hintAt(bg, "hint_orders", at[0], at[1])).Create(&o).Error; err != nil {
				t.Fatal(err)
			}
		}
		got := e.where(t, "hint_orders")
		for i, at := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			wantIn(t, got, int64(100+i), fmt.Sprintf("ds_%d.hint_orders_%d", at[0], at[1]))
		}

		// A batch with generated keys lands whole in the hinted table.
		ctx := hintAt(bg, "hint_orders", 1, 0)
		batch := []HintOrder{{UserID: 1, Status: "gen"}, {UserID: 2, Status: "gen"}, {UserID: 3, Status: "gen"}}
		if err := e.db1.WithContext(ctx).CreateInBatches(&batch, 2).Error; err != nil {
			t.Fatal(err)
		}
		got = e.where(t, "hint_orders")
		for _, o := range batch {
			if o.ID == 0 {
				t.Fatalf("batch row without a generated key: %+v", batch)
			}
			wantIn(t, got, o.ID, "ds_1.hint_orders_0")
		}

		// Find reads the hinted table only; several values, their union.
		var found []HintOrder
		if err := e.db.WithContext(hintAt(bg, "hint_orders", 0, 1)).Where("user_id = ?", 7).Find(&found).Error; err != nil {
			t.Fatal(err)
		}
		if ids := idsOf(found); fmt.Sprint(ids) != "[101]" {
			t.Errorf("Find hinted at ds_0.hint_orders_1: %v, want [101]", ids)
		}
		both := shardconf.WithHint(bg, "hint_orders", shardconf.Hint{Database: []any{0}, Table: []any{0, 1}})
		found = nil
		if err := e.db.WithContext(both).Where("user_id = ?", 7).Order("id").Find(&found).Error; err != nil {
			t.Fatal(err)
		}
		if ids := idsOf(found); fmt.Sprint(ids) != "[100 101]" {
			t.Errorf("Find hinted at ds_0, both tables: %v, want [100 101]", ids)
		}

		// Update and Delete touch the hinted table's rows only.
		res := e.db1.WithContext(hintAt(bg, "hint_orders", 1, 1)).Model(&HintOrder{}).Where("user_id = ?", 7).Update("status", "paid")
		if res.Error != nil || res.RowsAffected != 1 {
			t.Errorf("hinted Update: %v, %d rows; want 1", res.Error, res.RowsAffected)
		}
		var paid []HintOrder
		if err := e.db.WithContext(both).Where("status = ?", "paid").Find(&paid).Error; err != nil || len(paid) != 0 {
			t.Errorf("paid rows in ds_0: %v, %v; want none", paid, err)
		}
		res = e.db.WithContext(hintAt(bg, "hint_orders", 0, 0)).Where("user_id = ?", 7).Delete(&HintOrder{})
		if res.Error != nil || res.RowsAffected != 1 {
			t.Errorf("hinted Delete: %v, %d rows; want 1", res.Error, res.RowsAffected)
		}
		got = e.where(t, "hint_orders")
		if _, ok := got[100]; ok {
			t.Errorf("row 100 still in %v after the Delete hinted at its table", got[100])
		}
		for _, id := range []int64{101, 102, 103} {
			if len(got[id]) != 1 {
				t.Errorf("row %d in %v after statements hinted elsewhere, want it kept", id, got[id])
			}
		}

		// Save of a loaded row and FirstOrCreate, under the row's hint.
		at := hintAt(bg, "hint_orders", 0, 1)
		var o HintOrder
		if err := e.db.WithContext(at).First(&o, 101).Error; err != nil {
			t.Fatal(err)
		}
		o.Status = "saved"
		if err := e.db.WithContext(at).Save(&o).Error; err != nil {
			t.Fatal(err)
		}
		var foc HintOrder
		if err := e.db.WithContext(at).Where(HintOrder{ID: 200, UserID: 8}).FirstOrCreate(&foc).Error; err != nil {
			t.Fatal(err)
		}
		got = e.where(t, "hint_orders")
		wantIn(t, got, 101, "ds_0.hint_orders_1")
		wantIn(t, got, 200, "ds_0.hint_orders_1")
		var back HintOrder
		if err := e.chk[0].Table("hint_orders_1").First(&back, 101).Error; err != nil || back.Status != "saved" {
			t.Errorf("row 101 after Save: %+v, %v; want status saved", back, err)
		}
	})
}

// Without a hint no statement on a hint-strategy table runs: each is
// ErrMissingShardingKey and the tables are as before.
func TestHintGormMissingIsErrMissingShardingKeyBeforeAnythingRuns(t *testing.T) {
	eachHintBackend(t, "hint_missing", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		kept := HintOrder{ID: 1, UserID: 1, Status: "kept"}
		if err := e.db.WithContext(hintAt(bg, "hint_orders", 0, 0)).Create(&kept).Error; err != nil {
			t.Fatal(err)
		}
		onlyTable := shardconf.WithHint(bg, "hint_orders", shardconf.Hint{Table: []any{1}})
		otherTable := hintAt(bg, "hint_items", 0, 0)
		for _, ctx := range []context.Context{bg, onlyTable, otherTable} {
			db := e.db.WithContext(ctx)
			checks := map[string]error{
				"Create":         db.Create(&HintOrder{ID: 2, UserID: 1}).Error,
				"Create keyless": db.Create(&HintOrder{UserID: 1}).Error,
				"Find":           db.Where("id = ?", 1).Find(&[]HintOrder{}).Error,
				"Count":          db.Model(&HintOrder{}).Count(new(int64)).Error,
				"Update":         db.Model(&HintOrder{}).Where("id = ?", 1).Update("status", "x").Error,
				"Delete":         db.Delete(&HintOrder{}, 1).Error,
				"Save":           db.Save(&HintOrder{ID: 1, UserID: 1, Status: "x"}).Error,
			}
			for what, err := range checks {
				if !errors.Is(err, shardconf.ErrMissingShardingKey) {
					t.Errorf("%s without a hint for hint_orders: %v, want ErrMissingShardingKey", what, err)
				}
			}
		}
		got := e.where(t, "hint_orders")
		if len(got) != 1 {
			t.Errorf("rows after refused statements: %v, want only row 1", got)
		}
		var back HintOrder
		if err := e.chk[0].Table("hint_orders_0").First(&back, 1).Error; err != nil || back.Status != "kept" {
			t.Errorf("row 1: %+v, %v; want status kept", back, err)
		}
	})
}

// A transaction's statements are routed by the context each one runs
// with: Transaction's callback inherits it, WithContext replaces it.
func TestHintGormTransactionStatementsRouteByTheirContext(t *testing.T) {
	eachHintBackend(t, "hint_tx", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		err := e.db1.WithContext(hintAt(bg, "hint_orders", 1, 1)).Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&HintOrder{ID: 1, UserID: 1, Status: "tx"}).Error; err != nil {
				return err
			}
			if err := tx.WithContext(hintAt(bg, "hint_orders", 1, 0)).Create(&HintOrder{ID: 2, UserID: 1, Status: "tx"}).Error; err != nil {
				return err
			}
			return tx.Model(&HintOrder{}).Where("id = ?", 1).Update("status", "txu").Error
		})
		if err != nil {
			t.Fatal(err)
		}
		err = e.db1.WithContext(hintAt(bg, "hint_orders", 1, 0)).Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&HintOrder{ID: 3, UserID: 1}).Error; err != nil {
				return err
			}
			return tx.WithContext(bg).Create(&HintOrder{ID: 4, UserID: 1}).Error
		})
		if !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("transaction with an unhinted Create: %v, want ErrMissingShardingKey", err)
		}
		// A hint to the other data source is refused inside the transaction.
		err = e.db1.WithContext(hintAt(bg, "hint_orders", 1, 0)).Transaction(func(tx *gorm.DB) error {
			return tx.WithContext(hintAt(bg, "hint_orders", 0, 0)).Create(&HintOrder{ID: 5, UserID: 1}).Error
		})
		if !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("Create hinted at another data source in a transaction: %v, want ErrUnsupported", err)
		}
		got := e.where(t, "hint_orders")
		if len(got) != 2 {
			t.Errorf("rows %v, want rows 1 and 2 only", got)
		}
		wantIn(t, got, 1, "ds_1.hint_orders_1")
		wantIn(t, got, 2, "ds_1.hint_orders_0")
		var back HintOrder
		if err := e.chk[1].Table("hint_orders_1").First(&back, 1).Error; err != nil || back.Status != "txu" {
			t.Errorf("row 1: %+v, %v; want status txu", back, err)
		}
	})
}

// Hints that cannot route the statement refuse it: a hint for a table
// routed by a column, for a broadcast table, for a table outside the
// rules; a Save or Create under a hint for another table than the row's
// is refused instead of writing the key in a second table.
func TestHintGormThatCannotBeHonouredRefusesTheStatement(t *testing.T) {
	eachHintBackend(t, "hint_unused", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		user := hintAt(bg, "hint_users", 0, 0)
		if err := e.db.WithContext(user).Create(&HintUser{ID: 2, Name: "a"}).Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("Create in a column-routed table under its hint: %v, want ErrUnusedHint", err)
		}
		if err := e.db.WithContext(user).Where("id = ?", 2).Find(&[]HintUser{}).Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("Find in a column-routed table under its hint: %v, want ErrUnusedHint", err)
		}
		dict := shardconf.WithHint(bg, "hint_dicts", shardconf.Hint{Database: []any{0}})
		if err := e.db.WithContext(dict).Create(&HintDict{K: "a", V: "b"}).Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("Create in a broadcast table under its hint: %v, want ErrUnusedHint", err)
		}
		if err := e.db.WithContext(dict).Find(&[]HintDict{}).Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("Find in a broadcast table under its hint: %v, want ErrUnusedHint", err)
		}
		note := shardconf.WithHint(bg, "hint_notes", shardconf.Hint{Database: []any{1}})
		if err := e.db.WithContext(note).Create(&HintNote{ID: 1, Text: "a"}).Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("Create in an unsharded table under its hint: %v, want ErrUnusedHint", err)
		}
		all := shardconf.WithHint(bg, shardconf.AllTables, shardconf.Hint{Database: []any{1}})
		if err := e.db.WithContext(all).Find(&[]HintNote{}).Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("Find in an unsharded table under an AllTables hint: %v, want ErrUnusedHint", err)
		}
		if err := e.db.WithContext(all).Exec("INSERT INTO hint_notes (id, text) VALUES (2, 'raw')").Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("raw SQL under an AllTables hint: %v, want ErrUnusedHint", err)
		}
		if err := e.db.WithContext(note).Exec("INSERT INTO hint_notes (id, text) VALUES (3, 'raw')").Error; !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("raw SQL on an unsharded table under its hint: %v, want ErrUnusedHint", err)
		}
		var n int64
		err := e.db.WithContext(hintAt(bg, "hint_orders", 1, 1)).Raw("SELECT count(*) FROM hint_orders_1").Scan(&n).Error
		if !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("raw read of a physical table under its logic table's hint: %v, want ErrUnsupported", err)
		}
		for i, chk := range e.chk {
			for _, tbl := range []string{"hint_users", "hint_dicts", "hint_notes"} {
				if tbl == "hint_notes" && i == 1 {
					continue // unsharded: on the default data source only
				}
				var n int64
				if err := chk.Table(tbl).Count(&n).Error; err != nil || n != 0 {
					t.Errorf("ds_%d.%s after refused statements: %d rows, %v; want 0", i, tbl, n, err)
				}
			}
		}

		// The row is in ds_0.hint_orders_0; a Save hinted at ds_0's other
		// table matches nothing there, and its upsert must not write the
		// key a second time.
		if err := e.db.WithContext(hintAt(bg, "hint_orders", 0, 0)).Create(&HintOrder{ID: 9, UserID: 1, Status: "a"}).Error; err != nil {
			t.Fatal(err)
		}
		err = e.db.WithContext(hintAt(bg, "hint_orders", 0, 1)).Save(&HintOrder{ID: 9, UserID: 1, Status: "b"}).Error
		if !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("Save under a hint for another table than the row's: %v, want ErrShardingKeyChange", err)
		}
		err = e.db.WithContext(hintAt(bg, "hint_orders", 0, 1)).Create(&HintOrder{ID: 9, UserID: 1, Status: "c"}).Error
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			t.Errorf("Create under a hint for another table than the key's: %v, want gorm.ErrDuplicatedKey", err)
		}
		wantIn(t, e.where(t, "hint_orders"), 9, "ds_0.hint_orders_0")
	})
}

// A column chooses the data source and the hint the table; an Update
// that moves the row to the other data source is refused with the hint
// still in force.
func TestHintGormAndColumnRouteTogether(t *testing.T) {
	eachHintBackend(t, "hint_mix", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		tbl := shardconf.WithHint(bg, "hint_mixes", shardconf.Hint{Table: []any{1}})
		if err := e.db.WithContext(tbl).Create(&HintMix{ID: 1, UserID: 4, Note: "a"}).Error; err != nil {
			t.Fatal(err)
		}
		if err := e.db1.WithContext(tbl).Create(&HintMix{ID: 2, UserID: 5, Note: "b"}).Error; err != nil {
			t.Fatal(err)
		}
		got := e.where(t, "hint_mixes")
		wantIn(t, got, 1, "ds_0.hint_mixes_1")
		wantIn(t, got, 2, "ds_1.hint_mixes_1")
		if err := e.db.WithContext(bg).Create(&HintMix{ID: 3, UserID: 4}).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("Create without the table hint: %v, want ErrMissingShardingKey", err)
		}
		res := e.db.WithContext(tbl).Model(&HintMix{}).Where("user_id = ? AND id = ?", 4, 1).Update("user_id", 6)
		if res.Error != nil || res.RowsAffected != 1 {
			t.Errorf("Update keeping the data source: %v, %d rows; want 1", res.Error, res.RowsAffected)
		}
		err := e.db.WithContext(tbl).Model(&HintMix{}).Where("user_id = ? AND id = ?", 6, 1).Update("user_id", 7).Error
		if !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("Update moving the row to the other data source: %v, want ErrShardingKeyChange", err)
		}
		// Save of a new row: GORM's upsert, whose update part sets user_id
		// from the inserted row, checked with the hint in force.
		if err := e.db.WithContext(tbl).Save(&HintMix{ID: 5, UserID: 4, Note: "s"}).Error; err != nil {
			t.Fatal(err)
		}
		got = e.where(t, "hint_mixes")
		wantIn(t, got, 1, "ds_0.hint_mixes_1")
		wantIn(t, got, 5, "ds_0.hint_mixes_1")
	})
}

// Bound tables: a Joins read follows the driving table's hint, a
// disagreeing hint for the partner is refused; a Create with its
// children and a Preload route each table by its own hint.
func TestHintGormBoundTablesFollowTheirHints(t *testing.T) {
	eachHintBackend(t, "hint_bound", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		both := hintAt(hintAt(bg, "hint_orders", 0, 1), "hint_items", 0, 1)
		o := HintOrder{ID: 1, UserID: 1, Status: "j", Items: []HintItem{{ID: 11, Sku: "a"}, {ID: 12, Sku: "b"}}}
		if err := e.db.WithContext(both).Create(&o).Error; err != nil {
			t.Fatal(err)
		}
		wantIn(t, e.where(t, "hint_orders"), 1, "ds_0.hint_orders_1")
		items := e.where(t, "hint_items")
		wantIn(t, items, 11, "ds_0.hint_items_1")
		wantIn(t, items, 12, "ds_0.hint_items_1")

		var loaded HintOrder
		if err := e.db.WithContext(both).Preload("Items").First(&loaded, 1).Error; err != nil {
			t.Fatal(err)
		}
		if len(loaded.Items) != 2 {
			t.Errorf("Preload under both hints: %+v, want 2 items", loaded)
		}
		var skus []string
		join := e.db.WithContext(hintAt(bg, "hint_orders", 0, 1)).Model(&HintOrder{}).
			Joins("JOIN hint_items ON hint_items.hint_order_id = hint_orders.id").Order("hint_items.sku")
		if err := join.Pluck("hint_items.sku", &skus).Error; err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(skus) != "[a b]" {
			t.Errorf("Joins read under the driving table's hint: %v, want [a b]", skus)
		}
		disagree := hintAt(hintAt(bg, "hint_orders", 0, 1), "hint_items", 0, 0)
		err := e.db.WithContext(disagree).Model(&HintOrder{}).
			Joins("JOIN hint_items ON hint_items.hint_order_id = hint_orders.id").Pluck("hint_items.sku", &skus).Error
		if !errors.Is(err, gormplugin.ErrUnsupported) || !strings.Contains(err.Error(), "hint_items") {
			t.Errorf("Joins read whose partner hint disagrees: %v, want ErrUnsupported naming hint_items", err)
		}
	})
}

// WithScatter: without a hint a read goes to every table; with one, to
// the hinted table; a Create still needs the hint.
func TestHintGormScatterReadsEveryTableWithoutAHint(t *testing.T) {
	eachHintBackend(t, "hint_scatter", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		for i, at := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			db := e.db
			if at[0] == 1 {
				db = e.db1
			}
			if err := db.WithContext(hintAt(bg, "hint_orders", at[0], at[1])).Create(&HintOrder{ID: int64(i + 1), UserID: 1}).Error; err != nil {
				t.Fatal(err)
			}
		}
		var all []HintOrder
		if err := e.db.WithContext(bg).Order("id").Find(&all).Error; err != nil {
			t.Fatal(err)
		}
		if ids := idsOf(all); fmt.Sprint(ids) != "[1 2 3 4]" {
			t.Errorf("scatter Find without a hint: %v, want [1 2 3 4]", ids)
		}
		var one []HintOrder
		if err := e.db.WithContext(hintAt(bg, "hint_orders", 1, 0)).Find(&one).Error; err != nil {
			t.Fatal(err)
		}
		if ids := idsOf(one); fmt.Sprint(ids) != "[3]" {
			t.Errorf("scatter Find with a hint: %v, want [3]", ids)
		}
		if err := e.db.WithContext(bg).Create(&HintOrder{ID: 9, UserID: 1}).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("Create without a hint under WithScatter: %v, want ErrMissingShardingKey", err)
		}
	}, gormplugin.WithScatter())
}
