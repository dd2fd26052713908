package sqlhook

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// oneSourceRules shards t_order over two tables of data source ds.
const oneSourceRules = `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..1}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`

// connIfaces are the interfaces a wrapped conn must have iff its driver's
// conn has them.
var connIfaces = []struct {
	name string
	has  func(any) bool
}{
	{"Pinger", func(c any) bool { _, ok := c.(driver.Pinger); return ok }},
	{"Execer", func(c any) bool { _, ok := c.(driver.Execer); return ok }}, //lint:ignore SA1019 the mirror must keep every optional interface of the driver, the deprecated ones included
	{"ExecerContext", func(c any) bool { _, ok := c.(driver.ExecerContext); return ok }},
	{"Queryer", func(c any) bool { _, ok := c.(driver.Queryer); return ok }}, //lint:ignore SA1019 the mirror must keep every optional interface of the driver, the deprecated ones included
	{"QueryerContext", func(c any) bool { _, ok := c.(driver.QueryerContext); return ok }},
	{"SessionResetter", func(c any) bool { _, ok := c.(driver.SessionResetter); return ok }},
	{"Validator", func(c any) bool { _, ok := c.(driver.Validator); return ok }},
	{"NamedValueChecker", func(c any) bool { _, ok := c.(driver.NamedValueChecker); return ok }},
	{"ConnPrepareContext", func(c any) bool { _, ok := c.(driver.ConnPrepareContext); return ok }},
	{"ConnBeginTx", func(c any) bool { _, ok := c.(driver.ConnBeginTx); return ok }},
}

// rawIfaces lists which connIfaces the driver conn of db has, through
// (*sql.Conn).Raw.
func rawIfaces(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := map[string]bool{}
	if err := c.Raw(func(dc any) error {
		for _, f := range connIfaces {
			got[f.name] = f.has(dc)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// checkMirror compares the plain driver's conn with the wrapped one and
// runs a statement through the wrapper.
func checkMirror(t *testing.T, plain *sql.DB, wrapped driver.Connector) {
	t.Helper()
	db := sql.OpenDB(wrapped)
	defer db.Close()
	want, got := rawIfaces(t, plain), rawIfaces(t, db)
	n := 0
	for _, f := range connIfaces {
		if got[f.name] != want[f.name] {
			t.Errorf("%s: wrapped conn has it: %v, driver's conn: %v", f.name, got[f.name], want[f.name])
		}
		if want[f.name] {
			n++
		}
	}
	t.Logf("driver conn implements %d of %d: %v", n, len(connIfaces), want)
	var one int
	if err := db.QueryRow(`SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 through the wrapper: %d, %v", one, err)
	}
}

func TestMirrorPgx(t *testing.T) {
	dsn := dbtest.Postgres(t, "sqlhook_mirror")
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	checkMirror(t, plain, Wrap(stdlib.GetConnector(*cfg), parseRouter(t, oneSourceRules)))
}

func TestMirrorMySQL(t *testing.T) {
	dsn := dbtest.MySQL(t, "sqlhook_mirror")
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	checkMirror(t, plain, Wrap(c, parseRouter(t, oneSourceRules)))
}

func TestMirrorSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	plain, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	c, err := registeredConnector(shardconf.DataSource{Name: "ds", Driver: "sqlite", DSN: path}, sql.Drivers())
	if err != nil {
		t.Fatal(err)
	}
	checkMirror(t, plain, Wrap(c, parseRouter(t, oneSourceRules)))
}

// A driver whose conn has none of the optional interfaces: neither has the
// wrapper (besides ConnPrepareContext and ConnBeginTx, which database/sql
// treats like the legacy methods), and statements run by Prepare.
func TestMirrorBareDriver(t *testing.T) {
	log := &fkLog{}
	src := &fkConnector{name: "ds", log: log}
	db := sql.OpenDB(Wrap(src, parseRouter(t, oneSourceRules), WithDialect(SQLite)))
	defer db.Close()
	db.SetMaxOpenConns(1)
	got := rawIfaces(t, db)
	for _, f := range connIfaces {
		want := f.name == "ConnPrepareContext" || f.name == "ConnBeginTx"
		if got[f.name] != want {
			t.Errorf("%s: wrapped bare conn has it: %v, want %v", f.name, got[f.name], want)
		}
	}
	res, err := db.Exec(`UPDATE plain SET x = 1`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Errorf("RowsAffected = %d, %v", n, err)
	}
	var name string
	if err := db.QueryRow(`SELECT name`).Scan(&name); err != nil || name != "ds" {
		t.Fatalf("query through a bare driver: %q, %v", name, err)
	}
	for _, e := range []string{"ds prepare UPDATE plain SET x = 1", "ds exec UPDATE plain SET x = 1", "ds stmt-close UPDATE plain SET x = 1",
		"ds prepare SELECT name", "ds query SELECT name", "ds stmt-close SELECT name"} {
		if log.count(e) != 1 {
			t.Errorf("want one %q in %q", e, log.all())
		}
	}

	// The rich fake: the interfaces it has and no others.
	rich := &fkConnector{name: "ds", log: &fkLog{}, rich: true}
	db2 := sql.OpenDB(Wrap(rich, parseRouter(t, oneSourceRules), WithDialect(SQLite)))
	defer db2.Close()
	dc, _ := rich.Connect(context.Background())
	got = rawIfaces(t, db2)
	for _, f := range connIfaces {
		want := f.has(dc) || f.name == "ConnPrepareContext"
		if got[f.name] != want {
			t.Errorf("rich fake %s: wrapped has it: %v, want %v", f.name, got[f.name], want)
		}
	}
}

// Every generated type has exactly the interfaces of its mask.
func TestMirrorTable(t *testing.T) {
	for m := range uint(len(mirrors)) {
		c := &conn{}
		w := mirrors[m](c)
		if got := optionalMask(w); got != m {
			t.Errorf("mirrors[%#x] implements mask %#x", m, got)
		}
		if _, ok := w.(driver.ConnPrepareContext); !ok {
			t.Errorf("mirrors[%#x] lacks ConnPrepareContext", m)
		}
		if _, ok := w.(driver.ConnBeginTx); !ok {
			t.Errorf("mirrors[%#x] lacks ConnBeginTx", m)
		}
		if hc, err := hookConn(w); err != nil || hc != c {
			t.Errorf("mirrors[%#x]: hookConn = %p, %v; want %p", m, hc, err, c)
		}
	}
}

// mirror_gen.go is what the generator writes now.
func TestMirrorGenUpToDate(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to run the generator: %v", err)
	}
	out := filepath.Join(t.TempDir(), "mirror_gen.go")
	cmd := exec.Command(goTool, "run", "./internal/mirrorgen", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mirrorgen: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("mirror_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("mirror_gen.go is stale: run go generate ./sqlhook")
	}
}
