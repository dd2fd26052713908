package gormplugin_test

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// Time sharding values: t_events is split by month of created (INTERVAL).
// A time routes by its wall clock; the drivers store different wall
// clocks for one time.Time (go-sql-driver/mysql converts it to its DSN's
// loc, pgx writes a timestamp column with the value's own wall clock).
// Every test checks where the stored value routes, in the physical
// tables, through a connection without the plugin.

const timeRules = `
dataSources:
  ds: {driver: sqlite, dsn: "file:unused"}
rules:
- !SHARDING
  tables:
    t_events:
      actualDataNodes: ds.t_events_20240${1..2}
      tableStrategy: {standard: {shardingColumn: created, shardingAlgorithmName: month}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    month:
      type: INTERVAL
      props: {datetime-pattern: "yyyy-MM-dd HH:mm:ss", datetime-lower: "2024-01-01 00:00:00", datetime-upper: "2024-02-29 23:59:59",
              sharding-suffix-pattern: yyyyMM, datetime-interval-unit: MONTHS}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 5}}
`

// TimedEvent's created is a timestamptz on PostgreSQL (GORM's default).
type TimedEvent struct {
	ID      int64 `gorm:"primaryKey"`
	Created time.Time
	Note    string
}

func (TimedEvent) TableName() string { return "t_events" }

// TimedEventTS's created is a PostgreSQL timestamp without time zone.
type TimedEventTS struct {
	ID      int64     `gorm:"primaryKey"`
	Created time.Time `gorm:"type:timestamp"`
	Note    string
}

func (TimedEventTS) TableName() string { return "t_events" }

var cst = time.FixedZone("CST", 8*3600)

// timeDB opens the plugin on d and a checker without it on chk.
func timeDB(t *testing.T, d, chk gorm.Dialector, model any, opts ...gormplugin.Option) (db, check *gorm.DB, rules *shardconf.Router) {
	t.Helper()
	rules = rulesOf(t, timeRules)
	db = reopen(t, d, nil)
	if err := db.Use(gormplugin.New(nil, append([]gormplugin.Option{gormplugin.WithRules(rules)}, opts...)...)); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(model); err != nil {
		t.Fatal(err)
	}
	return db, reopen(t, chk, nil), rules
}

// storedEvents reads both physical tables, fails the test if a stored
// created (its wall clock in loc) routes to another table, and returns
// the number of rows.
func storedEvents(t *testing.T, check *gorm.DB, rules *shardconf.Router, loc *time.Location) int {
	t.Helper()
	n := 0
	for _, tbl := range []string{"t_events_202401", "t_events_202402"} {
		var rows []TimedEvent
		if err := check.Table(tbl).Find(&rows).Error; err != nil {
			t.Fatalf("read %s: %v", tbl, err)
		}
		for _, r := range rows {
			wall := r.Created.In(loc)
			ts, err := rules.Route("t_events", shardconf.Eq("created", wall))
			if err != nil || len(ts) != 1 || ts[0].Table != tbl {
				t.Fatalf("MISPLACED: %s holds created %s (%s in %s), which routes to %v (%v)", tbl, r.Created, wall, loc, ts, err)
			}
			n++
		}
	}
	return n
}

