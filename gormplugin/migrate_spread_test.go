package gormplugin_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/gormplugin"
)

// MigOrder is sharded over mig_orders_0 and mig_orders_1; it has an index
// named by GORM (idx_<table>_user_id) and one named explicitly.
type MigOrder struct {
	ID     int64  `gorm:"primaryKey"`
	UserID int64  `gorm:"index"`
	Code   string `gorm:"size:32;index:idx_mig_code"`
	Note   string `gorm:"size:64"`
}

func (MigOrder) TableName() string { return "mig_orders" }

// MigOrderV2 is MigOrder with one more column.
type MigOrderV2 struct {
	MigOrder
	Extra string `gorm:"size:16"`
}

func (MigOrderV2) TableName() string { return "mig_orders" }

const migRules = `
dataSources:
  ds: {driver: sqlite, dsn: "file:unused"}
rules:
- !SHARDING
  tables:
    mig_orders:
      actualDataNodes: ds.mig_orders_${0..1}
      tableStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
`

// TestMigratorActsOnEveryPhysicalTable: the Migrator's table, column and
// index operations on a sharded model act on each physical table; its
// questions are yes only when every physical table says yes; what
// describes one table is refused.
func TestMigratorActsOnEveryPhysicalTable(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			d := dialectorFor(t, be, "gormsurf_migrator_"+be)
			db := reopen(t, d, nil)
			if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, migRules)))); err != nil {
				t.Fatal(err)
			}
			raw := reopen(t, d, nil)
			mg := db.Migrator()
			must := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			check := func(what string, got, want bool) {
				t.Helper()
				if got != want {
					t.Fatalf("%s: %v, want %v", what, got, want)
				}
			}
			// rawIndex: whether physical table i has index name as the
			// database names it.
			codeIndex := func(table string) string {
				if be == "mariadb" {
					return "idx_mig_code" // index names are per table
				}
				return "idx_mig_code_" + table
			}
			rawHasIndex := func(table, name string) bool {
				return raw.Migrator().HasIndex(table, name)
			}
			check("HasTable before AutoMigrate", mg.HasTable(&MigOrder{}), false)
			must("AutoMigrate", db.AutoMigrate(&MigOrder{}))
			must("AutoMigrate again", db.AutoMigrate(&MigOrder{}))
			for _, tb := range []string{"mig_orders_0", "mig_orders_1"} {
				check(tb+" exists", raw.Migrator().HasTable(tb), true)
				check(tb+" derived index", rawHasIndex(tb, "idx_"+tb+"_user_id"), true)
				check(tb+" explicit index", rawHasIndex(tb, codeIndex(tb)), true)
			}
			check("HasTable(model)", mg.HasTable(&MigOrder{}), true)
			check("HasTable(logic name)", mg.HasTable("mig_orders"), true)
			check("HasIndex(derived name)", mg.HasIndex(&MigOrder{}, "idx_mig_orders_user_id"), true)
			check("HasIndex(field)", mg.HasIndex(&MigOrder{}, "UserID"), true)
			check("HasIndex(explicit name)", mg.HasIndex(&MigOrder{}, "idx_mig_code"), true)
			check("HasColumn", mg.HasColumn(&MigOrder{}, "note"), true)

			must("DropIndex", mg.DropIndex(&MigOrder{}, "idx_mig_code"))
			check("HasIndex after DropIndex", mg.HasIndex(&MigOrder{}, "idx_mig_code"), false)
			must("CreateIndex", mg.CreateIndex(&MigOrder{}, "idx_mig_code"))
			check("HasIndex after CreateIndex", mg.HasIndex(&MigOrder{}, "idx_mig_code"), true)
			must("RenameIndex", mg.RenameIndex(&MigOrder{}, "idx_mig_code", "idx_mig_code2"))
			check("HasIndex(renamed)", mg.HasIndex(&MigOrder{}, "idx_mig_code2"), true)
			check("HasIndex(old name)", mg.HasIndex(&MigOrder{}, "idx_mig_code"), false)
			must("DropIndex(derived name)", mg.DropIndex(&MigOrder{}, "idx_mig_orders_user_id"))
			for _, tb := range []string{"mig_orders_0", "mig_orders_1"} {
				check(tb+" dropped derived index", rawHasIndex(tb, "idx_"+tb+"_user_id"), false)
			}

			// The SQLite driver's DropColumn, RenameColumn and AlterColumn
			// rebuild the table without its indexes, as without sharding.
			must("AddColumn", mg.AddColumn(&MigOrderV2{}, "Extra"))
			check("HasColumn(added)", mg.HasColumn(&MigOrderV2{}, "Extra"), true)
			must("raw DropColumn on one table", raw.Table("mig_orders_1").Migrator().DropColumn(&MigOrderV2{}, "extra"))
			check("HasColumn with one table lacking it", mg.HasColumn(&MigOrderV2{}, "Extra"), false)
			must("raw AddColumn back", raw.Table("mig_orders_1").Migrator().AddColumn(&MigOrderV2{}, "Extra"))
			must("RenameColumn", mg.RenameColumn(&MigOrderV2{}, "extra", "extra_two"))
			check("HasColumn(renamed)", mg.HasColumn(&MigOrderV2{}, "extra_two"), true)
			check("HasColumn(old name)", mg.HasColumn(&MigOrderV2{}, "extra"), false)
			must("DropColumn", mg.DropColumn(&MigOrderV2{}, "extra_two"))
			for _, tb := range []string{"mig_orders_0", "mig_orders_1"} {
				check(tb+" dropped column", raw.Migrator().HasColumn(tb, "extra_two"), false)
			}

			must("AlterColumn", mg.AlterColumn(&MigOrder{}, "Note"))

			if _, err := mg.ColumnTypes(&MigOrder{}); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Fatalf("ColumnTypes: %v", err)
			}
			if err := mg.RenameTable(&MigOrder{}, "other_orders"); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Fatalf("RenameTable: %v", err)
			}
			if err := mg.CreateConstraint(&MigOrder{}, "fk"); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Fatalf("CreateConstraint: %v", err)
			}

			must("raw DropTable of one table", raw.Migrator().DropTable("mig_orders_1"))
			check("HasTable with one table missing", mg.HasTable(&MigOrder{}), false)
			must("AutoMigrate recreates it", db.AutoMigrate(&MigOrder{}))
			must("DropTable", mg.DropTable(&MigOrder{}))
			check("HasTable after DropTable", mg.HasTable(&MigOrder{}), false)
			tables, err := raw.Migrator().GetTables()
			must("GetTables", err)
			if slices.ContainsFunc(tables, func(s string) bool { return strings.HasPrefix(s, "mig_orders") }) {
				t.Fatalf("tables left: %v", tables)
			}
			must("DropTable(logic name) of no table", mg.DropTable("mig_orders"))
		})
	}
}
