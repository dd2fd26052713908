package gormplugin_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

// Models. Table names come from GORM's namer (kf_users, kf_plain_ids, ...).

// KfUser has GORM's default integer primary key, which GORM treats as
// auto-increment.
type KfUser struct {
	ID   int64
	Name string `gorm:"size:64"`
}

// KfPlainID says autoIncrement:false itself and uses keygen.ID.
type KfPlainID struct {
	ID   keygen.ID `gorm:"primaryKey;autoIncrement:false"`
	Name string    `gorm:"size:64"`
}

// KfU64 has an unsigned key.
type KfU64 struct {
	ID   uint64 `gorm:"primaryKey"`
	Name string `gorm:"size:64"`
}

// KfGormModel embeds gorm.Model (ID uint).
type KfGormModel struct {
	gorm.Model
	Name string `gorm:"size:64"`
}

// KfOptOut keeps GORM's auto-increment.
type KfOptOut struct {
	ID   int64  `shardkey:"-"`
	Name string `gorm:"size:64"`
}

// KfOptIn keeps an auto-increment ID but has a generated TraceID.
type KfOptIn struct {
	ID      int64  `shardkey:"-"`
	TraceID int64  `shardkey:"key"`
	Name    string `gorm:"size:64"`
}

// KfAuthor has many KfBooks.
type KfAuthor struct {
	ID    int64
	Name  string `gorm:"size:64"`
	Books []KfBook
}

type KfBook struct {
	ID         int64
	KfAuthorID int64
	Title      string `gorm:"size:64"`
}

// KfPost belongs to a KfCategory.
type KfPost struct {
	ID           int64
	Title        string `gorm:"size:64"`
	KfCategoryID int64
	KfCategory   KfCategory
}

type KfCategory struct {
	ID   int64
	Name string `gorm:"size:64"`
}

var kfModels = []any{&KfUser{}, &KfPlainID{}, &KfU64{}, &KfGormModel{}, &KfOptOut{}, &KfOptIn{}, &KfAuthor{}, &KfBook{}, &KfPost{}, &KfCategory{}}

// A backend is a way to open a fresh database.
type kfBackend struct {
	name string
	open func(t *testing.T, name string) gorm.Dialector
}

var kfBackends = []kfBackend{
	{"sqlite", func(t *testing.T, name string) gorm.Dialector {
		return sqlite.Open(filepath.Join(t.TempDir(), name+".db") + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	}},
	{"postgres", func(t *testing.T, name string) gorm.Dialector {
		return postgres.Open(dbtest.Postgres(t, name))
	}},
	{"mariadb", func(t *testing.T, name string) gorm.Dialector {
		return mysql.Open(dbtest.MySQL(t, name))
	}},
}

// kfOpen opens d without the plugin; SQLite gets one connection, so that
// concurrent writers queue instead of failing with SQLITE_BUSY.
func kfOpen(t *testing.T, be string, d gorm.Dialector) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	if be == "sqlite" {
		sqlDB.SetMaxOpenConns(1)
	}
	t.Cleanup(func() { sqlDB.Close() })
	return db
}

func kfUse(t *testing.T, db *gorm.DB, p *gormplugin.Plugin) {
	t.Helper()
	if err := db.Use(p); err != nil {
		t.Fatal(err)
	}
}

// kfSnowflake is a SNOWFLAKE generator with the given worker id.
func kfSnowflake(t testing.TB, worker int) keygen.IDGenerator {
	t.Helper()
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": fmt.Sprint(worker)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func kfWorker(t *testing.T, g keygen.Generator, id int64) int64 {
	t.Helper()
	p, err := g.(keygen.Decomposer).Decompose(id)
	if err != nil {
		t.Fatalf("decompose %d: %v", id, err)
	}
	return p.Worker
}

// TestKeyFill runs every create path on SQLite, PostgreSQL and MariaDB.
func TestKeyFill(t *testing.T) {
	for _, be := range kfBackends {
		t.Run(be.name, func(t *testing.T) {
			gen := kfSnowflake(t, 7)
			db := kfOpen(t, be.name, be.open(t, "gormplugin_keyfill_"+be.name))
			kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(gen)))
			if err := db.AutoMigrate(kfModels...); err != nil {
				t.Fatal(err)
			}
			kfCreatePaths(t, db, gen)
		})
	}
}

