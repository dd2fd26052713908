package gormplugin_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/plugin/dbresolver"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// RWOrder lives in rw_orders of data source ds_0 or ds_1 (user_id % 2);
// each data source is a readwrite-splitting group of a write database and
// a read database, all four separate databases.
type RWOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Note   string

	// seen, when set, records from an AfterCreate hook what a read in the
	// create's transaction finds.
	seen *[]string `gorm:"-"`
}

func (o *RWOrder) AfterCreate(tx *gorm.DB) error {
	if o.seen == nil {
		return nil
	}
	var notes []string
	err := tx.Model(&RWOrder{}).Where("user_id = ?", o.UserID).Order("id").Pluck("note", &notes).Error
	*o.seen = notes
	return err
}

const rwRules = `
rules:
- !SHARDING
  tables:
    rw_orders:
      actualDataNodes: ds_${0..1}.rw_orders
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 5}}
- !READWRITE_SPLITTING
  dataSourceGroups:
    ds_0: {writeDataSourceName: w_0, readDataSourceNames: [r_0]}
    ds_1: {writeDataSourceName: w_1, readDataSourceNames: [r_1], loadBalancerName: rnd}
  loadBalancers:
    rnd: {type: RANDOM}
`

// rwSingleRules: one data source, a group of w_0 and r_0.
const rwSingleRules = `
rules:
- !SHARDING
  tables:
    rw_orders:
      actualDataNodes: ds.rw_orders
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 5}}
- !READWRITE_SPLITTING
  dataSourceGroups:
    ds: {writeDataSourceName: w_0, readDataSourceNames: [r_0]}
`

// rwEnv is the four databases of one dialect.
type rwEnv struct {
	name  string
	dbs   map[string]*sql.DB // w_0, r_0, w_1, r_1
	open  func(*sql.DB) gorm.Dialector
	locks bool // SELECT ... FOR UPDATE exists
}

var rwPhysical = []string{"w_0", "r_0", "w_1", "r_1"}

// rwEnvs creates the databases of every dialect, or of those named.
func rwEnvs(t *testing.T, only ...string) []rwEnv {
	t.Helper()
	sqliteDir := t.TempDir()
	kinds := []struct {
		name   string
		driver string
		dsn    func(string) string
		open   func(*sql.DB) gorm.Dialector
		locks  bool
	}{
		{"sqlite", "sqlite", func(n string) string { return filepath.Join(sqliteDir, n+".db") },
			func(c *sql.DB) gorm.Dialector { return &sqlite.Dialector{Conn: c} }, false},
		{"postgres", "pgx", func(n string) string { return dbtest.Postgres(t, "rw_"+n) },
			func(c *sql.DB) gorm.Dialector { return postgres.New(postgres.Config{Conn: c}) }, true},
		{"mysql", "mysql", func(n string) string { return dbtest.MySQL(t, "rw_"+n) },
			func(c *sql.DB) gorm.Dialector {
				return mysql.New(mysql.Config{Conn: c, SkipInitializeWithVersion: true})
			}, true},
	}
	var out []rwEnv
	for _, k := range kinds {
		if len(only) > 0 && !slices.Contains(only, k.name) {
			continue
		}
		env := rwEnv{name: k.name, dbs: map[string]*sql.DB{}, open: k.open, locks: k.locks}
		for _, n := range rwPhysical {
			c, err := sql.Open(k.driver, k.dsn(n))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if _, err := c.Exec("CREATE TABLE rw_orders (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, note VARCHAR(64) NOT NULL)"); err != nil {
				t.Fatalf("%s %s: %v", k.name, n, err)
			}
			env.dbs[n] = c
		}
		out = append(out, env)
	}
	return out
}

