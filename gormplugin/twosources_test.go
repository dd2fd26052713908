package gormplugin_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// Shared setup of the write-path tests: sharded_orders over two
// databases as two data sources (dbRules: user_id picks the database, id
// the table), on SQLite, PostgreSQL and MariaDB. Every claim about where
// a row went is checked in the physical tables, through connections
// without the plugin.

var twoBackends = []string{"sqlite", "postgres", "mariadb"}

// twoDS is one backend's pair of databases.
type twoDS struct {
	be    string
	db    *gorm.DB    // ds_0's *gorm.DB, with the plugin
	db1   *gorm.DB    // ds_1's *gorm.DB, with its own plugin
	chk   [2]*gorm.DB // each database without the plugin
	rules *shardconf.Router
}

// dialectorFor opens (creating) database name on a backend.
func dialectorFor(t testing.TB, be, name string) gorm.Dialector {
	t.Helper()
	switch be {
	case "sqlite":
		return sqlite.Open(filepath.Join(t.TempDir(), name+".db") + "?_pragma=busy_timeout(10000)")
	case "postgres":
		return postgres.Open(dbtest.Postgres(t, name))
	case "mariadb":
		return mysql.Open(dbtest.MySQL(t, name))
	}
	t.Fatalf("unknown backend %s", be)
	return nil
}

// reopen opens the same database as d (another pool).
func reopen(t testing.TB, d gorm.Dialector, cfg *gorm.Config) *gorm.DB {
	t.Helper()
	if cfg == nil {
		cfg = &gorm.Config{}
	}
	cfg.Logger = logger.Discard
	db, err := gorm.Open(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return db
}

// newTwoDS creates the two databases gw_<name>_ds0/ds1, plugs the plugin
// into a *gorm.DB of each (cfg configures both; nil for GORM's defaults)
// and migrates sharded_orders.
func newTwoDS(t *testing.T, be, name string, cfg func() *gorm.Config, opts ...gormplugin.Option) *twoDS {
	t.Helper()
	return openTwoDS(t, be, name, dbRules, cfg, []any{&ShardedOrder{}}, opts...)
}

// openTwoDS is newTwoDS with other rules and models.
func openTwoDS(t *testing.T, be, name, rules string, cfg func() *gorm.Config, models []any, opts ...gormplugin.Option) *twoDS {
	t.Helper()
	if cfg == nil {
		cfg = func() *gorm.Config { return &gorm.Config{} }
	}
	d0, d1 := dialectorFor(t, be, "gw_"+name+"_ds0"), dialectorFor(t, be, "gw_"+name+"_ds1")
	e := &twoDS{be: be, rules: rulesOf(t, rules)}
	e.db, e.db1 = reopen(t, d0, cfg()), reopen(t, d1, cfg())
	e.chk = [2]*gorm.DB{reopen(t, d0, nil), reopen(t, d1, nil)}
	p0, _ := e.db.DB()
	p1, _ := e.db1.DB()
	pools := map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}
	for _, db := range []*gorm.DB{e.db, e.db1} {
		all := append([]gormplugin.Option{gormplugin.WithRules(e.rules), gormplugin.WithDataSources(pools)}, opts...)
		if err := db.Use(gormplugin.New(nil, all...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.AutoMigrate(models...); err != nil {
		t.Fatal(err)
	}
	return e
}

// eachBackend runs f on every backend, with its own databases.
func eachBackend(t *testing.T, name string, f func(t *testing.T, e *twoDS)) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) { f(t, newTwoDS(t, be, name+"_"+be, nil)) })
	}
}

// placedRow is a row as stored, and where.
type placedRow struct {
	ShardedOrder
	at shardconf.Target
}

// placement reads every physical table of both databases and fails the
// test if a row sits in a table its sharding values do not route to, or
// if a primary key is in two tables.
func (e *twoDS) placement(t *testing.T) map[int64]placedRow {
	t.Helper()
	out := map[int64]placedRow{}
	targets, _ := e.rules.Targets("sharded_orders")
	for _, tg := range targets {
		chk := e.chk[0]
		if tg.DataSource == "ds_1" {
			chk = e.chk[1]
		}
		var rows []ShardedOrder
		if err := chk.Table(tg.Table).Order("id").Find(&rows).Error; err != nil {
			t.Fatalf("read %s: %v", tg, err)
		}
		for _, r := range rows {
			ts, err := e.rules.Route("sharded_orders", shardconf.Eq("user_id", r.UserID), shardconf.Eq("id", r.ID))
			if err != nil || len(ts) != 1 || ts[0] != tg {
				t.Fatalf("MISPLACED: row %+v is in %s; its values route to %v (%v)", r, tg, ts, err)
			}
			if prev, dup := out[r.ID]; dup {
				t.Fatalf("primary key %d is in %s (%+v) and in %s (%+v)", r.ID, prev.at, prev.ShardedOrder, tg, r)
			}
			out[r.ID] = placedRow{r, tg}
		}
	}
	return out
}

// snapshot is placement as a comparable string.
func (e *twoDS) snapshot(t *testing.T) string {
	t.Helper()
	p := e.placement(t)
	ids := make([]int64, 0, len(p))
	for id := range p {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	s := ""
	for _, id := range ids {
		s += fmt.Sprintf("%+v@%s;", p[id].ShardedOrder, p[id].at)
	}
	return s
}

// seed creates one order per user 0..3 through the plugin.
func (e *twoDS) seed(t *testing.T) []ShardedOrder {
	t.Helper()
	var out []ShardedOrder
	for u := int64(0); u < 4; u++ {
		o := ShardedOrder{UserID: u, Amount: int(u) * 10}
		if err := e.db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// targetOf is where the rules put a row.
func (e *twoDS) targetOf(t *testing.T, userID, id int64) shardconf.Target {
	t.Helper()
	ts, err := e.rules.Route("sharded_orders", shardconf.Eq("user_id", userID), shardconf.Eq("id", id))
	if err != nil || len(ts) != 1 {
		t.Fatalf("route user %d id %d: %v %v", userID, id, ts, err)
	}
	return ts[0]
}