// generated checks that id is a key of gen (worker 7, recent).
func generated(t *testing.T, gen keygen.Generator, what string, id int64) {
	t.Helper()
	if id <= 0 {
		t.Fatalf("%s: key %d not generated", what, id)
	}
	p, err := gen.(keygen.Decomposer).Decompose(id)
	if err != nil {
		t.Fatalf("%s: decompose %d: %v", what, id, err)
	}
	if p.Worker != 7 || time.Since(p.Time) > time.Hour || time.Until(p.Time) > time.Minute {
		t.Fatalf("%s: key %d decodes to worker %d at %v, want worker 7 now", what, id, p.Worker, p.Time)
	}
}

func kfCreatePaths(t *testing.T, db *gorm.DB, gen keygen.Generator) {
	// rowID reads the key of the row called name from the database.
	rowID := func(model any, name string) int64 {
		t.Helper()
		var id int64
		if err := db.Model(model).Select("id").Where("name = ?", name).Scan(&id).Error; err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		return id
	}

	t.Run("struct", func(t *testing.T) {
		u := KfUser{Name: "struct"}
		if err := db.Create(&u).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "struct", u.ID)
		if got := rowID(&KfUser{}, "struct"); got != u.ID {
			t.Fatalf("row holds %d, struct %d", got, u.ID)
		}
	})
	t.Run("autoIncrementFalse", func(t *testing.T) {
		u := KfPlainID{Name: "plain"}
		if err := db.Create(&u).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "keygen.ID", int64(u.ID))
		if got := rowID(&KfPlainID{}, "plain"); got != int64(u.ID) {
			t.Fatalf("row holds %d, struct %d", got, u.ID)
		}
	})
	t.Run("uint64", func(t *testing.T) {
		u := KfU64{Name: "u64"}
		if err := db.Create(&u).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "uint64", int64(u.ID))
		if got := rowID(&KfU64{}, "u64"); got != int64(u.ID) {
			t.Fatalf("row holds %d, struct %d", got, u.ID)
		}
	})
	t.Run("gormModel", func(t *testing.T) {
		u := KfGormModel{Name: "gm"}
		if err := db.Create(&u).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "gorm.Model", int64(u.ID))
		if got := rowID(&KfGormModel{}, "gm"); got != int64(u.ID) {
			t.Fatalf("row holds %d, struct %d", got, u.ID)
		}
	})
	t.Run("slice", func(t *testing.T) {
		us := []KfUser{{Name: "s0"}, {Name: "s1"}, {Name: "s2"}}
		ps := []*KfUser{{Name: "p0"}, {Name: "p1"}}
		if err := db.Create(&us).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Create(ps).Error; err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		check := func(u *KfUser) {
			generated(t, gen, u.Name, u.ID)
			if seen[u.ID] {
				t.Fatalf("duplicate key %d", u.ID)
			}
			seen[u.ID] = true
			if got := rowID(&KfUser{}, u.Name); got != u.ID {
				t.Fatalf("%s: row holds %d, struct %d", u.Name, got, u.ID)
			}
		}
		for i := range us {
			check(&us[i])
		}
		for _, u := range ps {
			check(u)
		}
	})
	t.Run("array", func(t *testing.T) {
		arr := [2]KfUser{{Name: "a0"}, {Name: "a1"}}
		if err := db.Create(&arr).Error; err != nil {
			t.Fatal(err)
		}
		for _, u := range arr {
			generated(t, gen, u.Name, u.ID)
			if got := rowID(&KfUser{}, u.Name); got != u.ID {
				t.Fatalf("%s: row holds %d, struct %d", u.Name, got, u.ID)
			}
		}
		if arr[0].ID == arr[1].ID {
			t.Fatal("duplicate keys")
		}
	})
	t.Run("map", func(t *testing.T) {
		m := map[string]any{"name": "map"}
		if err := db.Model(&KfUser{}).Create(m).Error; err != nil {
			t.Fatal(err)
		}
		id, ok := m["id"].(int64)
		if !ok {
			t.Fatalf("map holds id %#v, want an int64", m["id"])
		}
		generated(t, gen, "map", id)
		if got := rowID(&KfUser{}, "map"); got != id {
			t.Fatalf("row holds %d, map %d", got, id)
		}
		// The field name as key, and keygen.ID typed write-back.
		m2 := map[string]any{"Name": "map2", "ID": keygen.ID(0)}
		if err := db.Model(&KfPlainID{}).Create(m2).Error; err != nil {
			t.Fatal(err)
		}
		id2, ok := m2["ID"].(keygen.ID)
		if !ok || len(m2) != 2 {
			t.Fatalf("map holds %#v, want ID keygen.ID in place", m2)
		}
		if got := rowID(&KfPlainID{}, "map2"); got != int64(id2) {
			t.Fatalf("row holds %d, map %d", got, id2)
		}
		ms := []map[string]any{{"name": "ms0"}, {"name": "ms1", "id": int64(4242)}}
		if err := db.Model(&KfUser{}).Create(&ms).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "maps[0]", ms[0]["id"].(int64))
		if ms[1]["id"] != int64(4242) {
			t.Fatalf("non-zero map key replaced: %v", ms[1]["id"])
		}
		if got := rowID(&KfUser{}, "ms0"); got != ms[0]["id"] {
			t.Fatalf("row holds %d, map %v", got, ms[0]["id"])
		}
	})
	t.Run("createInBatches", func(t *testing.T) {
		us := make([]KfUser, 10)
		for i := range us {
			us[i].Name = fmt.Sprintf("b%d", i)
		}
		if err := db.CreateInBatches(&us, 3).Error; err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, u := range us {
			generated(t, gen, u.Name, u.ID)
			if seen[u.ID] {
				t.Fatalf("duplicate key %d", u.ID)
			}
			seen[u.ID] = true
			if got := rowID(&KfUser{}, u.Name); got != u.ID {
				t.Fatalf("%s: row holds %d, struct %d", u.Name, got, u.ID)
			}
		}
	})
	t.Run("save", func(t *testing.T) {
		u := KfUser{Name: "save"}
		if err := db.Save(&u).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "save", u.ID)
		if got := rowID(&KfUser{}, "save"); got != u.ID {
			t.Fatalf("row holds %d, struct %d", got, u.ID)
		}
		first := u.ID
		u.Name = "saved"
		if err := db.Save(&u).Error; err != nil || u.ID != first {
			t.Fatalf("second Save: %v, key %d -> %d", err, first, u.ID)
		}
		if got := rowID(&KfUser{}, "saved"); got != first {
			t.Fatalf("updated row holds %d", got)
		}
	})
	t.Run("firstOrCreate", func(t *testing.T) {
		var u KfUser
		if err := db.Where(KfUser{Name: "foc"}).FirstOrCreate(&u).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "firstOrCreate", u.ID)
		var again KfUser
		if err := db.Where(KfUser{Name: "foc"}).FirstOrCreate(&again).Error; err != nil || again.ID != u.ID {
			t.Fatalf("second FirstOrCreate: %+v, %v; want key %d", again, err, u.ID)
		}
	})
	t.Run("nonZeroKept", func(t *testing.T) {
		u := KfUser{ID: 42, Name: "fortytwo"}
		if err := db.Create(&u).Error; err != nil {
			t.Fatal(err)
		}
		if u.ID != 42 || rowID(&KfUser{}, "fortytwo") != 42 {
			t.Fatalf("key 42 not kept: struct %d, row %d", u.ID, rowID(&KfUser{}, "fortytwo"))
		}
		mixed := []KfUser{{ID: 43, Name: "fortythree"}, {Name: "mixed"}}
		if err := db.Create(&mixed).Error; err != nil {
			t.Fatal(err)
		}
		if mixed[0].ID != 43 || rowID(&KfUser{}, "fortythree") != 43 {
			t.Fatal("key 43 not kept")
		}
		generated(t, gen, "mixed", mixed[1].ID)
	})
	t.Run("optOut", func(t *testing.T) {
		a, b := KfOptOut{Name: "o1"}, KfOptOut{Name: "o2"}
		if err := db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Create(&b).Error; err != nil {
			t.Fatal(err)
		}
		// The database's auto-increment: small consecutive keys.
		if a.ID <= 0 || a.ID > 1000 || b.ID != a.ID+1 {
			t.Fatalf("opted-out keys %d, %d are not auto-increment", a.ID, b.ID)
		}
		if got := rowID(&KfOptOut{}, "o2"); got != b.ID {
			t.Fatalf("row holds %d, struct %d", got, b.ID)
		}
	})
	t.Run("optIn", func(t *testing.T) {
		a := KfOptIn{Name: "i1"}
		if err := db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
		if a.ID <= 0 || a.ID > 1000 {
			t.Fatalf("primary key %d is not auto-increment", a.ID)
		}
		generated(t, gen, "TraceID", a.TraceID)
		var trace int64
		if err := db.Model(&KfOptIn{}).Select("trace_id").Where("id = ?", a.ID).Scan(&trace).Error; err != nil || trace != a.TraceID {
			t.Fatalf("row trace_id %d (%v), struct %d", trace, err, a.TraceID)
		}
	})
	t.Run("hasMany", func(t *testing.T) {
		a := KfAuthor{Name: "author", Books: []KfBook{{Title: "b1"}, {Title: "b2"}}}
		if err := db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "author", a.ID)
		var rows []KfBook
		if err := db.Where("kf_author_id = ?", a.ID).Order("title").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Fatalf("%d books stored under the author's key %d", len(rows), a.ID)
		}
		for i, b := range a.Books {
			generated(t, gen, b.Title, b.ID)
			if b.KfAuthorID != a.ID {
				t.Fatalf("book %s: foreign key %d, author key %d", b.Title, b.KfAuthorID, a.ID)
			}
			if rows[i].ID != b.ID {
				t.Fatalf("book %s: row key %d, struct %d", b.Title, rows[i].ID, b.ID)
			}
		}
		if a.Books[0].ID == a.Books[1].ID || a.Books[0].ID == a.ID {
			t.Fatal("duplicate keys")
		}
		var loaded KfAuthor
		if err := db.Preload("Books").First(&loaded, "id = ?", a.ID).Error; err != nil || len(loaded.Books) != 2 {
			t.Fatalf("preload: %+v, %v", loaded, err)
		}
	})
	t.Run("belongsTo", func(t *testing.T) {
		p := KfPost{Title: "post", KfCategory: KfCategory{Name: "cat"}}
		if err := db.Create(&p).Error; err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "post", p.ID)
		generated(t, gen, "category", p.KfCategory.ID)
		if p.KfCategoryID != p.KfCategory.ID {
			t.Fatalf("post's foreign key %d, category key %d", p.KfCategoryID, p.KfCategory.ID)
		}
		// The parent was keyed first, in its own INSERT.
		if p.KfCategory.ID >= p.ID {
			t.Fatalf("category key %d issued after the post's %d", p.KfCategory.ID, p.ID)
		}
		if got := rowID(&KfCategory{}, "cat"); got != p.KfCategory.ID {
			t.Fatalf("category row %d, struct %d", got, p.KfCategory.ID)
		}
		var fk int64
		if err := db.Model(&KfPost{}).Select("kf_category_id").Where("id = ?", p.ID).Scan(&fk).Error; err != nil || fk != p.KfCategory.ID {
			t.Fatalf("post row's foreign key %d (%v), want %d", fk, err, p.KfCategory.ID)
		}
	})
	t.Run("transaction", func(t *testing.T) {
		var u KfUser
		err := db.Transaction(func(tx *gorm.DB) error {
			// A nested transaction uses the dialector's savepoints.
			return tx.Transaction(func(tx2 *gorm.DB) error {
				u = KfUser{Name: "tx"}
				return tx2.Create(&u).Error
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		generated(t, gen, "tx", u.ID)
	})
}

// TestKeyFillWorkerID decodes the worker id of stored keys.
func TestKeyFillWorkerID(t *testing.T) {
	for _, w := range []int{0, 7, 1023} {
		gen := kfSnowflake(t, w)
		db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "w.db")))
		kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(gen)))
		if err := db.AutoMigrate(&KfUser{}); err != nil {
			t.Fatal(err)
		}
		us := []KfUser{{Name: "a"}, {Name: "b"}}
		if err := db.Create(&us).Error; err != nil {
			t.Fatal(err)
		}
		var ids []int64
		if err := db.Model(&KfUser{}).Order("id").Pluck("id", &ids).Error; err != nil || len(ids) != 2 {
			t.Fatalf("ids %v, %v", ids, err)
		}
		for _, id := range ids {
			if got := kfWorker(t, gen, id); got != int64(w) {
				t.Fatalf("key %d: worker %d, want %d", id, got, w)
			}
		}
	}
	// Props build the generator when none is given.
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "p.db")))
	kfUse(t, db, gormplugin.New(keygen.Props{"worker-id": "12"}))
	if err := db.AutoMigrate(&KfUser{}); err != nil {
		t.Fatal(err)
	}
	u := KfUser{Name: "props"}
	if err := db.Create(&u).Error; err != nil {
		t.Fatal(err)
	}
	l, err := keygen.LayoutFor("SNOWFLAKE", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(u.ID)
	if err != nil || p.Worker != 12 {
		t.Fatalf("key %d: %+v, %v; want worker 12", u.ID, p, err)
	}
}

