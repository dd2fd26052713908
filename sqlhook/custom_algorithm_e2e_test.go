package sqlhook_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// Go sharding algorithms (shardconf.RegisterAlgorithm) placing real rows:
// t_order's data source by user_id's hundred, registered as a type; its
// table by order_id's decade, registered under a Java class name and named
// by a CLASS_BASED algorithm, answering ranges itself; t_bad by an
// algorithm that answers a name that is no target.
const customAlgoRules = `
dataSources:
  ds_0: {driver: %[1]s, dsn: %[2]q}
  ds_1: {driver: %[1]s, dsn: %[3]q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_hundred}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by_decade}}
    t_bad:
      actualDataNodes: ds_0.t_bad_${0..1}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: bogus}}
  shardingAlgorithms:
    by_hundred: {type: %[4]s}
    by_decade:
      type: CLASS_BASED
      props: {strategy: STANDARD, algorithmClassName: %[5]s}
    bogus: {type: %[6]s}
`

var customAlgoSeq atomic.Int64

// hundredAlgo: data source (user_id / 100) % 2; no ranges.
type hundredAlgo struct{}

func (hundredAlgo) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("user_id %v is not an integer", v.Value)
	}
	return targets[(n/100)%2], nil
}

// decadeAlgo: table t_order_{(order_id / 10) % 2}; a range goes to the
// tables of the decades it touches.
type decadeAlgo struct{}

func (decadeAlgo) DoSharding(_ []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("order_id %v is not an integer", v.Value)
	}
	return fmt.Sprintf("%s_%d", v.Table, (n/10)%2), nil
}

func (decadeAlgo) DoRangeSharding(targets []string, v shardconf.RangeShardingValue) ([]string, error) {
	lo, hi := v.Range.Lower, v.Range.Upper
	if lo.Unbounded() || hi.Unbounded() {
		return targets, nil
	}
	a, b := lo.Value.(int64), hi.Value.(int64)
	if !lo.Inclusive {
		a++
	}
	if !hi.Inclusive {
		b--
	}
	var out []string
	for d := a / 10; d <= b/10 && d < a/10+2; d++ {
		out = append(out, fmt.Sprintf("%s_%d", v.Table, d%2))
	}
	return out, nil
}

type bogusAlgo struct{}

func (bogusAlgo) DoSharding([]string, shardconf.ShardingValue) (string, error) { return "t_bad_9", nil }

// registerCustomAlgos registers the three algorithms under names of their
// own (the registry is process-wide) and returns them.
func registerCustomAlgos(t *testing.T) (hundred, decadeClass, bogus string) {
	t.Helper()
	n := customAlgoSeq.Add(1)
	hundred = fmt.Sprintf("SQLHOOK_HUNDRED_%d", n)
	decadeClass = fmt.Sprintf("com.example.sqlhook.Decade%d", n)
	bogus = fmt.Sprintf("SQLHOOK_BOGUS_%d", n)
	for name, a := range map[string]shardconf.ShardingAlgorithm{hundred: hundredAlgo{}, decadeClass: decadeAlgo{}, bogus: bogusAlgo{}} {
		if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return a, nil }); err != nil {
			t.Fatal(err)
		}
	}
	return hundred, decadeClass, bogus
}

func customAlgoBackends(t *testing.T) []backend {
	dir := t.TempDir()
	return []backend{
		{name: "postgres", driver: "pgx", dollar: true,
			dsn: [2]string{dbtest.Postgres(t, "sqlhook_custom_algo_0"), dbtest.Postgres(t, "sqlhook_custom_algo_1")}},
		{name: "mariadb", driver: "mysql",
			dsn: [2]string{dbtest.MySQL(t, "sqlhook_custom_algo_0"), dbtest.MySQL(t, "sqlhook_custom_algo_1")}},
		{name: "sqlite", driver: "sqlite",
			dsn: [2]string{filepath.Join(dir, "custom0.db"), filepath.Join(dir, "custom1.db")}},
	}
}

func TestCustomAlgorithmPlacesWritesAndRoutesReadsOnRealDatabases(t *testing.T) {
	for _, b := range customAlgoBackends(t) {
		t.Run(b.name, func(t *testing.T) { customAlgorithmEndToEnd(t, b) })
	}
}

