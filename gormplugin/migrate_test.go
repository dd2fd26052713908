package gormplugin_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// KfOrder is sharded over kf_orders_0 and kf_orders_1 by id % 2.
type KfOrder struct {
	ID     int64
	UserID int64 `gorm:"index"`
	Amount int
}

// KfInvoice is sharded by invoice_no, the column its rule fills; its
// primary key stays GORM's auto-increment.
type KfInvoice struct {
	ID        int64
	InvoiceNo int64
	Note      string `gorm:"size:64"`
}

const kfRulesText = `
dataSources:
  ds: {driver: sqlite, dsn: "file:unused"}
rules:
- !SHARDING
  tables:
    kf_orders:
      actualDataNodes: ds.kf_orders_${0..1}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
      keyGenerateStrategy: {column: id, keyGeneratorName: sf9}
    kf_invoices:
      actualDataNodes: ds.kf_invoices_${0..1}
      tableStrategy: {standard: {shardingColumn: invoice_no, shardingAlgorithmName: by_no}}
      keyGenerateStrategy: {column: invoice_no, keyGeneratorName: sf9}
  shardingAlgorithms:
    by_id: {type: MOD, props: {sharding-count: 2}}
    by_no: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    sf9: {type: SNOWFLAKE, props: {worker-id: 9}}
`

func kfRules(t testing.TB, text string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// keyColumn is what the database says about a column.
type keyColumn struct {
	typ  string // data type as the database names it
	auto bool   // identity, sequence default, AUTO_INCREMENT or AUTOINCREMENT
	info string // the raw facts, for messages
}

func kfColumn(t *testing.T, db *gorm.DB, table, column string) keyColumn {
	t.Helper()
	raw := db.Session(&gorm.Session{NewDB: true})
	switch db.Dialector.Name() {
	case "sqlite":
		var ddl string
		if err := raw.Raw("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&ddl).Error; err != nil || ddl == "" {
			t.Fatalf("sqlite_master %s: %q, %v", table, ddl, err)
		}
		m := regexpColumn(column).FindStringSubmatch(ddl)
		if m == nil {
			t.Fatalf("%s: no column %s in %s", table, column, ddl)
		}
		return keyColumn{typ: m[1], auto: strings.Contains(strings.ToUpper(m[2]), "AUTOINCREMENT"), info: ddl}
	case "postgres":
		var (
			typ, identity string
			def, seq      sql.NullString
		)
		row := raw.Raw(`SELECT data_type, column_default, is_identity, pg_get_serial_sequence(quote_ident(table_name), column_name)
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?`, table, column).Row()
		if err := row.Scan(&typ, &def, &identity, &seq); err != nil {
			t.Fatalf("information_schema %s.%s: %v", table, column, err)
		}
		return keyColumn{typ: typ, auto: def.Valid || identity != "NO" || seq.Valid,
			info: "default=" + def.String + " identity=" + identity + " sequence=" + seq.String}
	default:
		var typ, colType, extra string
		row := raw.Raw(`SELECT DATA_TYPE, COLUMN_TYPE, EXTRA FROM information_schema.COLUMNS
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`, table, column).Row()
		if err := row.Scan(&typ, &colType, &extra); err != nil {
			t.Fatalf("information_schema %s.%s: %v", table, column, err)
		}
		return keyColumn{typ: typ, auto: strings.Contains(strings.ToLower(extra), "auto_increment"), info: colType + " " + extra}
	}
}

func regexpColumn(column string) *regexp.Regexp {
	return regexp.MustCompile("[`\"]" + column + "[`\"] ([a-z]+)([^,)]*)")
}

// wantPlainKey: a bigint (SQLite: integer) with no database-side key source.
func wantPlainKey(t *testing.T, db *gorm.DB, table, column string) {
	t.Helper()
	c := kfColumn(t, db, table, column)
	want := "bigint"
	if db.Dialector.Name() == "sqlite" {
		want = "integer"
	}
	if c.typ != want || c.auto {
		t.Fatalf("%s.%s: %s, auto-increment %v (%s); want a plain %s", table, column, c.typ, c.auto, c.info, want)
	}
}

// TestMigratePlainKeys: AutoMigrate and CreateTable create keyed models'
// keys as plain bigint columns, with and without autoIncrement:false, and
// leave opted-out models auto-increment.
func TestMigratePlainKeys(t *testing.T) {
	for _, be := range kfBackends {
		t.Run(be.name, func(t *testing.T) {
			db := kfOpen(t, be.name, be.open(t, "gormplugin_migrate_"+be.name))
			kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(kfSnowflake(t, 7))))
			if err := db.AutoMigrate(kfModels...); err != nil {
				t.Fatal(err)
			}
			for _, table := range []string{"kf_users", "kf_plain_ids", "kf_u64", "kf_gorm_models", "kf_authors", "kf_books", "kf_posts", "kf_categories"} {
				wantPlainKey(t, db, table, "id")
			}
			wantPlainKey(t, db, "kf_opt_ins", "trace_id")
			for _, table := range []string{"kf_opt_outs", "kf_opt_ins"} {
				if c := kfColumn(t, db, table, "id"); !c.auto {
					t.Fatalf("%s.id: %s (%s); opted out, it should stay auto-increment", table, c.typ, c.info)
				}
			}
			// CreateTable too, on a model no statement has touched yet.
			type KfFresh struct {
				ID   int64
				Name string
			}
			if err := db.Migrator().CreateTable(&KfFresh{}); err != nil {
				t.Fatal(err)
			}
			wantPlainKey(t, db, "kf_freshes", "id")

			// The wrapper is the driver's dialector for everything else.
			u, ok := db.Dialector.(interface{ Unwrap() gorm.Dialector })
			if !ok {
				t.Fatalf("dialector %T has no Unwrap", db.Dialector)
			}
			switch u.Unwrap().(type) {
			case *sqlite.Dialector, *postgres.Dialector, *mysql.Dialector:
			default:
				t.Fatalf("Unwrap = %T", u.Unwrap())
			}
		})
	}
}