// TestKeyFillConcurrent creates rows from many goroutines on a *gorm.DB
// whose models the plugin meets for the first time (a fresh schema cache),
// mixing creates, batches and queries; run with -race.
func TestKeyFillConcurrent(t *testing.T) {
	for _, be := range kfBackends {
		t.Run(be.name, func(t *testing.T) {
			gen := kfSnowflake(t, 7)
			d := be.open(t, "gormplugin_concurrent_"+be.name)
			setup := kfOpen(t, be.name, d)
			kfUse(t, setup, gormplugin.New(nil, gormplugin.WithGenerator(gen)))
			if err := setup.AutoMigrate(&KfUser{}, &KfPlainID{}); err != nil {
				t.Fatal(err)
			}
			db := kfOpen(t, be.name, d) // a new schema cache: first use races
			kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(gen)))

			const workers, each = 16, 12
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				keys []int64
				errs []error
			)
			start := make(chan struct{})
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					<-start
					var mine []int64
					fail := func(err error) {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
					for i := 0; i < each; i++ {
						switch i % 4 {
						case 0:
							u := KfUser{Name: fmt.Sprintf("w%d-%d", w, i)}
							if err := db.Create(&u).Error; err != nil {
								fail(err)
								return
							}
							mine = append(mine, u.ID)
						case 1:
							us := []KfUser{{Name: fmt.Sprintf("w%d-%da", w, i)}, {Name: fmt.Sprintf("w%d-%db", w, i)}}
							if err := db.Create(&us).Error; err != nil {
								fail(err)
								return
							}
							mine = append(mine, us[0].ID, us[1].ID)
						case 2:
							p := KfPlainID{Name: fmt.Sprintf("w%d-%d", w, i)}
							if err := db.Create(&p).Error; err != nil {
								fail(err)
								return
							}
							mine = append(mine, int64(p.ID))
						case 3:
							var n int64
							if err := db.Model(&KfUser{}).Count(&n).Error; err != nil {
								fail(err)
								return
							}
						}
					}
					mu.Lock()
					keys = append(keys, mine...)
					mu.Unlock()
				}(w)
			}
			close(start)
			wg.Wait()
			if len(errs) > 0 {
				t.Fatal(errors.Join(errs...))
			}
			seen := map[int64]bool{}
			for _, k := range keys {
				if k <= 0 || seen[k] {
					t.Fatalf("key %d zero or duplicated", k)
				}
				seen[k] = true
			}
			var stored []int64
			if err := db.Model(&KfUser{}).Pluck("id", &stored).Error; err != nil {
				t.Fatal(err)
			}
			var plain []int64
			if err := db.Model(&KfPlainID{}).Pluck("id", &plain).Error; err != nil {
				t.Fatal(err)
			}
			stored = append(stored, plain...)
			if len(stored) != len(keys) {
				t.Fatalf("%d rows stored, %d keys issued", len(stored), len(keys))
			}
			for _, k := range stored {
				if !seen[k] {
					t.Fatalf("stored key %d is not one the structs received", k)
				}
			}
		})
	}
}

