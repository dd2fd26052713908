package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// ddlTemplate is portable: PostgreSQL, MariaDB and SQLite all read it.
const ddlTemplate = `-- Orders. The name t_order in a comment stays as written.
CREATE TABLE t_order (
  order_id BIGINT NOT NULL,
  user_id  BIGINT NOT NULL,
  status   VARCHAR(32) NOT NULL DEFAULT 't_order', /* t_order */
  ` + "`amount`" + ` DECIMAL(12, 2),
  CONSTRAINT pk_t_order PRIMARY KEY (order_id),
  CHECK (t_order.user_id >= 0)
);
CREATE INDEX idx_user ON t_order (user_id);
CREATE UNIQUE INDEX uk_t_order_status ON t_order (status, order_id);

CREATE TABLE t_order_item (
  item_id  BIGINT NOT NULL PRIMARY KEY,
  order_id BIGINT NOT NULL,
  note     VARCHAR(100) DEFAULT 'see t_order_item; or not'
);
CREATE INDEX idx_order ON t_order_item (order_id);

CREATE TABLE t_address (address_id BIGINT NOT NULL PRIMARY KEY, city VARCHAR(64));
CREATE INDEX idx_city ON t_address (city);
`

// ddlRules shards t_order and t_order_item over two data sources with
// two tables each and broadcasts t_address. Its SNOWFLAKE has no
// worker-id, which ddl does not need.
func ddlRules(driver, dsn0, dsn1 string) string {
	return fmt.Sprintf(`dataSources:
  ds_0:
    driver: %[1]s
    dsn: '%[2]s'
  ds_1:
    driver: %[1]s
    dsn: '%[3]s'
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_order_inline
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snowflake
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_order_item_inline
  defaultDatabaseStrategy:
    standard:
      shardingColumn: user_id
      shardingAlgorithmName: database_inline
  shardingAlgorithms:
    database_inline:
      type: INLINE
      props:
        algorithm-expression: ds_${user_id %% 2}
    t_order_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_${order_id %% 2}
    t_order_item_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_item_${order_id %% 2}
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
- !BROADCAST
  tables:
  - t_address
`, driver, dsn0, dsn1)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantDDL is what every data source holds after the DDL: physical table ->
// the indexes made from the template's CREATE INDEX statements.
var wantDDL = map[string][]string{
	"t_order_0":      {"idx_user_t_order_0", "uk_t_order_0_status"},
	"t_order_1":      {"idx_user_t_order_1", "uk_t_order_1_status"},
	"t_order_item_0": {"idx_order_t_order_item_0"},
	"t_order_item_1": {"idx_order_t_order_item_1"},
	"t_address":      {"idx_city"},
}

// ddlJSON runs ddl -o json and returns its entries by data source.
func ddlJSON(t *testing.T, args ...string) map[string][]ddlEntry {
	t.Helper()
	out := mustCLI(t, append([]string{"ddl", "-o", "json"}, args...)...)
	var entries []ddlEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("ddl -o json: %v\n%s", err, out)
	}
	byDS := map[string][]ddlEntry{}
	for _, e := range entries {
		byDS[e.DataSource] = append(byDS[e.DataSource], e)
	}
	return byDS
}

// applyDDL runs the statements of every entry in db.
func applyDDL(t *testing.T, db *sql.DB, entries []ddlEntry) {
	t.Helper()
	for _, e := range entries {
		for _, s := range e.Statements {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s %s: %v\n%s", e.DataSource, e.Table, err, s)
			}
		}
	}
}