// notes lists the notes of the rows of one physical database, sorted.
func (e rwEnv) notes(t *testing.T, ds string) []string {
	t.Helper()
	rows, err := e.dbs[ds].Query("SELECT note FROM rw_orders")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (e rwEnv) pools() map[string]gorm.ConnPool {
	out := map[string]gorm.ConnPool{}
	for n, c := range e.dbs {
		out[n] = c
	}
	return out
}

// gormOn opens a *gorm.DB on physical database ds.
func (e rwEnv) gormOn(t *testing.T, ds string) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(e.open(e.dbs[ds]), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func (e rwEnv) useRules(t *testing.T, db *gorm.DB, text string, opts ...gormplugin.Option) error {
	t.Helper()
	opts = append([]gormplugin.Option{gormplugin.WithRules(rulesOf(t, text)), gormplugin.WithDataSources(e.pools())}, opts...)
	return db.Use(gormplugin.New(nil, opts...))
}

// seedReplica puts a row into a read database only, so that a read
// answered from it is told apart from one answered by the write database.
func (e rwEnv) seedReplica(t *testing.T, ds string, id, user int64, note string) {
	t.Helper()
	q := "INSERT INTO rw_orders (id, user_id, note) VALUES (?, ?, ?)"
	if e.name == "postgres" {
		q = "INSERT INTO rw_orders (id, user_id, note) VALUES ($1, $2, $3)"
	}
	if _, err := e.dbs[ds].Exec(q, id, user, note); err != nil {
		t.Fatal(err)
	}
}

func TestReplicasTakeReadsOutsideTransactionsAndNeverWrites(t *testing.T) {
	for _, e := range rwEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			db := e.gormOn(t, "w_0")
			if err := e.useRules(t, db, rwRules, gormplugin.WithScatter()); err != nil {
				t.Fatal(err)
			}
			// Writes go to the write databases only.
			for _, o := range []*RWOrder{{UserID: 0, Note: "u0-a"}, {UserID: 1, Note: "u1-a"}, {UserID: 2, Note: "u2-a"}} {
				if err := db.Create(o).Error; err != nil {
					t.Fatal(err)
				}
			}
			batch := []RWOrder{{UserID: 4, Note: "u4-a"}, {UserID: 6, Note: "u6-a"}}
			if err := db.Create(&batch).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Model(&RWOrder{}).Where("user_id = ?", 1).Update("note", "u1-b").Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Where("user_id = ?", 6).Delete(&RWOrder{}).Error; err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"w_0": "[u0-a u2-a u4-a]", "w_1": "[u1-b]", "r_0": "[]", "r_1": "[]"}
			for ds, w := range want {
				if got := fmt.Sprint(e.notes(t, ds)); got != w {
					t.Errorf("%s holds %s, want %s", ds, got, w)
				}
			}

			// Reads outside a transaction are answered by the replicas.
			e.seedReplica(t, "r_0", 100, 0, "replica-0")
			e.seedReplica(t, "r_1", 101, 1, "replica-1")
			var got []RWOrder
			if err := db.Where("user_id = ?", 0).Find(&got).Error; err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Note != "replica-0" {
				t.Errorf("Find for user 0 = %+v, want the replica's row", got)
			}
			var n int64
			if err := db.Model(&RWOrder{}).Where("user_id = ?", 1).Count(&n).Error; err != nil || n != 1 {
				t.Errorf("Count for user 1 = %d, %v; want 1 from the replica", n, err)
			}
			var note string
			if err := db.Model(&RWOrder{}).Where("user_id = ?", 1).Select("note").Row().Scan(&note); err != nil || note != "replica-1" {
				t.Errorf("Row for user 1 = %q, %v; want replica-1", note, err)
			}
			var all []RWOrder
			if err := db.Order("user_id").Find(&all).Error; err != nil || len(all) != 2 || all[0].Note != "replica-0" || all[1].Note != "replica-1" {
				t.Errorf("scatter over both groups = %+v, %v; want both replicas' rows", all, err)
			}

			// ReadFromPrimary, and a locking read, go to the write database.
			got = nil
			ctx := gormplugin.ReadFromPrimary(context.Background())
			if err := db.WithContext(ctx).Where("user_id = ?", 0).Order("id").Find(&got).Error; err != nil || len(got) != 1 || got[0].Note != "u0-a" {
				t.Errorf("ReadFromPrimary: %+v, %v; want u0-a from w_0", got, err)
			}
			if e.locks {
				got = nil
				if err := db.Clauses(clause.Locking{Strength: "UPDATE"}).Where("user_id = ?", 1).Find(&got).Error; err != nil || len(got) != 1 || got[0].Note != "u1-b" {
					t.Errorf("FOR UPDATE: %+v, %v; want u1-b from w_1", got, err)
				}
			}

			// A read in the create's transaction sees the write database,
			// its own row included.
			var seen []string
			if err := db.Create(&RWOrder{UserID: 1, Note: "u1-c", seen: &seen}).Error; err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(seen) != "[u1-b u1-c]" {
				t.Errorf("read in the transaction = %v, want [u1-b u1-c] from w_1", seen)
			}
			// After a read, the same statement reused for a write writes
			// to the write database.
			q := db.Where("user_id = ?", 3)
			var none []RWOrder
			if err := q.Find(&none).Error; err != nil {
				t.Fatal(err)
			}
			if err := q.Create(&RWOrder{UserID: 3, Note: "u3-a"}).Error; err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(e.notes(t, "r_1")); got != "[replica-1]" {
				t.Errorf("r_1 holds %s after the writes, want only its seeded row", got)
			}
			if got := fmt.Sprint(e.notes(t, "w_1")); got != "[u1-b u1-c u3-a]" {
				t.Errorf("w_1 holds %s", got)
			}
		})
	}
}