// TestKeyFillStringKeys fills string keys with a UUID generator and leaves
// integer keys to GORM.
func TestKeyFillStringKeys(t *testing.T) {
	type KfDoc struct {
		ID    string `gorm:"primaryKey;size:36"`
		Title string `gorm:"size:64"`
	}
	uuid, err := keygen.New("UUID", keygen.Props{"version": "7"})
	if err != nil {
		t.Fatal(err)
	}
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "s.db")))
	kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(uuid)))
	if err := db.AutoMigrate(&KfDoc{}, &KfUser{}); err != nil {
		t.Fatal(err)
	}
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	docs := []KfDoc{{Title: "a"}, {Title: "b"}, {ID: "mine", Title: "c"}}
	if err := db.Create(&docs).Error; err != nil {
		t.Fatal(err)
	}
	if !uuidRE.MatchString(docs[0].ID) || !uuidRE.MatchString(docs[1].ID) || docs[0].ID == docs[1].ID || docs[2].ID != "mine" {
		t.Fatalf("keys %q %q %q", docs[0].ID, docs[1].ID, docs[2].ID)
	}
	var stored KfDoc
	if err := db.First(&stored, "title = ?", "b").Error; err != nil || stored.ID != docs[1].ID {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	m := map[string]any{"title": "m"}
	if err := db.Model(&KfDoc{}).Create(m).Error; err != nil {
		t.Fatal(err)
	}
	if s, _ := m["id"].(string); !uuidRE.MatchString(s) {
		t.Fatalf("map key %#v", m["id"])
	}
	// An integer key is not for a string generator: GORM's auto-increment.
	u := KfUser{Name: "int"}
	if err := db.Create(&u).Error; err != nil {
		t.Fatal(err)
	}
	if u.ID != 1 {
		t.Fatalf("integer key %d, want the database's 1", u.ID)
	}
}

