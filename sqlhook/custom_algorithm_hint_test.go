package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// Go algorithms serving hint strategies: t_note's data source by a hint
// routed through a registered type, its table by a hint routed through a
// CLASS_BASED algorithm with strategy HINT. The statements carry no
// sharding value at all.
const customHintRules = `
dataSources:
  ds_0: {driver: %[1]s, dsn: %[2]q}
  ds_1: {driver: %[1]s, dsn: %[3]q}
rules:
- !SHARDING
  tables:
    t_note:
      actualDataNodes: ds_0.t_note_eu, ds_0.t_note_us, ds_1.t_note_eu, ds_1.t_note_us
      databaseStrategy: {hint: {shardingAlgorithmName: ds_by_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: region_by_hint}}
  shardingAlgorithms:
    ds_by_hint: {type: %[4]s}
    region_by_hint:
      type: CLASS_BASED
      props: {strategy: HINT, algorithmClassName: %[5]s}
`

// parityHint: data source v % 2 of an integer hint value.
type parityHint struct{}

func (parityHint) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok || v.Column != "" {
		return "", fmt.Errorf("want an integer hint value without a column, got %T in column %q", v.Value, v.Column)
	}
	return targets[n%2], nil
}

// regionHint: the table of a region named by a text hint value.
type regionHint struct{}

func (regionHint) DoSharding(_ []string, v shardconf.ShardingValue) (string, error) {
	switch r, _ := v.Value.(string); r {
	case "eu", "us":
		return v.Table + "_" + r, nil
	default:
		return "", fmt.Errorf("%w: no region %v", shardconf.ErrNoRoute, v.Value)
	}
}

func TestCustomAlgorithmRoutesHintedStatementsOnRealDatabases(t *testing.T) {
	for _, b := range customAlgoBackends(t) {
		t.Run(b.name, func(t *testing.T) { customAlgorithmHints(t, b) })
	}
}

func customAlgorithmHints(t *testing.T, b backend) {
	n := customAlgoSeq.Add(1)
	parity, region := fmt.Sprintf("SQLHOOK_PARITY_%d", n), fmt.Sprintf("com.example.sqlhook.RegionHint%d", n)
	if err := shardconf.RegisterAlgorithm(parity, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return parityHint{}, nil }); err != nil {
		t.Fatal(err)
	}
	if err := shardconf.RegisterAlgorithm(region, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return regionHint{}, nil }); err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, customHintRules, b.driver, b.dsn[0], b.dsn[1], parity, region))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t_note (id BIGINT PRIMARY KEY, body VARCHAR(16))`); err != nil {
		t.Fatal(err)
	}
	direct := [2]*sql.DB{b.direct(t, 0), b.direct(t, 1)}
	at := func(ds int, r string) context.Context {
		return shardconf.WithHint(context.Background(), "t_note", shardconf.Hint{Database: []any{ds}, Table: []any{r}})
	}
	insert := b.q(`INSERT INTO t_note (id, body) VALUES (?, 'x')`)
	for i, h := range []struct {
		ds int
		r  string
	}{{0, "eu"}, {1, "us"}, {3, "eu"}} {
		if _, err := db.ExecContext(at(h.ds, h.r), insert, i+1); err != nil {
			t.Fatalf("INSERT hinted %d/%s: %v", h.ds, h.r, err)
		}
	}
	for _, c := range []struct {
		ds    int
		table string
		want  int
	}{{0, "t_note_eu", 1}, {0, "t_note_us", 0}, {1, "t_note_eu", 1}, {1, "t_note_us", 1}} {
		if got := count(t, direct[c.ds], c.table); got != c.want {
			t.Errorf("ds_%d.%s holds %d rows, want %d", c.ds, c.table, got, c.want)
		}
	}
	var id int64
	if err := db.QueryRowContext(at(1, "us"), `SELECT id FROM t_note`).Scan(&id); err != nil || id != 2 {
		t.Errorf("SELECT hinted at ds_1.t_note_us: id %d, %v; want 2", id, err)
	}
	// An unknown region is the algorithm's ErrNoRoute; no hint at all is
	// ErrMissingShardingKey. Neither writes anything.
	if _, err := db.ExecContext(at(0, "jp"), insert, 9); !errors.Is(err, shardconf.ErrNoRoute) {
		t.Errorf("INSERT hinted at region jp: err = %v, want ErrNoRoute", err)
	}
	if _, err := db.Exec(insert, 10); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("INSERT without a hint: err = %v, want ErrMissingShardingKey", err)
	}
	total := 0
	for ds := range direct {
		for _, tb := range []string{"t_note_eu", "t_note_us"} {
			total += count(t, direct[ds], tb)
		}
	}
	if total != 3 {
		t.Errorf("%d rows in all, want the 3 hinted inserts", total)
	}
}