// Without the plugin the same checks see GORM's auto-increment: the test
// can tell the difference.
func TestMigrateWithoutPluginIsAutoIncrement(t *testing.T) {
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "n.db")))
	if err := db.AutoMigrate(&KfUser{}, &KfPlainID{}); err != nil {
		t.Fatal(err)
	}
	if c := kfColumn(t, db, "kf_users", "id"); !c.auto {
		t.Fatalf("without the plugin kf_users.id is %s (%s)", c.typ, c.info)
	}
	wantPlainKey(t, db, "kf_plain_ids", "id")
}

// TestMigrateSharded: a sharded model's physical tables are created, not
// its logic table, each with a plain key; rules generators and the props
// generator each fill their tables.
func TestMigrateSharded(t *testing.T) {
	for _, be := range kfBackends {
		t.Run(be.name, func(t *testing.T) {
			db := kfOpen(t, be.name, be.open(t, "gormplugin_sharded_"+be.name))
			props := kfSnowflake(t, 5)
			kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(props), gormplugin.WithRules(kfRules(t, kfRulesText))))
			if err := db.AutoMigrate(&KfOrder{}, &KfInvoice{}, &KfUser{}); err != nil {
				t.Fatal(err)
			}
			m := db.Migrator()
			// HasTable("kf_orders") asks every physical table; the list of
			// tables shows that no table of the logic name was created.
			if tables, err := m.GetTables(); err != nil || slices.Contains(tables, "kf_orders") {
				t.Fatalf("the logic table kf_orders was created: %v %v", tables, err)
			}
			if !m.HasTable("kf_orders") {
				t.Fatal("HasTable(kf_orders): false, with every physical table created")
			}
			for _, table := range []string{"kf_orders_0", "kf_orders_1"} {
				if !m.HasTable(table) {
					t.Fatalf("%s missing", table)
				}
				wantPlainKey(t, db, table, "id")
				if !db.Table(table).Migrator().HasIndex(&KfOrder{}, "idx_"+table+"_user_id") {
					t.Fatalf("%s has no index on user_id", table)
				}
			}
			wantPlainKey(t, db, "kf_users", "id")
			// invoice_no is the rule's column; the primary key stays GORM's.
			for _, table := range []string{"kf_invoices_0", "kf_invoices_1"} {
				if c := kfColumn(t, db, table, "id"); !c.auto {
					t.Fatalf("%s.id: %s (%s), want auto-increment", table, c.typ, c.info)
				}
				wantPlainKey(t, db, table, "invoice_no")
			}
			// Migrating again changes nothing.
			if err := db.AutoMigrate(&KfOrder{}, &KfInvoice{}, &KfUser{}); err != nil {
				t.Fatal(err)
			}
			if tables, err := m.GetTables(); err != nil || slices.Contains(tables, "kf_orders") {
				t.Fatalf("the logic table kf_orders was created: %v %v", tables, err)
			}

			sf9, err := keygen.LayoutFor("SNOWFLAKE", nil)
			if err != nil {
				t.Fatal(err)
			}
			worker := func(id int64) int64 {
				p, err := sf9.Decompose(id)
				if err != nil {
					t.Fatal(err)
				}
				return p.Worker
			}
			// A physical table is keyed as its logic table; a row goes
			// into it only if its key routes there.
			o := KfOrder{UserID: 1, Amount: 2}
			if err := db.Table("kf_orders_1").Create(&o).Error; err != nil {
				if !errors.Is(err, gormplugin.ErrUnsupported) || o.ID%2 != 0 {
					t.Fatalf("create in kf_orders_1 of id %d: %v", o.ID, err)
				}
				if err := db.Table("kf_orders_0").Create(&o).Error; err != nil {
					t.Fatal(err)
				}
			}
			if worker(o.ID) != 9 {
				t.Fatalf("kf_orders_1 key %d from worker %d, want the rule's 9", o.ID, worker(o.ID))
			}
			u := KfUser{Name: "u"}
			if err := db.Create(&u).Error; err != nil {
				t.Fatal(err)
			}
			if worker(u.ID) != 5 {
				t.Fatalf("kf_users key from worker %d, want the props generator's 5", worker(u.ID))
			}
		})
	}
}