// TestKeyFillBadTags: a tag the plugin does not know, or an opt-in field
// that cannot hold a key, is an error on create, never a silent zero.
func TestKeyFillBadTags(t *testing.T) {
	type KfBadTag struct {
		ID   int64  `shardkey:"yes"`
		Name string `gorm:"size:64"`
	}
	type KfSmall struct {
		ID    int64
		Small int32 `shardkey:"key"`
	}
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "b.db")))
	kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(kfSnowflake(t, 1))))
	if err := db.AutoMigrate(&KfBadTag{}, &KfSmall{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&KfBadTag{Name: "x"}).Error; err == nil || !strings.Contains(err.Error(), `unknown shardkey tag "yes"`) {
		t.Fatalf("bad tag: %v", err)
	}
	if err := db.Create(&KfSmall{}).Error; err == nil || !strings.Contains(err.Error(), "cannot fill a field of type int32") {
		t.Fatalf("int32 opt-in: %v", err)
	}
	// Rules without a generator for a model that opts a field in.
	db2 := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "c.db")))
	kfUse(t, db2, gormplugin.New(nil, gormplugin.WithRules(kfRules(t, kfRulesText))))
	if err := db2.AutoMigrate(&KfOptIn{}); err != nil {
		t.Fatal(err)
	}
	if err := db2.Create(&KfOptIn{Name: "n"}).Error; err == nil || !strings.Contains(err.Error(), "no key generator") {
		t.Fatalf("opt-in without a generator: %v", err)
	}
}

