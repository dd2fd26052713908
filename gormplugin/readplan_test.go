package gormplugin_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Reads over several tables in two data sources, compared with the same
// GORM call on one unsharded oracle table holding the same rows, on
// SQLite, PostgreSQL and MariaDB. Each case either agrees with the oracle
// (values, order where ORDER BY defines one, errors) or is refused with
// ErrUnsupported, as the case says.

const readRules = `
rules:
- !SHARDING
  tables:
    read_orders:
      actualDataNodes: ds_${0..1}.read_orders_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
    by_id: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 5}}
`

// ReadOrder is the model of the read tests. Code and Note are made binary
// collated in every database (readEnv); Status keeps the default.
type ReadOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
	Big    int64   // near the int64 limit for some rows
	Status string  `gorm:"size:20"`
	Code   string  `gorm:"size:20"`
	Note   *string `gorm:"size:20"`
	Qty    sql.NullInt64
	Found  bool `gorm:"-"` // set by AfterFind
}

// AfterFind marks rows GORM's query callback ran the hook on.
func (o *ReadOrder) AfterFind(*gorm.DB) error { o.Found = true; return nil }

// readEnv is one backend's sharded databases and oracle.
type readEnv struct {
	be     string
	db     *gorm.DB // plugin with WithScatter
	bin    *gorm.DB // the same, with WithBinaryCollation
	oracle *gorm.DB // one unsharded read_orders table with the same rows
	pools  [2]*sql.DB
	plain  [2]*gorm.DB // each data source without the plugin
}

func newReadEnv(t *testing.T, be string) *readEnv { return newReadEnvIn(t, be, "gormread_") }