// TestTimeShardingValueOutsideLocationIsRefused: without
// WithTimeLocation times are routed in UTC; a time in another offset is
// refused wherever it would route a statement (create, WHERE,
// assignment), and nothing is written. A UTC time is stored where it
// routes and found again.
func TestTimeShardingValueOutsideLocationIsRefused(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			d := dialectorFor(t, be, "gormplugin_time_utc_"+be)
			db, check, rules := timeDB(t, d, d, &TimedEvent{})
			local := time.Date(2024, 2, 1, 3, 30, 0, 0, cst) // 2024-01-31 19:30 UTC
			err := db.Create(&TimedEvent{Created: local, Note: "cst"}).Error
			if !errors.Is(err, gormplugin.ErrTimeLocation) || !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Fatalf("create with a +08:00 time: %v, want ErrTimeLocation", err)
			}
			if n := storedEvents(t, check, rules, time.UTC); n != 0 {
				t.Fatalf("refused create stored %d rows", n)
			}
			utc := local.UTC()
			ev := TimedEvent{Created: utc, Note: "utc"}
			if err := db.Create(&ev).Error; err != nil {
				t.Fatal(err)
			}
			if n := storedEvents(t, check, rules, time.UTC); n != 1 {
				t.Fatalf("%d rows stored, want 1", n)
			}
			var jan []TimedEvent
			if err := check.Table("t_events_202401").Find(&jan).Error; err != nil || len(jan) != 1 {
				t.Fatalf("2024-01-31 19:30 UTC is not in January's table: %v %v", jan, err)
			}
			var got []TimedEvent
			if err := db.Where("created = ?", local).Find(&got).Error; !errors.Is(err, gormplugin.ErrTimeLocation) {
				t.Fatalf("read by a +08:00 time: %v (%d rows), want ErrTimeLocation", err, len(got))
			}
			if err := db.Where("created = @t", sql.Named("t", local)).Find(&got).Error; !errors.Is(err, gormplugin.ErrTimeLocation) {
				t.Fatalf("read by a named +08:00 time: %v (%d rows), want ErrTimeLocation", err, len(got))
			}
			if err := db.Where("created IN ?", []time.Time{utc, local}).Find(&got).Error; !errors.Is(err, gormplugin.ErrTimeLocation) {
				t.Fatalf("read by a list holding a +08:00 time: %v (%d rows), want ErrTimeLocation", err, len(got))
			}
			if err := db.Where("created = ?", utc).Find(&got).Error; err != nil || len(got) != 1 {
				t.Fatalf("read by the UTC time: %v rows, %v", len(got), err)
			}
			err = db.Model(&TimedEvent{}).Where("created = ?", utc).Update("created", local).Error
			if !errors.Is(err, gormplugin.ErrTimeLocation) {
				t.Fatalf("assigning a +08:00 time: %v, want ErrTimeLocation", err)
			}
			ev.Created = local
			if err := db.Save(&ev).Error; !errors.Is(err, gormplugin.ErrTimeLocation) {
				t.Fatalf("Save of a row whose time is +08:00: %v, want ErrTimeLocation", err)
			}
			if n := storedEvents(t, check, rules, time.UTC); n != 1 {
				t.Fatalf("%d rows stored after refusals, want 1", n)
			}
		})
	}
}

// TestTimeLocationRoutesMariaDBByDSNLoc: go-sql-driver/mysql with loc
// +08:00 stores a +08:00 time at its own wall clock, so with
// WithTimeLocation(+08:00) 2024-02-01 03:30 +08:00 is routed to, and
// stored in, February's table; a UTC time is refused there (the driver
// would store it at another wall clock).
func TestTimeLocationRoutesMariaDBByDSNLoc(t *testing.T) {
	cfg, err := gomysql.ParseDSN(dbtest.MySQL(t, "gormplugin_time_loc"))
	if err != nil {
		t.Fatal(err)
	}
	plain := mysql.Open(cfg.FormatDSN()) // loc UTC: reads the stored wall clock as UTC
	cfg.Loc = cst
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(conn)
	t.Cleanup(func() { pool.Close() })
	rules := rulesOf(t, timeRules)
	db, err := gorm.Open(mysql.New(mysql.Config{Conn: pool}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rules), gormplugin.WithTimeLocation(cst))); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&TimedEvent{}); err != nil {
		t.Fatal(err)
	}
	check := reopen(t, plain, nil)
	at := time.Date(2024, 2, 1, 3, 30, 0, 0, cst)
	if err := db.Create(&TimedEvent{Created: at}).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&TimedEvent{Created: at.UTC()}).Error; !errors.Is(err, gormplugin.ErrTimeLocation) {
		t.Fatalf("a UTC time with loc +08:00: %v, want ErrTimeLocation", err)
	}
	var feb []TimedEvent
	if err := check.Table("t_events_202402").Find(&feb).Error; err != nil || len(feb) != 1 {
		t.Fatalf("February's table: %v %v", feb, err)
	}
	if w := feb[0].Created; w.Day() != 1 || w.Hour() != 3 || w.Month() != 2 {
		t.Fatalf("stored wall clock %s, want 2024-02-01 03:30", w)
	}
	if n := storedEvents(t, check, rules, time.UTC); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
	var got []TimedEvent
	if err := db.Where("created = ?", at).Find(&got).Error; err != nil || len(got) != 1 {
		t.Fatalf("read back: %d rows, %v", len(got), err)
	}
}