// A generator error is the create's error and nothing is inserted.
type kfFailGen struct{}

func (kfFailGen) Type() string                           { return "FAIL" }
func (kfFailGen) NextKey(context.Context) (any, error)   { return nil, errKfGen }
func (kfFailGen) NextID(context.Context) (int64, error)  { return 0, errKfGen }
func (kfFailGen) NextIDs(context.Context, []int64) error { return errKfGen }

var errKfGen = errors.New("generator down")

func TestKeyFillGeneratorError(t *testing.T) {
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "e.db")))
	kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(kfFailGen{})))
	if err := db.AutoMigrate(&KfUser{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&KfUser{Name: "x"}).Error; !errors.Is(err, errKfGen) {
		t.Fatalf("create: %v", err)
	}
	if err := db.Create(&[]KfUser{{Name: "y"}, {Name: "z"}}).Error; !errors.Is(err, errKfGen) {
		t.Fatalf("batch: %v", err)
	}
	var n int64
	if err := db.Model(&KfUser{}).Count(&n).Error; err != nil || n != 0 {
		t.Fatalf("%d rows inserted, %v", n, err)
	}
}

// kfSeqGen issues 1001, 1002, ... and records its calls.
type kfSeqGen struct {
	mu      sync.Mutex
	next    int64
	single  int   // NextID calls
	batches []int // NextIDs lengths
}