// newReadEnvIn is newReadEnv on databases whose names start with prefix.
func newReadEnvIn(t *testing.T, be, prefix string) *readEnv {
	t.Helper()
	d0 := dialectorFor(t, be, prefix+be+"_ds0")
	d1 := dialectorFor(t, be, prefix+be+"_ds1")
	e := &readEnv{be: be, db: reopen(t, d0, nil), oracle: reopen(t, dialectorFor(t, be, prefix+be+"_oracle"), nil)}
	e.bin = reopen(t, d0, nil)
	db1 := reopen(t, d1, nil)
	p0, _ := e.db.DB()
	p1, _ := db1.DB()
	e.pools = [2]*sql.DB{p0, p1}
	pools := map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}
	rules := rulesOf(t, readRules)
	for _, x := range []struct {
		db  *gorm.DB
		bin bool
	}{{e.db, false}, {e.bin, true}} {
		opts := []gormplugin.Option{gormplugin.WithRules(rules), gormplugin.WithDataSources(pools), gormplugin.WithScatter()}
		if x.bin {
			opts = append(opts, gormplugin.WithBinaryCollation())
		}
		if err := x.db.Use(gormplugin.New(nil, opts...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.AutoMigrate(&ReadOrder{}); err != nil {
		t.Fatal(err)
	}
	if err := e.oracle.AutoMigrate(&ReadOrder{}); err != nil {
		t.Fatal(err)
	}
	plain0, plain1 := reopen(t, d0, nil), reopen(t, d1, nil)
	e.plain = [2]*gorm.DB{plain0, plain1}
	for _, x := range []struct {
		db    *gorm.DB
		table string
	}{{plain0, "read_orders_0"}, {plain0, "read_orders_1"}, {plain1, "read_orders_0"}, {plain1, "read_orders_1"}, {e.oracle, "read_orders"}} {
		binaryColumns(t, be, x.db, x.table)
	}
	e.load(t)
	return e
}

// binaryColumns gives code and note a binary collation.
func binaryColumns(t *testing.T, be string, db *gorm.DB, table string) {
	t.Helper()
	for _, col := range []string{"code", "note"} {
		var stmt string
		switch be {
		case "postgres":
			stmt = fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s TYPE varchar(20) COLLATE "C"`, table, col)
		case "mariadb":
			stmt = fmt.Sprintf("ALTER TABLE %s MODIFY %s varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", table, col)
		default:
			return // SQLite compares text in BINARY unless told otherwise
		}
		if err := db.Exec(stmt).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// load creates the rows through the plugin (one batch per user, which
// stays in one data source) and copies them into the oracle.
func (e *readEnv) load(t *testing.T) {
	t.Helper()
	statuses := []string{"a", "B", "c", "D"}
	notes := []string{"x", "Y", "x"}
	qtys := []int64{9, 100, 7, 100}
	var all []ReadOrder
	for u := int64(1); u <= 4; u++ {
		var batch []ReadOrder
		for i := 0; i < 10; i++ {
			n := int(u)*10 + i
			o := ReadOrder{UserID: u, Amount: (n * 7) % 13, Status: statuses[(n/3)%4], Code: statuses[(n/2)%4], Big: int64(n)}
			if i < 2 {
				o.Big = math.MaxInt64 - int64(n)
			}
			if n%3 != 0 {
				o.Note = &notes[n%3]
			}
			if n%5 != 0 {
				o.Qty = sql.NullInt64{Int64: qtys[n%4], Valid: true}
			}
			batch = append(batch, o)
		}
		if err := e.db.Create(&batch).Error; err != nil {
			t.Fatal(err)
		}
		all = append(all, batch...)
	}
	if err := e.oracle.Create(&all).Error; err != nil {
		t.Fatal(err)
	}
}

// readCase is one GORM call run on the sharded tables and on the oracle.
type readCase struct {
	name string
	run  func(db *gorm.DB) (any, error)
	// unordered: the result is a multiset (no ORDER BY defines its order).
	unordered bool
	// refused: backends on which the plugin must refuse the call;
	// "*" for every backend.
	refused []string
	// binary: run with WithBinaryCollation.
	binary bool
}

func (c readCase) refusedOn(be string) bool {
	for _, r := range c.refused {
		if r == be || r == "*" {
			return true
		}
	}
	return false
}

// check runs c on both sides and compares.
func (e *readEnv) check(t *testing.T, c readCase) {
	t.Helper()
	db := e.db
	if c.binary {
		db = e.bin
	}
	got, err := c.run(db)
	if c.refusedOn(e.be) {
		if !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("%s: %v, %v; want ErrUnsupported", c.name, got, err)
		}
		return
	}
	want, werr := c.run(e.oracle)
	if err != nil && werr != nil && !errors.Is(err, gormplugin.ErrUnsupported) && !errors.Is(werr, gorm.ErrRecordNotFound) {
		t.Logf("%s: the database rejects it on both sides: %v", c.name, werr)
		return
	}
	if testing.Verbose() {
		t.Logf("%s: %v %.300s", c.name, err, show(got))
	}
	if !errors.Is(err, werr) && fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Errorf("%s: error %v; the oracle's %v", c.name, err, werr)
		return
	}
	if werr != nil && !errors.Is(werr, gorm.ErrRecordNotFound) {
		t.Errorf("%s: the oracle failed: %v", c.name, werr)
		return
	}
	if c.unordered {
		got, want = sortedText(got), sortedText(want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %s\n want %s", c.name, show(got), show(want))
	}
}

func show(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		out := ""
		for i := range rv.Len() {
			b, _ := json.Marshal(rv.Index(i).Interface())
			out += "\n   " + string(b)
		}
		return out
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// sortedText is a slice as a sorted list of its elements' text.
func sortedText(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return v
	}
	out := make([]string, rv.Len())
	for i := range out {
		b, _ := json.Marshal(rv.Index(i).Interface()) // pointers by value
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

// find runs a query into a fresh slice of T.
func find[T any](q func(db *gorm.DB) *gorm.DB) func(db *gorm.DB) (any, error) {
	return func(db *gorm.DB) (any, error) {
		var out []T
		err := q(db).Find(&out).Error
		return out, err
	}
}

func eachReadBackend(t *testing.T, f func(t *testing.T, e *readEnv)) {
	eachReadBackendIn(t, "gormread_", f)
}

// eachReadBackendIn runs f on each backend, its databases named with prefix.
func eachReadBackendIn(t *testing.T, prefix string, f func(t *testing.T, e *readEnv)) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) { f(t, newReadEnvIn(t, be, prefix)) })
	}
}
