package coretest_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// mixedKeyGenRules has a SNOWFLAKE and a SEGMENT generator; segmentProps
// is spliced into the SEGMENT's props.
func mixedKeyGenRules(segmentProps string) string {
	return `
dataSources:
  ds: {driver: sqlite, dsn: "file:kgprops.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: "ds.t_order_${0..1}"
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: mod}}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
    t_item:
      actualDataNodes: "ds.t_item_${0..1}"
      tableStrategy: {standard: {shardingColumn: item_id, shardingAlgorithmName: mod}}
      keyGenerateStrategy: {column: item_id, keyGeneratorName: segment}
  shardingAlgorithms:
    mod: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE}
    segment:
      type: SEGMENT
      props:
        biz-tag: t_item` + segmentProps + `
`
}

func parseRules(t *testing.T, src string) *shardconf.Config {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func closeKeyGen(t *testing.T, g keygen.Generator) {
	if c, ok := g.(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
}

// TestWithKeyGenPropsReachOnlyGeneratorsThatAcceptThem: worker-id given to
// a file with a SNOWFLAKE and a SEGMENT goes to the SNOWFLAKE only.
func TestWithKeyGenPropsReachOnlyGeneratorsThatAcceptThem(t *testing.T) {
	db, err := sql.Open("pgx", dbtest.Postgres(t, "shardconf_kgprops"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r, err := shardconf.NewRouter(parseRules(t, mixedKeyGenRules("")),
		shardconf.WithKeyGenProps(keygen.Props{"worker-id": "7"}), shardconf.WithKeyGenOptions(keygen.WithDB(db)))
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	_, seg, ok := r.KeyGenerator("t_item")
	if !ok || seg.Type() != "SEGMENT" {
		t.Fatalf("t_item key generator: %v %v", seg, ok)
	}
	closeKeyGen(t, seg)
	_, sf, ok := r.KeyGenerator("t_order")
	if !ok || sf.Type() != "SNOWFLAKE" {
		t.Fatalf("t_order key generator: %v %v", sf, ok)
	}
	id, err := sf.(keygen.IDGenerator).NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parts, err := sf.(interface {
		Decompose(int64) (keygen.Parts, error)
	}).Decompose(id)
	if err != nil || parts.Worker != 7 {
		t.Fatalf("SNOWFLAKE id %d: worker %d (%v), want 7", id, parts.Worker, err)
	}
	if _, err := seg.NextKey(context.Background()); err != nil {
		t.Fatalf("SEGMENT NextKey: %v", err)
	}
}

// TestWithKeyGenPropAcceptedByNoGeneratorIsAnError: a prop every generator
// refuses is named in the error with the refusing types, not ignored.
func TestWithKeyGenPropAcceptedByNoGeneratorIsAnError(t *testing.T) {
	src := `
dataSources:
  ds: {driver: sqlite, dsn: "file:kgprops.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: "ds.t_order_${0..1}"
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: mod}}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
    t_doc:
      actualDataNodes: "ds.t_doc_${0..1}"
      tableStrategy: {standard: {shardingColumn: doc_id, shardingAlgorithmName: mod}}
      keyGenerateStrategy: {column: doc_id, keyGeneratorName: uuid}
  shardingAlgorithms:
    mod: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE}
    uuid: {type: UUID}
`
	_, err := shardconf.NewRouter(parseRules(t, src),
		shardconf.WithKeyGenProps(keygen.Props{"worker-id": "7", "biz-tag": "x"}))
	if err == nil {
		t.Fatal("NewRouter accepted a prop no generator takes")
	}
	msg := err.Error()
	if !errors.Is(err, keygen.ErrInvalidProps) || !strings.Contains(msg, `"biz-tag"`) ||
		!strings.Contains(msg, "SNOWFLAKE") || !strings.Contains(msg, "UUID") {
		t.Fatalf("error %q: want ErrInvalidProps naming biz-tag, SNOWFLAKE and UUID", msg)
	}
	if strings.Contains(msg, `"worker-id"`) {
		t.Fatalf("error %q names worker-id, which SNOWFLAKE accepted", msg)
	}
}

// TestKeyGenPropsInTheFileStayStrict: an unknown prop written in the file
// is an error at its line even when WithKeyGenProps props are given.
func TestKeyGenPropsInTheFileStayStrict(t *testing.T) {
	src := mixedKeyGenRules("\n        worker-id: 3")
	_, err := shardconf.NewRouter(parseRules(t, src),
		shardconf.WithKeyGenProps(keygen.Props{"worker-id": "7"}))
	var ce *shardconf.ConfigError
	var pe *keygen.PropError
	if !errors.As(err, &ce) || ce.Line == 0 || !errors.As(err, &pe) || pe.Key != "worker-id" || !pe.Unknown() ||
		!strings.Contains(ce.Path, "segment") {
		t.Fatalf("NewRouter with worker-id in SEGMENT's file props: %v", err)
	}
}