func TestMigrationsRunOnTheWriteDatabases(t *testing.T) {
	for _, e := range rwEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			// The replicas have the table, the write databases not yet: a
			// migrator asking a replica whether the table exists would
			// skip creating it.
			for _, w := range []string{"w_0", "w_1"} {
				if _, err := e.dbs[w].Exec("DROP TABLE rw_orders"); err != nil {
					t.Fatal(err)
				}
			}
			db := e.gormOn(t, "w_0")
			if err := e.useRules(t, db, rwRules); err != nil {
				t.Fatal(err)
			}
			if err := db.AutoMigrate(&RWOrder{}); err != nil {
				t.Fatal(err)
			}
			for _, u := range []int64{0, 1} {
				if err := db.Create(&RWOrder{UserID: u, Note: fmt.Sprint("u", u)}).Error; err != nil {
					t.Fatalf("create after AutoMigrate: %v", err)
				}
			}
			if fmt.Sprint(e.notes(t, "w_0"), e.notes(t, "w_1"), e.notes(t, "r_0"), e.notes(t, "r_1")) != "[u0] [u1] [] []" {
				t.Errorf("w_0, w_1, r_0, r_1 hold %v %v %v %v", e.notes(t, "w_0"), e.notes(t, "w_1"), e.notes(t, "r_0"), e.notes(t, "r_1"))
			}
		})
	}
}

func TestReplicasOfTheOnlyDataSource(t *testing.T) {
	for _, e := range rwEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			// The *gorm.DB must be opened on the write database.
			if err := e.useRules(t, e.gormOn(t, "r_0"), rwSingleRules); err == nil || !strings.Contains(err.Error(), "open the *gorm.DB on its write data source w_0") {
				t.Fatalf("a *gorm.DB on the replica: %v", err)
			}
			db := e.gormOn(t, "w_0")
			if err := e.useRules(t, db, rwSingleRules); err != nil {
				t.Fatal(err)
			}
			if err := db.Create(&RWOrder{UserID: 7, Note: "primary"}).Error; err != nil {
				t.Fatal(err)
			}
			e.seedReplica(t, "r_0", 100, 7, "replica")
			var got []RWOrder
			if err := db.Where("user_id = ?", 7).Find(&got).Error; err != nil || len(got) != 1 || got[0].Note != "replica" {
				t.Errorf("read outside a transaction: %+v, %v; want the replica's row", got, err)
			}
			err := db.Transaction(func(tx *gorm.DB) error {
				got = nil
				return tx.Where("user_id = ?", 7).Find(&got).Error
			})
			if err != nil || len(got) != 1 || got[0].Note != "primary" {
				t.Errorf("read in db.Transaction: %+v, %v; want the write database's row", got, err)
			}
			if got := fmt.Sprint(e.notes(t, "r_0")); got != "[replica]" {
				t.Errorf("r_0 holds %s", got)
			}
		})
	}
}