func (g *kfSeqGen) Type() string                             { return "SEQ" }
func (g *kfSeqGen) NextKey(ctx context.Context) (any, error) { return g.NextID(ctx) }
func (g *kfSeqGen) NextID(context.Context) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.single++
	g.next++
	return 1000 + g.next, nil
}
func (g *kfSeqGen) NextIDs(_ context.Context, dst []int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.batches = append(g.batches, len(dst))
	for i := range dst {
		g.next++
		dst[i] = 1000 + g.next
	}
	return nil
}

// TestKeyFillSQL asserts the exact INSERT statements on the PostgreSQL
// and MySQL dialectors: the key is an ordinary column (no RETURNING, no
// LastInsertId), a slice takes one NextIDs batch, a map gets its key back.
func TestKeyFillSQL(t *testing.T) {
	type dialect struct {
		name string
		open func(*sql.DB) gorm.Dialector
		q    func(string) string // quote
		ph   func(int) string    // placeholder
	}
	for _, d := range []dialect{
		{"postgres", func(c *sql.DB) gorm.Dialector {
			return postgres.New(postgres.Config{Conn: c, PreferSimpleProtocol: true})
		}, func(s string) string { return `"` + s + `"` }, func(i int) string { return fmt.Sprintf("$%d", i) }},
		{"mysql", func(c *sql.DB) gorm.Dialector {
			return mysql.New(mysql.Config{Conn: c, SkipInitializeWithVersion: true})
		}, func(s string) string { return "`" + s + "`" }, func(int) string { return "?" }},
	} {
		t.Run(d.name, func(t *testing.T) {
			conn, mock, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			db, err := gorm.Open(d.open(conn), &gorm.Config{Logger: logger.Discard})
			if err != nil {
				t.Fatal(err)
			}
			gen := &kfSeqGen{}
			kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(gen)))
			values := func(rows, cols int) string {
				var parts []string
				n := 0
				for r := 0; r < rows; r++ {
					var ps []string
					for c := 0; c < cols; c++ {
						n++
						ps = append(ps, d.ph(n))
					}
					parts = append(parts, "("+strings.Join(ps, ",")+")")
				}
				return strings.Join(parts, ",")
			}
			insert := func(table string, rows int, cols ...string) string {
				qs := make([]string, len(cols))
				for i, c := range cols {
					qs[i] = d.q(c)
				}
				return "INSERT INTO " + d.q(table) + " (" + strings.Join(qs, ",") + ") VALUES " + values(rows, len(cols))
			}

			// A struct, GORM's implicit auto-increment key.
			mock.ExpectBegin()
			mock.ExpectExec(insert("kf_users", 1, "id", "name")).WithArgs(int64(1001), "one").WillReturnResult(sqlmock.NewResult(0, 1))
			mock.ExpectCommit()
			u := KfUser{Name: "one"}
			if err := db.Create(&u).Error; err != nil {
				t.Fatal(err)
			}
			if u.ID != 1001 {
				t.Fatalf("struct key %d", u.ID)
			}

			// A slice: one NextIDs batch of three.
			mock.ExpectBegin()
			mock.ExpectExec(insert("kf_users", 3, "id", "name")).
				WithArgs(int64(1002), "a", int64(1003), "b", int64(1004), "c").WillReturnResult(sqlmock.NewResult(0, 3))
			mock.ExpectCommit()
			us := []KfUser{{Name: "a"}, {Name: "b"}, {Name: "c"}}
			if err := db.Create(&us).Error; err != nil {
				t.Fatal(err)
			}
			if us[0].ID != 1002 || us[1].ID != 1003 || us[2].ID != 1004 {
				t.Fatalf("slice keys %d %d %d", us[0].ID, us[1].ID, us[2].ID)
			}
			if gen.single != 1 || len(gen.batches) != 1 || gen.batches[0] != 3 {
				t.Fatalf("generator calls: %d NextID, NextIDs %v; want 1 and [3]", gen.single, gen.batches)
			}

			// A map: the key is written back.
			mock.ExpectBegin()
			mock.ExpectExec(insert("kf_users", 1, "id", "name")).WithArgs(int64(1005), "map").WillReturnResult(sqlmock.NewResult(0, 1))
			mock.ExpectCommit()
			m := map[string]any{"name": "map"}
			if err := db.Model(&KfUser{}).Create(m).Error; err != nil {
				t.Fatal(err)
			}
			if m["id"] != int64(1005) {
				t.Fatalf("map key %#v", m["id"])
			}

			// autoIncrement:false with keygen.ID, and an unsigned key.
			mock.ExpectBegin()
			mock.ExpectExec(insert("kf_plain_ids", 1, "id", "name")).WithArgs(int64(1006), "p").WillReturnResult(sqlmock.NewResult(0, 1))
			mock.ExpectCommit()
			mock.ExpectBegin()
			mock.ExpectExec(insert("kf_u64", 1, "id", "name")).WithArgs(uint64(1007), "u").WillReturnResult(sqlmock.NewResult(0, 1))
			mock.ExpectCommit()
			p := KfPlainID{Name: "p"}
			if err := db.Create(&p).Error; err != nil || p.ID != 1006 {
				t.Fatalf("keygen.ID: %d, %v", p.ID, err)
			}
			u64 := KfU64{Name: "u"}
			if err := db.Create(&u64).Error; err != nil || u64.ID != 1007 {
				t.Fatalf("uint64: %d, %v", u64.ID, err)
			}

			// A non-zero key is kept and nothing is generated.
			mock.ExpectBegin()
			mock.ExpectExec(insert("kf_users", 1, "id", "name")).WithArgs(int64(7), "seven").WillReturnResult(sqlmock.NewResult(0, 1))
			mock.ExpectCommit()
			if err := db.Create(&KfUser{ID: 7, Name: "seven"}).Error; err != nil {
				t.Fatal(err)
			}

			// The opted-out model keeps GORM's auto-increment handling.
			mock.ExpectBegin()
			if d.name == "postgres" {
				mock.ExpectQuery(`INSERT INTO "kf_opt_outs" ("name") VALUES ($1) RETURNING "id"`).WithArgs("o").
					WillReturnRows(sqlmock.NewRows([]string{"id"}).AddRow(int64(55)))
			} else {
				mock.ExpectExec("INSERT INTO `kf_opt_outs` (`name`) VALUES (?)").WithArgs("o").WillReturnResult(sqlmock.NewResult(55, 1))
			}
			mock.ExpectCommit()
			o := KfOptOut{Name: "o"}
			if err := db.Create(&o).Error; err != nil || o.ID != 55 {
				t.Fatalf("opt-out: key %d, %v; want the database's 55", o.ID, err)
			}
			if err := mock.ExpectationsWereMet(); err != nil {
				t.Fatal(err)
			}
			if gen.next != 7 {
				t.Fatalf("generator issued %d keys, want 7", gen.next)
			}
		})
	}
}