// checkSchema checks db holds the tables of wantDDL with their indexes.
// tablesQ lists the tables; indexQ lists the indexes of the table $1/?.
func checkSchema(t *testing.T, name string, db *sql.DB, tablesQ, indexQ string) {
	t.Helper()
	strs := func(q string, args ...any) []string {
		rows, err := db.Query(q, args...)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	var want []string
	for table := range wantDDL {
		want = append(want, table)
	}
	slices.Sort(want)
	if got := strs(tablesQ); !slices.Equal(got, want) {
		t.Errorf("%s: tables %q, want %q", name, got, want)
	}
	for table, idx := range wantDDL {
		got := strs(indexQ, table)
		for _, i := range idx {
			if !slices.Contains(got, i) {
				t.Errorf("%s: table %s has indexes %q, want %s among them", name, table, got, i)
			}
		}
	}
}

func TestDDLText(t *testing.T) {
	rules := writeFile(t, "rules.yaml", ddlRules("sqlite", "file:a.db", "file:b.db"))
	tmpl := writeFile(t, "t_order.sql", `CREATE TABLE t_order (id BIGINT PRIMARY KEY, note TEXT DEFAULT 't_order' -- t_order
);
-- an index
CREATE INDEX idx_t_order_note ON t_order (note);
`)
	want := "-- data source ds_0 (sqlite)\n" +
		"CREATE TABLE \"t_order_0\" (id BIGINT PRIMARY KEY, note TEXT DEFAULT 't_order' -- t_order\n);\n" +
		"CREATE INDEX \"idx_t_order_0_note\" ON \"t_order_0\" (note);\n" +
		"\n" +
		"CREATE TABLE \"t_order_1\" (id BIGINT PRIMARY KEY, note TEXT DEFAULT 't_order' -- t_order\n);\n" +
		"CREATE INDEX \"idx_t_order_1_note\" ON \"t_order_1\" (note);\n" +
		"\n" +
		"-- data source ds_1 (sqlite)\n" +
		"CREATE TABLE \"t_order_0\" (id BIGINT PRIMARY KEY, note TEXT DEFAULT 't_order' -- t_order\n);\n" +
		"CREATE INDEX \"idx_t_order_0_note\" ON \"t_order_0\" (note);\n" +
		"\n" +
		"CREATE TABLE \"t_order_1\" (id BIGINT PRIMARY KEY, note TEXT DEFAULT 't_order' -- t_order\n);\n" +
		"CREATE INDEX \"idx_t_order_1_note\" ON \"t_order_1\" (note);\n"
	if got := mustCLI(t, "ddl", "-rules", rules, "-table", "t_order", "-template", tmpl); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// The rule file as the first argument, the table as the second.
	if got := mustCLI(t, "ddl", "-template", tmpl, rules, "t_order"); got != want {
		t.Errorf("positional form:\n%s", got)
	}
	// A table named twice prints once.
	if got := mustCLI(t, "ddl", "-rules", rules, "-table", "t_order,T_ORDER", "-template", tmpl, "t_order"); got != want {
		t.Errorf("t_order named thrice:\n%s", got)
	}
	// -datasource picks data sources.
	if got := mustCLI(t, "ddl", "-rules", rules, "-table", "t_order", "-template", tmpl, "-datasource", "ds_1"); got != want[strings.Index(want, "-- data source ds_1"):] {
		t.Errorf("-datasource ds_1:\n%s", got)
	}
	if code, _, errs := cli(t, "ddl", "-rules", rules, "-table", "t_order", "-template", tmpl, "-datasource", "ds_9"); code != 1 || !strings.Contains(errs, "ds_9") {
		t.Errorf("-datasource ds_9: exit %d, %q", code, errs)
	}
	// -dialect overrides the drivers; MySQL quotes with backquotes.
	got := mustCLI(t, "ddl", "-rules", rules, "-table", "t_order", "-template", tmpl, "-dialect", "mysql")
	if !strings.Contains(got, "-- data source ds_1 (mysql)\nCREATE TABLE `t_order_0` (") ||
		!strings.Contains(got, "CREATE INDEX `idx_t_order_1_note` ON `t_order_1` (note);") {
		t.Errorf("-dialect mysql:\n%s", got)
	}
}

func TestDDLNames(t *testing.T) {
	for _, tc := range []struct{ name, logic, phys, want string }{
		{"idx_user", "t_order", "t_order_0", "idx_user_t_order_0"},
		{"pk_t_order", "t_order", "t_order_3", "pk_t_order_3"},
		{"T_ORDER_uk", "t_order", "t_order_1", "t_order_1_uk"},
		{"idx_city", "t_address", "t_address", "idx_city"},
	} {
		if got := uniqueName(tc.name, tc.logic, tc.phys); got != tc.want {
			t.Errorf("uniqueName(%q, %q, %q) = %q, want %q", tc.name, tc.logic, tc.phys, got, tc.want)
		}
	}
}

func TestDDLTokens(t *testing.T) {
	// Names in strings, comments and dollar quotes stay; quoted and
	// qualified names follow the table; E'..' strings take backslashes.
	src := `/* t_order /* nested */ t_order */ CREATE TABLE IF NOT EXISTS "T_Order" (
  a TEXT DEFAULT E't_order\' t_order',
  b TEXT DEFAULT $x$ t_order $x$,
  "t_order" INT,
  CONSTRAINT c_1 CHECK ("T_Order".a <> 'x')
)`
	tm, err := parseTemplate("x.sql", src, dialectPostgres)
	if err != nil {
		t.Fatal(err)
	}
	tt := tm.lookup("t_order")
	if tt == nil || tt.line != 1 {
		t.Fatalf("tables %+v", tm.tables)
	}
	got, err := tm.render(tt.stmts[0], "t_order_7", dialectPostgres, keepRef, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	want := `CREATE TABLE IF NOT EXISTS "t_order_7" (
  a TEXT DEFAULT E't_order\' t_order',
  b TEXT DEFAULT $x$ t_order $x$,
  "t_order" INT,
  CONSTRAINT "c_1_t_order_7" CHECK ("t_order_7".a <> 'x')
)`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	// MySQL: "x" is a string, backslashes escape, # is a comment.
	src = "# t_order\nCREATE TABLE `t_order` (a VARCHAR(9) DEFAULT \"t_order\", b VARCHAR(9) DEFAULT 'it\\'s;') ENGINE=InnoDB COMMENT='t_order'"
	if tm, err = parseTemplate("x.sql", src, dialectMySQL); err != nil {
		t.Fatal(err)
	}
	got, err = tm.render(tm.tables[0].stmts[0], "t_order_1", dialectMySQL, keepRef, map[string]bool{})
	want = "CREATE TABLE `t_order_1` (a VARCHAR(9) DEFAULT \"t_order\", b VARCHAR(9) DEFAULT 'it\\'s;') ENGINE=InnoDB COMMENT='t_order'"
	if err != nil || got != want {
		t.Errorf("mysql: %v\ngot:  %s\nwant: %s", err, got, want)
	}
}

func TestDDLErrors(t *testing.T) {
	rules := writeFile(t, "rules.yaml", ddlRules("pgx", "postgres://a/b", "postgres://a/c"))
	for _, tc := range []struct {
		name, tmpl string
		args       []string
		want       string
	}{
		{"wrong table", "\nCREATE TABLE t_ordr (id INT);\n", []string{"-table", "t_order"}, "wrong_table.sql:2: CREATE TABLE t_ordr, not the logic table t_order"},
		{"not create", "CREATE TABLE t_order (id INT);\nDROP TABLE t_order;\n", []string{"-table", "t_order"}, "not_create.sql:2: want CREATE TABLE or CREATE INDEX, got DROP"},
		{"view", "CREATE VIEW t_order AS SELECT 1", []string{"-table", "t_order"}, "view.sql:1: want CREATE TABLE or CREATE INDEX, got CREATE VIEW"},
		{"as select", "CREATE TABLE t_order AS SELECT 1", []string{"-table", "t_order"}, "as_select.sql:1: want ( and the columns"},
		{"qualified", "CREATE TABLE app.t_order (id INT)", []string{"-table", "t_order"}, "qualified.sql:1: table name app.t_order is schema-qualified"},
		{"unbalanced", "CREATE TABLE t_order (\n id INT,\n x INT", []string{"-table", "t_order"}, "unbalanced.sql:3: unbalanced ("},
		{"string", "CREATE TABLE t_order (\n id TEXT DEFAULT 'x\n)", []string{"-table", "t_order"}, "string.sql:2: unterminated '"},
		{"comment", "CREATE TABLE t_order (id INT) /* open", []string{"-table", "t_order"}, "comment.sql:1: unterminated /* comment"},
		{"index other table", "CREATE TABLE t_order (id INT);\n\nCREATE INDEX i ON t_user (id)", []string{"-table", "t_order"}, "index_other_table.sql:3: CREATE INDEX on t_user"},
		{"twice", "CREATE TABLE t_order (id INT);\nCREATE TABLE t_order (id INT)", []string{"-table", "t_order"}, "twice.sql:2: second CREATE TABLE t_order (the first is at line 1)"},
		{"one of two", "CREATE TABLE t_order (id INT);", []string{"-table", "t_order,t_order_item"}, "one_of_two.sql: no CREATE TABLE for t_order_item; it creates t_order (line 1)"},
		{"empty", "-- nothing\n", []string{"-table", "t_order"}, "empty.sql: no CREATE TABLE statement"},
		{"missing tables", "CREATE TABLE t_order (id INT);\nCREATE TABLE t_address (id INT);", nil, "missing_tables.sql: no CREATE TABLE for t_order_item"},
		{"extra table", ddlTemplate + "CREATE TABLE t_audit (id INT);", nil, "extra_table.sql:22: CREATE TABLE t_audit: not a table of"},
		{"long name", "CREATE TABLE t_order (id INT);\nCREATE INDEX idx_" + strings.Repeat("x", 60) + " ON t_order (id)", []string{"-table", "t_order"}, "long_name.sql:2: name idx_"},
	} {
		file := writeFile(t, strings.ReplaceAll(tc.name, " ", "_")+".sql", tc.tmpl)
		args := append([]string{"ddl", "-rules", rules, "-template", file}, tc.args...)
		code, out, errs := cli(t, args...)
		if code != 1 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 with %q", tc.name, code, out, errs, tc.want)
		}
	}

	good := writeFile(t, "schema.sql", ddlTemplate)
	// A bad rule file: its problems with file:line:column.
	bad := writeFile(t, "bad.yaml", "rules:\n- !SHARDING\n  tables:\n    t:\n      actualDataNode: ds.t_${0..1}\n")
	if code, _, errs := cli(t, "ddl", "-rules", bad, "-template", good); code != 1 || !strings.Contains(errs, "bad.yaml:5:7") {
		t.Errorf("bad rules: exit %d, stderr %q", code, errs)
	}
	// Data sources written for Java have no driver: -dialect is needed.
	java := rulesFile("ss5-databases-tables.yaml")
	if code, _, errs := cli(t, "ddl", "-rules", java, "-template", good); code != 1 || !strings.Contains(errs, "-dialect") {
		t.Errorf("no driver: exit %d, stderr %q", code, errs)
	}
	out := mustCLI(t, "ddl", "-rules", java, "-template", good, "-dialect", "postgres", "-table", "t_order,t_order_item")
	if strings.Count(out, "CREATE TABLE") != 8 || strings.Contains(out, "t_address") {
		t.Errorf("-dialect postgres on %s:\n%s", java, out)
	}
	if code, _, errs := cli(t, "ddl", "-rules", rules, "-template", good, "t_nope"); code != 1 || !strings.Contains(errs, "unknown table") {
		t.Errorf("unknown table: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := cli(t, "ddl", "-rules", rules, "-template", filepath.Join(t.TempDir(), "nope.sql")); code != 1 || !strings.Contains(errs, "nope.sql") {
		t.Errorf("missing template: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{
		{"ddl", "-rules", rules},   // no -template
		{"ddl", "-template", good}, // no rules
		{"ddl", "-rules", rules, "-template", good, "-dialect", "oracle"}, // bad dialect
		{"ddl", "-rules", rules, "-template", good, "-o", "yaml"},
		{"ddl", "-bogus"},
	} {
		if code, out, errs := cli(t, args...); code != 2 || out != "" || !strings.Contains(errs, "usage: shardkey ddl") {
			t.Errorf("shardkey %s: exit %d, stdout %q, stderr %q; want exit 2", strings.Join(args, " "), code, out, errs)
		}
	}
}

func TestDDLSQLite(t *testing.T) {
	dir := t.TempDir()
	dsns := []string{filepath.Join(dir, "ds_0.db"), filepath.Join(dir, "ds_1.db")}
	rules := writeFile(t, "rules.yaml", ddlRules("sqlite", dsns[0], dsns[1]))
	tmpl := writeFile(t, "schema.sql", ddlTemplate)
	byDS := ddlJSON(t, "-rules", rules, "-template", tmpl)
	if len(byDS) != 2 {
		t.Fatalf("data sources %v", byDS)
	}
	for i, ds := range []string{"ds_0", "ds_1"} {
		if len(byDS[ds]) != 5 || byDS[ds][0].Dialect != dialectSQLite {
			t.Fatalf("%s: %+v", ds, byDS[ds])
		}
		// The template's order, not the rules' (t_address is last).
		var order []string
		for _, e := range byDS[ds] {
			order = append(order, e.Table)
		}
		if want := []string{"t_order_0", "t_order_1", "t_order_item_0", "t_order_item_1", "t_address"}; !slices.Equal(order, want) {
			t.Errorf("%s: tables in order %q, want %q", ds, order, want)
		}
		db, err := sql.Open("sqlite", dsns[i])
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		applyDDL(t, db, byDS[ds])
		checkSchema(t, "sqlite "+ds, db,
			`SELECT name FROM sqlite_master WHERE type = 'table'`,
			`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`)
	}
}

func TestDDLPostgres(t *testing.T) {
	dsns := []string{dbtest.Postgres(t, "cli_ddl_0"), dbtest.Postgres(t, "cli_ddl_1")}
	rules := writeFile(t, "rules.yaml", ddlRules("pgx", dsns[0], dsns[1]))
	tmpl := writeFile(t, "schema.sql", ddlTemplate)
	byDS := ddlJSON(t, "-rules", rules, "-template", tmpl)
	for i, ds := range []string{"ds_0", "ds_1"} {
		if len(byDS[ds]) != 5 || byDS[ds][0].Dialect != dialectPostgres {
			t.Fatalf("%s: %+v", ds, byDS[ds])
		}
		db, err := sql.Open("pgx", dsns[i])
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		applyDDL(t, db, byDS[ds])
		checkSchema(t, "postgres "+ds, db,
			`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`,
			`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1`)
		var pk string
		if err := db.QueryRow(`SELECT conname FROM pg_constraint WHERE conrelid = 't_order_1'::regclass AND contype = 'p'`).Scan(&pk); err != nil || pk != "pk_t_order_1" {
			t.Errorf("postgres %s: primary key of t_order_1 %q, %v", ds, pk, err)
		}
	}
}

func TestDDLMySQL(t *testing.T) {
	dsns := []string{dbtest.MySQL(t, "cli_ddl_0"), dbtest.MySQL(t, "cli_ddl_1")}
	rules := writeFile(t, "rules.yaml", ddlRules("mysql", dsns[0], dsns[1]))
	tmpl := writeFile(t, "schema.sql", ddlTemplate)
	byDS := ddlJSON(t, "-rules", rules, "-template", tmpl)
	for i, ds := range []string{"ds_0", "ds_1"} {
		if len(byDS[ds]) != 5 || byDS[ds][0].Dialect != dialectMySQL {
			t.Fatalf("%s: %+v", ds, byDS[ds])
		}
		db, err := sql.Open("mysql", dsns[i])
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		applyDDL(t, db, byDS[ds])
		checkSchema(t, "mysql "+ds, db,
			`SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()`,
			`SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ?`)
	}
}

// FuzzDDLTemplate: any template text is read without panicking, and what
// is read renders.
func FuzzDDLTemplate(f *testing.F) {
	f.Add(ddlTemplate)
	f.Add("CREATE TABLE t (a TEXT DEFAULT E'\\'', b TEXT DEFAULT $$x$$) /* /* */ */; CREATE INDEX ON t (a)")
	f.Add("CREATE TABLE `t` (a INT, CONSTRAINT PRIMARY KEY (a), CONSTRAINT c UNIQUE (a)) # x\n;")
	f.Add("CREATE TABLE [t] (\"a\"\"b\" INT, t.a)")
	f.Fuzz(func(t *testing.T, src string) {
		for _, d := range []string{dialectPostgres, dialectMySQL, dialectSQLite} {
			tm, err := parseTemplate("f.sql", src, d)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f.sql") {
					t.Fatalf("%s: error without the file: %v", d, err)
				}
				continue
			}
			for _, tt := range tm.tables {
				for _, s := range tt.stmts {
					if _, err := tm.render(s, tt.name+"_0", d, keepRef, map[string]bool{}); err != nil && !strings.HasPrefix(err.Error(), "f.sql:") {
						t.Fatalf("%s: %v", d, err)
					}
				}
			}
		}
	})
}

// keepRef resolves a referenced table to itself.
func keepRef(name string) (string, error) { return name, nil }