func TestReadWriteGroupsNeedEveryMembersPool(t *testing.T) {
	e := rwEnvs(t, "sqlite")[0]
	db := e.gormOn(t, "w_0")
	pools := e.pools()
	delete(pools, "r_1")
	err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, rwRules)), gormplugin.WithDataSources(pools)))
	if err == nil || !strings.Contains(err.Error(), `no pool for "r_1", a data source of readwrite-splitting group ds_1`) {
		t.Fatalf("missing replica pool: %v", err)
	}
	pools = e.pools()
	pools["ds_0"] = pools["w_0"]
	err = e.gormOn(t, "w_0").Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, rwRules)), gormplugin.WithDataSources(pools)))
	if err == nil || !strings.Contains(err.Error(), "a pool for ds_0, a readwrite-splitting group") {
		t.Fatalf("a pool under the group's name: %v", err)
	}
}

// resolver is dbresolver as go-gorm/sharding's README sets it up: the
// write databases as sources, the read databases as replicas.
func (e rwEnv) resolver() *dbresolver.DBResolver {
	return dbresolver.Register(dbresolver.Config{
		Sources:  []gorm.Dialector{e.open(e.dbs["w_0"]), e.open(e.dbs["w_1"])},
		Replicas: []gorm.Dialector{e.open(e.dbs["r_0"]), e.open(e.dbs["r_1"])},
	})
}

func TestDBResolverIsRefusedInEitherOrder(t *testing.T) {
	for _, e := range rwEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			for _, rules := range []string{rwRules, rwSingleRules} {
				// dbresolver first: db.Use(plugin) fails and registers nothing.
				db := e.gormOn(t, "w_0")
				if err := db.Use(e.resolver()); err != nil {
					t.Fatal(err)
				}
				err := e.useRules(t, db, rules)
				if !errors.Is(err, gormplugin.ErrDBResolver) || !strings.Contains(err.Error(), "!READWRITE_SPLITTING") {
					t.Fatalf("dbresolver registered first: db.Use = %v, want ErrDBResolver", err)
				}
				if db.Callback().Create().Get("shardkey:route") != nil || db.Callback().Create().Get("shardkey:assign_key") != nil {
					t.Error("the refused plugin left callbacks registered")
				}

				// dbresolver after: every statement on the sharded table is
				// refused before it runs.
				db = e.gormOn(t, "w_0")
				if err := e.useRules(t, db, rules); err != nil {
					t.Fatal(err)
				}
				// With one data source, dbresolver's own db.Use fails: it
				// opens a *gorm.DB per source and replica, with the plugin,
				// and the plugin refuses those not on the write database.
				if err := db.Use(e.resolver()); err != nil && !errors.Is(err, gormplugin.ErrDBResolver) {
					t.Fatal(err)
				}
				for what, run := range map[string]func() error{
					"Create": func() error { return db.Create(&RWOrder{UserID: 1, Note: "x"}).Error },
					"Create in batches": func() error {
						return db.CreateInBatches([]RWOrder{{UserID: 1, Note: "x"}, {UserID: 3, Note: "y"}}, 10).Error
					},
					"Save":   func() error { return db.Save(&RWOrder{ID: 9, UserID: 1, Note: "x"}).Error },
					"Update": func() error { return db.Model(&RWOrder{}).Where("user_id = ?", 1).Update("note", "x").Error },
					"Delete": func() error { return db.Where("user_id = ?", 1).Delete(&RWOrder{}).Error },
					"Find":   func() error { return db.Where("user_id = ?", 1).Find(&[]RWOrder{}).Error },
					"Rows": func() error {
						rows, err := db.Model(&RWOrder{}).Where("user_id = ?", 1).Select("note").Rows()
						if rows != nil {
							rows.Close()
						}
						return err
					},
					"physical table": func() error {
						return db.Table("rw_orders").Create(map[string]any{"id": 5, "user_id": 1, "note": "x"}).Error
					},
				} {
					if err := run(); !errors.Is(err, gormplugin.ErrDBResolver) || !errors.Is(err, gormplugin.ErrUnsupported) {
						t.Errorf("dbresolver registered after, %s: %v, want ErrDBResolver", what, err)
					}
				}
				for _, ds := range rwPhysical {
					if got := e.notes(t, ds); len(got) != 0 {
						t.Errorf("%s holds %v after the refusals", ds, got)
					}
				}
			}
		})
	}
}