// TestKeyFillPointerField: an opted-in pointer field gets a key when nil
// and keeps a key it points to.
func TestKeyFillPointerField(t *testing.T) {
	type KfRef struct {
		ID  int64
		Ref *int64 `shardkey:"key"`
	}
	gen := kfSnowflake(t, 7)
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "ptr.db")))
	kfUse(t, db, gormplugin.New(nil, gormplugin.WithGenerator(gen)))
	if err := db.AutoMigrate(&KfRef{}); err != nil {
		t.Fatal(err)
	}
	mine := int64(99)
	rs := []KfRef{{}, {Ref: &mine}}
	if err := db.Create(&rs).Error; err != nil {
		t.Fatal(err)
	}
	if rs[0].Ref == nil {
		t.Fatal("nil pointer key not filled")
	}
	generated(t, gen, "Ref", *rs[0].Ref)
	generated(t, gen, "ID", rs[0].ID)
	if rs[1].Ref != &mine || mine != 99 {
		t.Fatalf("pointer key replaced: %v", *rs[1].Ref)
	}
	var got []int64
	if err := db.Model(&KfRef{}).Order("ref").Pluck("ref", &got).Error; err != nil || len(got) != 2 || got[0] != 99 || got[1] != *rs[0].Ref {
		t.Fatalf("stored refs %v, %v", got, err)
	}
}