func customAlgorithmEndToEnd(t *testing.T, b backend) {
	hundred, decade, bogus := registerCustomAlgos(t)
	cfg, err := shardconf.Parse(fmt.Appendf(nil, customAlgoRules, b.driver, b.dsn[0], b.dsn[1], hundred, decade, bogus))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, ddl := range []string{
		`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(16))`,
		`CREATE TABLE t_bad (id BIGINT PRIMARY KEY)`,
	} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	direct := [2]*sql.DB{b.direct(t, 0), b.direct(t, 1)}
	rows := [][2]int64{{1, 1}, {1, 15}, {150, 3}, {150, 27}, {250, 31}, {99, 40}, {101, 12}, {1, 22}}
	for _, r := range rows {
		if _, err := db.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'new')`), r[1], r[0]); err != nil {
			t.Fatalf("INSERT %v: %v", r, err)
		}
	}
	// Every row is in exactly the table the Go algorithms compute.
	where := customPlaced(t, direct, "t_order", "order_id")
	for _, r := range rows {
		want := fmt.Sprintf("ds_%d.t_order_%d", (r[0]/100)%2, (r[1]/10)%2)
		if got := where[r[1]]; len(got) != 1 || got[0] != want {
			t.Errorf("row (user %d, order %d) is in %v, want exactly %s", r[0], r[1], got, want)
		}
	}
	// Reads by equality find each row; ranges go through DoRangeSharding.
	for _, r := range rows {
		if got := customKeys(t, db, b.q(`SELECT order_id FROM t_order WHERE user_id = ? AND order_id = ?`), r[0], r[1]); fmt.Sprint(got) != fmt.Sprint([]int64{r[1]}) {
			t.Errorf("SELECT (user %d, order %d) = %v", r[0], r[1], got)
		}
	}
	if got := customKeys(t, db, b.q(`SELECT order_id FROM t_order WHERE user_id = ? AND order_id BETWEEN ? AND ?`), 1, 0, 20); fmt.Sprint(got) != "[1 15]" {
		t.Errorf("SELECT user 1, order BETWEEN 0 AND 20 = %v, want [1 15]", got)
	}
	if got := customKeys(t, db, b.q(`SELECT order_id FROM t_order WHERE user_id IN (?, ?) AND order_id >= ?`), 150, 250, 20); fmt.Sprint(got) != "[27 31]" {
		t.Errorf("SELECT users 150, 250, order >= 20 = %v, want [27 31]", got)
	}
	res, err := db.Exec(b.q(`UPDATE t_order SET status = 'paid' WHERE user_id = ? AND order_id = ?`), 150, 27)
	if n, _ := rowsAffected(res, err); n != 1 {
		t.Errorf("UPDATE affected %d rows (%v), want 1", n, err)
	}
	var paid int
	if err := direct[1].QueryRow(`SELECT count(*) FROM t_order_0 WHERE status = 'paid'`).Scan(&paid); err != nil || paid != 1 {
		t.Errorf("paid rows in ds_1.t_order_0: %d, %v; want 1", paid, err)
	}
	// A range on user_id, whose algorithm has no DoRangeSharding and no
	// allow-range-query, is refused before anything runs.
	if _, err := db.Exec(b.q(`DELETE FROM t_order WHERE user_id > ?`), 0); !errors.Is(err, shardconf.ErrRangeNotSupported) {
		t.Errorf("DELETE with a range on user_id: err = %v, want ErrRangeNotSupported", err)
	}
	if got := len(customPlaced(t, direct, "t_order", "order_id")); got != len(rows) {
		t.Errorf("%d rows left after the refused DELETE, want %d", got, len(rows))
	}
	// An algorithm answering no target fails the write; nothing lands.
	if _, err := db.Exec(b.q(`INSERT INTO t_bad (id) VALUES (?)`), 1); !errors.Is(err, shardconf.ErrAlgorithmResult) {
		t.Errorf("INSERT into t_bad: err = %v, want ErrAlgorithmResult", err)
	}
	for tb := range 2 {
		if n := count(t, direct[0], fmt.Sprintf("t_bad_%d", tb)); n != 0 {
			t.Errorf("t_bad_%d holds %d rows, want none", tb, n)
		}
	}
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// customPlaced reads each physical table of table directly and returns
// where every key is, as "ds_i.table_j".
func customPlaced(t *testing.T, direct [2]*sql.DB, table, key string) map[int64][]string {
	t.Helper()
	out := map[int64][]string{}
	for ds, d := range direct {
		for tb := range 2 {
			phys := fmt.Sprintf("%s_%d", table, tb)
			for _, k := range customKeys(t, d, "SELECT "+key+" FROM "+phys) {
				out[k] = append(out[k], fmt.Sprintf("ds_%d.%s", ds, phys))
			}
		}
	}
	return out
}

// customKeys runs a query for one integer column; the values sorted.
func customKeys(t *testing.T, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	var out []int64
	for rs.Next() {
		var k int64
		if err := rs.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