func TestReadWriteGroupMemberRoutedToDirectlyIsRefused(t *testing.T) {
	e := rwEnvs(t, "sqlite")[0]
	cfg, err := shardconf.Parse([]byte(rwRules))
	if err != nil {
		t.Fatal(err)
	}
	// Built in code, past the rule file's checks: r_1 routed to as a data
	// source of its own.
	cfg.DataSources = append(cfg.DataSources, shardconf.DataSource{Name: "r_1"})
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = e.gormOn(t, "w_0").Use(gormplugin.New(nil, gormplugin.WithRules(r), gormplugin.WithDataSources(e.pools())))
	if err == nil || !strings.Contains(err.Error(), "data source r_1 of readwrite-splitting group ds_1 is also a data source of the rules") {
		t.Fatalf("db.Use = %v", err)
	}
}

func TestReplicasUnderConcurrentReadsAndWrites(t *testing.T) {
	e := rwEnvs(t, "postgres")[0]
	db := e.gormOn(t, "w_0")
	if err := e.useRules(t, db, rwRules); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 6, 15
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(user int64) {
			errs <- func() error {
				primary := db.WithContext(gormplugin.ReadFromPrimary(context.Background()))
				for i := 0; i < rounds; i++ {
					if err := db.Create(&RWOrder{UserID: user, Note: "w"}).Error; err != nil {
						return err
					}
					var fromReplica, fromPrimary int64
					if err := db.Model(&RWOrder{}).Where("user_id = ?", user).Count(&fromReplica).Error; err != nil {
						return err
					}
					if err := primary.Model(&RWOrder{}).Where("user_id = ?", user).Count(&fromPrimary).Error; err != nil {
						return err
					}
					if fromReplica != 0 || fromPrimary != int64(i+1) {
						return fmt.Errorf("user %d round %d: replica counts %d, primary %d", user, i, fromReplica, fromPrimary)
					}
				}
				return nil
			}()
		}(int64(w))
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if len(e.notes(t, "r_0"))+len(e.notes(t, "r_1")) != 0 || len(e.notes(t, "w_0"))+len(e.notes(t, "w_1")) != workers*rounds {
		t.Errorf("after the run: r_0 %d, r_1 %d, w_0 %d, w_1 %d rows", len(e.notes(t, "r_0")), len(e.notes(t, "r_1")), len(e.notes(t, "w_0")), len(e.notes(t, "w_1")))
	}
}

// A transaction begun on a group's write database belongs to that group:
// its writes and reads stay there, and a statement for the other group is
// refused.
func TestTransactionOnGroupWriteDatabaseStaysInItsGroup(t *testing.T) {
	for _, e := range rwEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			db := e.gormOn(t, "w_0")
			if err := e.useRules(t, db, rwRules); err != nil {
				t.Fatal(err)
			}
			e.seedReplica(t, "r_0", 1, 2, "replica")
			var seen []string
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&RWOrder{UserID: 2, Note: "in-tx"}).Error; err != nil {
					return err
				}
				return tx.Model(&RWOrder{}).Where("user_id = ?", 2).Order("id").Pluck("note", &seen).Error
			})
			if err != nil {
				t.Fatalf("transaction on ds_0's write database: %v", err)
			}
			if !slices.Equal(seen, []string{"in-tx"}) {
				t.Errorf("read in the transaction saw %q, want the write database's [in-tx]", seen)
			}
			err = db.Transaction(func(tx *gorm.DB) error {
				return tx.Create(&RWOrder{UserID: 3, Note: "other-group"}).Error
			})
			if err == nil {
				t.Fatal("a transaction on ds_0 wrote a row of ds_1")
			}
			for _, ds := range rwPhysical {
				got := e.notes(t, ds)
				want := map[string][]string{"w_0": {"in-tx"}, "r_0": {"replica"}}[ds]
				if !slices.Equal(got, want) {
					t.Errorf("%s holds %q, want %q", ds, got, want)
				}
			}
		})
	}
}
