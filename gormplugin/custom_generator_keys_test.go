package gormplugin_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// cgKeys is a custom generator with only NextKey (no keygen.IDGenerator):
// int64 keys from its start prop up, or, for cgStringType, strings.
type cgKeys struct {
	typ     string
	next    atomic.Int64
	strings bool
}

func (g *cgKeys) Type() string { return g.typ }

func (g *cgKeys) NextKey(context.Context) (any, error) {
	n := g.next.Add(1) - 1
	if g.strings {
		return "k" + strconv.FormatInt(n, 10), nil
	}
	return n, nil
}

const (
	cgInt64Type  = "TEST_GORM_INT64_KEYS"
	cgStringType = "TEST_GORM_STRING_KEYS"
)

// registerCG registers the two custom types once per test binary.
var registerCG = sync.OnceValue(func() error {
	for _, typ := range []string{cgInt64Type, cgStringType} {
		err := keygen.Register(typ, func(p keygen.Props, _ keygen.Options) (keygen.Generator, error) {
			start, err := strconv.ParseInt(p["start"], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("start: %w", err)
			}
			g := &cgKeys{typ: typ, strings: typ == cgStringType}
			g.next.Store(start)
			return g, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
})

// CgOrder lives in cg_orders_0..3, chosen by id % 4; its int64 id comes
// from the rules' custom generator.
type CgOrder struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
}

// CgUser has an integer primary key the plugin fills from a generator it
// was given (WithGenerator), no rules.
type CgUser struct {
	ID   int64
	Name string `gorm:"size:32"`
}

// CgDoc has a string key, for a custom generator with string keys.
type CgDoc struct {
	ID   string `gorm:"primaryKey;size:32"`
	Name string `gorm:"size:32"`
}

const cgRules = `
rules:
- !SHARDING
  tables:
    cg_orders:
      actualDataNodes: ds.cg_orders_${0..3}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
      keyGenerateStrategy: {column: id, keyGeneratorName: custom}
  shardingAlgorithms:
    by_id: {type: MOD, props: {sharding-count: 4}}
  keyGenerators:
    custom: {type: TYPE, props: {start: "1000"}}
`

// cgBackends open a fresh database called name.
var cgBackends = []struct {
	name string
	open func(t *testing.T, name string) gorm.Dialector
}{
	{"sqlite", func(t *testing.T, name string) gorm.Dialector {
		return sqlite.Open(filepath.Join(t.TempDir(), name+".db"))
	}},
	{"postgres", func(t *testing.T, name string) gorm.Dialector {
		return postgres.Open(dbtest.Postgres(t, "gormplugin_"+name))
	}},
	{"mariadb", func(t *testing.T, name string) gorm.Dialector { return mysql.Open(dbtest.MySQL(t, "gormplugin_"+name)) }},
}

// cgOpen opens d twice: with the plugin over rules naming the custom type
// typ (nil rules: no rules), and plain, to read the physical tables.
func cgOpen(t *testing.T, d gorm.Dialector, typ string, opts ...gormplugin.Option) (sharded, plain *gorm.DB) {
	t.Helper()
	if err := registerCG(); err != nil {
		t.Fatal(err)
	}
	var err error
	if plain, err = gorm.Open(d, &gorm.Config{Logger: logger.Discard}); err != nil {
		t.Fatal(err)
	}
	if sharded, err = gorm.Open(d, &gorm.Config{Logger: logger.Discard}); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*gorm.DB{plain, sharded} {
		sqlDB, _ := db.DB()
		sqlDB.SetMaxOpenConns(1) // SQLite: one writer
		t.Cleanup(func() { sqlDB.Close() })
	}
	if typ != "" {
		cfg, err := shardconf.Parse([]byte(strings.Replace(cgRules, "TYPE", typ, 1)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := shardconf.NewRouter(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, gormplugin.WithRules(r))
	}
	if err := sharded.Use(gormplugin.New(nil, opts...)); err != nil {
		t.Fatal(err)
	}
	return sharded, plain
}

// cgPlacement maps each id in cg_orders_0..3 to its table's index.
func cgPlacement(t *testing.T, plain *gorm.DB) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	for i := int64(0); i < 4; i++ {
		var ids []int64
		if err := plain.Table(fmt.Sprintf("cg_orders_%d", i)).Order("id").Pluck("id", &ids).Error; err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			out[id] = i
		}
	}
	return out
}

// TestCustomGeneratorInt64KeysFillInt64Columns: a generator registered
// with keygen.Register that implements only NextKey, returning int64,
// fills the int64 key column of its rule (one row and a batch, each row in
// the table its key picks) and an integer primary key it was given for,
// on SQLite, PostgreSQL and MariaDB.
func TestCustomGeneratorInt64KeysFillInt64Columns(t *testing.T) {
	for _, be := range cgBackends {
		t.Run(be.name, func(t *testing.T) {
			db, plain := cgOpen(t, be.open(t, "cg_int64"), cgInt64Type)
			if err := db.AutoMigrate(&CgOrder{}); err != nil {
				t.Fatal(err)
			}
			one := CgOrder{UserID: 7}
			if err := db.Create(&one).Error; err != nil {
				t.Fatal(err)
			}
			batch := []CgOrder{{UserID: 1}, {UserID: 2}, {UserID: 3}, {UserID: 4}}
			if err := db.Create(&batch).Error; err != nil {
				t.Fatal(err)
			}
			got := []int64{one.ID}
			for _, o := range batch {
				got = append(got, o.ID)
			}
			if want := []int64{1000, 1001, 1002, 1003, 1004}; !slices.Equal(got, want) {
				t.Fatalf("keys %v, want the custom generator's %v", got, want)
			}
			placed := cgPlacement(t, plain)
			for _, id := range got {
				if tbl, ok := placed[id]; !ok || tbl != id%4 {
					t.Errorf("row %d in cg_orders_%d (found %v), want cg_orders_%d", id, tbl, ok, id%4)
				}
			}
			if len(placed) != len(got) {
				t.Errorf("%d rows stored, want %d", len(placed), len(got))
			}

			// No rules: the plugin's own generator fills an integer primary key.
			gen, err := keygen.New(cgInt64Type, keygen.Props{"start": "500"})
			if err != nil {
				t.Fatal(err)
			}
			udb, _ := cgOpen(t, be.open(t, "cg_int64_pk"), "", gormplugin.WithGenerator(gen))
			if err := udb.AutoMigrate(&CgUser{}); err != nil {
				t.Fatal(err)
			}
			// The plugin asks a custom generator for one key (500) to learn
			// that its keys are int64, and skips it.
			u := CgUser{Name: "a"}
			if err := udb.Create(&u).Error; err != nil || u.ID != 501 {
				t.Fatalf("user key %d, %v; want 501", u.ID, err)
			}
		})
	}
}

// TestCustomGeneratorNonInt64KeyFailsInt64ColumnCreate: a custom generator
// whose NextKey returns a string, named for an int64 key column, fails the
// create with keygen.ErrNotInt64 and stores nothing; a string key column
// it still fills.
func TestCustomGeneratorNonInt64KeyFailsInt64ColumnCreate(t *testing.T) {
	for _, be := range cgBackends {
		t.Run(be.name, func(t *testing.T) {
			db, plain := cgOpen(t, be.open(t, "cg_string"), cgStringType)
			if err := db.AutoMigrate(&CgOrder{}); err != nil {
				t.Fatal(err)
			}
			err := db.Create(&CgOrder{UserID: 7}).Error
			if !errors.Is(err, keygen.ErrNotInt64) {
				t.Fatalf("create: %v, want keygen.ErrNotInt64", err)
			}
			err = db.Create(&[]CgOrder{{UserID: 1}, {UserID: 2}}).Error
			if !errors.Is(err, keygen.ErrNotInt64) {
				t.Fatalf("batch create: %v, want keygen.ErrNotInt64", err)
			}
			if placed := cgPlacement(t, plain); len(placed) != 0 {
				t.Fatalf("rows stored: %v", placed)
			}

			gen, err := keygen.New(cgStringType, keygen.Props{"start": "1"})
			if err != nil {
				t.Fatal(err)
			}
			ddb, _ := cgOpen(t, be.open(t, "cg_string_pk"), "", gormplugin.WithGenerator(gen))
			if err := ddb.AutoMigrate(&CgDoc{}); err != nil {
				t.Fatal(err)
			}
			d := CgDoc{Name: "a"}
			if err := ddb.Create(&d).Error; err != nil || d.ID != "k1" {
				t.Fatalf("doc key %q, %v; want k1", d.ID, err)
			}
			// The same plugin-wide generator leaves an integer primary key
			// to the database (it issues no int64 keys), as before custom
			// int64 keys were filled.
			if err := ddb.AutoMigrate(&CgUser{}); err != nil {
				t.Fatal(err)
			}
			u := CgUser{Name: "b"}
			if err := ddb.Create(&u).Error; err != nil || u.ID == 0 {
				t.Fatalf("user key %d, %v; want one the database chose", u.ID, err)
			}
		})
	}
}