// TestMigrateShardedCreateRouted: keys filled before routing (fillKeysNow)
// decide the physical table.
func TestMigrateShardedCreateRouted(t *testing.T) {
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "r.db")))
	kfUse(t, db, gormplugin.New(nil, gormplugin.WithRules(kfRules(t, kfRulesText))))
	if err := db.Migrator().CreateTable(&KfOrder{}); err != nil {
		t.Fatal(err)
	}
	orders := make([]KfOrder, 8)
	for i := range orders {
		orders[i].UserID = int64(i)
	}
	if err := db.Create(&orders).Error; err != nil {
		t.Fatal(err)
	}
	// Without a model, the rule's key column is filled in the map and the
	// row goes to the table its key routes to. (Through a physical table
	// the create is refused when the generated key routes elsewhere.)
	m := map[string]any{"user_id": int64(5), "amount": 1}
	if err := db.Table("kf_orders").Create(m).Error; err != nil {
		t.Fatal(err)
	}
	id, ok := m["id"].(int64)
	if !ok || id <= 0 {
		t.Fatalf("map key %#v", m["id"])
	}
	var userID int64
	home := "kf_orders_" + string(rune('0'+id%2))
	if err := db.Session(&gorm.Session{NewDB: true}).Table(home).Select("user_id").Where("id = ?", id).Scan(&userID).Error; err != nil || userID != 5 {
		t.Fatalf("row of key %d: user %d, %v", id, userID, err)
	}
	for _, o := range orders {
		var n int64
		table := "kf_orders_" + string(rune('0'+o.ID%2))
		if err := db.Session(&gorm.Session{NewDB: true}).Table(table).Where("id = ? AND user_id = ?", o.ID, o.UserID).Count(&n).Error; err != nil || n != 1 {
			t.Fatalf("order %d not in %s: %d, %v", o.ID, table, n, err)
		}
	}
}

// TestRulesKeyColumnNotPrimaryKey: a rule's key column that is not the
// primary key is filled, and the auto-increment primary key still comes
// back from the database (RETURNING on PostgreSQL and SQLite, LastInsertId
// on MariaDB) with rules in use.
func TestRulesKeyColumnNotPrimaryKey(t *testing.T) {
	for _, be := range kfBackends {
		t.Run(be.name, func(t *testing.T) {
			db := kfOpen(t, be.name, be.open(t, "gormplugin_rulecol_"+be.name))
			kfUse(t, db, gormplugin.New(nil, gormplugin.WithRules(kfRules(t, kfRulesText))))
			if err := db.AutoMigrate(&KfInvoice{}); err != nil {
				t.Fatal(err)
			}
			sf9, err := keygen.LayoutFor("SNOWFLAKE", nil)
			if err != nil {
				t.Fatal(err)
			}
			worker := func(id int64) int64 {
				p, err := sf9.Decompose(id)
				if err != nil {
					t.Fatal(err)
				}
				return p.Worker
			}
			// The rule's column is filled; the primary key comes back from
			// the database (RETURNING / LastInsertId).
			inv := KfInvoice{Note: "n"}
			table := "kf_invoices_0"
			if err := db.Table(table).Create(&inv).Error; err != nil {
				if !errors.Is(err, gormplugin.ErrUnsupported) || inv.InvoiceNo%2 != 1 {
					t.Fatalf("create in kf_invoices_0 of invoice_no %d: %v", inv.InvoiceNo, err)
				}
				table = "kf_invoices_1"
				if err := db.Table(table).Create(&inv).Error; err != nil {
					t.Fatal(err)
				}
			}
			if inv.ID != 1 || worker(inv.InvoiceNo) != 9 {
				t.Fatalf("invoice %+v: want id 1 from the database and invoice_no from worker 9", inv)
			}
			var stored KfInvoice
			if err := db.Table(table).Where("invoice_no = ?", inv.InvoiceNo).First(&stored).Error; err != nil || stored != inv {
				t.Fatalf("stored %+v, %v; want %+v", stored, err, inv)
			}
		})
	}
}