// TestTimeLocationOnPostgresTimestampAndTimestamptz: with
// WithTimeLocation(+08:00), a +08:00 time lands in the table its wall
// clock routes to in a timestamp column (pgx writes the wall clock) and
// in a timestamptz column (the instant, whose wall clock in +08:00 is
// the same); a UTC time is refused for both.
func TestTimeLocationOnPostgresTimestampAndTimestamptz(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model any
	}{{"timestamptz", &TimedEvent{}}, {"timestamp", &TimedEventTS{}}} {
		t.Run(tc.name, func(t *testing.T) {
			d := dialectorFor(t, "postgres", "gormplugin_time_pg_"+tc.name)
			db, check, rules := timeDB(t, d, d, tc.model, gormplugin.WithTimeLocation(cst))
			at := time.Date(2024, 2, 1, 3, 30, 0, 0, cst)
			if err := db.Table("t_events").Create(map[string]any{"created": at, "note": "cst"}).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Table("t_events").Create(map[string]any{"created": at.UTC(), "note": "utc"}).Error; !errors.Is(err, gormplugin.ErrTimeLocation) {
				t.Fatalf("a UTC time with WithTimeLocation(+08:00): %v, want ErrTimeLocation", err)
			}
			var feb []struct {
				Wall string
			}
			if err := check.Raw("SELECT to_char(created, 'YYYY-MM-DD HH24:MI') AS wall FROM t_events_202402").Scan(&feb).Error; err != nil {
				t.Fatal(err)
			}
			if len(feb) != 1 {
				t.Fatalf("February's table has %d rows, want 1", len(feb))
			}
			if tc.name == "timestamp" && feb[0].Wall != "2024-02-01 03:30" {
				t.Fatalf("stored wall clock %s, want 2024-02-01 03:30", feb[0].Wall)
			}
			if n := storedEvents(t, check, rules, cst); n != 1 {
				t.Fatalf("%d rows, want 1", n)
			}
		})
	}
}

// TestTimeLocationTakenFromMySQLDSN: a *gorm.DB opened from a DSN with
// loc=Etc/GMT-8 (UTC+8) routes times in that location without the
// option: a +08:00 time goes to, and is stored in, the table its wall
// clock routes to, and a UTC time (which the driver would store 8 hours
// later) is refused. A WithTimeLocation naming another location fails
// db.Use.
func TestTimeLocationTakenFromMySQLDSN(t *testing.T) {
	cfg, err := gomysql.ParseDSN(dbtest.MySQL(t, "gormplugin_time_dsn"))
	if err != nil {
		t.Fatal(err)
	}
	check := reopen(t, mysql.Open(cfg.FormatDSN()), nil) // loc UTC: the stored wall clock
	gmt8, err := time.LoadLocation("Etc/GMT-8")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Loc = gmt8
	dsn := cfg.FormatDSN()
	rules := rulesOf(t, timeRules)
	other := reopen(t, mysql.Open(dsn), nil)
	if err := other.Use(gormplugin.New(nil, gormplugin.WithRules(rules), gormplugin.WithTimeLocation(time.UTC))); err == nil {
		t.Fatal("WithTimeLocation(UTC) on a DSN with loc=Etc/GMT-8 was accepted")
	}
	db := reopen(t, mysql.Open(dsn), nil)
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rules))); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&TimedEvent{}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 2, 1, 3, 30, 0, 0, cst)
	if err := db.Create(&TimedEvent{Created: at}).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&TimedEvent{Created: at.UTC()}).Error; !errors.Is(err, gormplugin.ErrTimeLocation) {
		t.Fatalf("a UTC time with a DSN loc of UTC+8: %v, want ErrTimeLocation", err)
	}
	var feb []TimedEvent
	if err := check.Table("t_events_202402").Find(&feb).Error; err != nil || len(feb) != 1 {
		t.Fatalf("February's table: %v %v", feb, err)
	}
	if n := storedEvents(t, check, rules, time.UTC); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
}
