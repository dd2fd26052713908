package main

// Tests of `shardkey ddl` applied to real databases: index and constraint
// names stay unique per physical table, names fold as each database folds
// them, and foreign keys reach the right physical table.

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// applyAll runs every statement, returning the failing one and its error.
func applyAll(db *sql.DB, entries []ddlEntry) (string, error) {
	for _, e := range entries {
		for _, s := range e.Statements {
			if _, err := db.Exec(s); err != nil {
				return s, err
			}
		}
	}
	return "", nil
}

// queryStrings returns the one text column of q's rows.
func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
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
	return out
}

// TestDDLNeverGivesTwoIndexesOneName: renaming can make two index names of
// one logic table equal on a physical table (idx_user gets the physical
// name appended, idx_user_t_order the logic name replaced: both
// idx_user_t_order_0). ddl refuses such a template (exit 1, naming the
// clash) or prints DDL that runs on PostgreSQL; never DDL that fails there.
func TestDDLNeverGivesTwoIndexesOneName(t *testing.T) {
	dsns := []string{dbtest.Postgres(t, "ddl_names_coll_0"), dbtest.Postgres(t, "ddl_names_coll_1")}
	rules := writeFile(t, "rules.yaml", ddlRules("pgx", dsns[0], dsns[1]))
	tmpl := writeFile(t, "t_order.sql", `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT, status TEXT);
CREATE INDEX idx_user ON t_order (user_id);
CREATE INDEX idx_user_t_order ON t_order (user_id, status);
`)
	code, out, errs := cli(t, "ddl", "-o", "json", "-rules", rules, "-table", "t_order", "-template", tmpl)
	if code != 0 {
		t.Logf("ddl refused the template (acceptable): exit %d %s", code, errs)
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		return
	}
	var entries []ddlEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mine []ddlEntry
	for _, e := range entries {
		if e.DataSource == "ds_0" {
			mine = append(mine, e)
		}
	}
	if s, err := applyAll(db, mine); err != nil {
		t.Errorf("generated DDL fails on PostgreSQL: %v\n%s", err, s)
	}
}

// TestDDLFoldsUnquotedNamesAsPostgreSQLDoes: ddl quotes the names it
// renames, so it folds an unquoted index or constraint name to lower case
// first, as PostgreSQL would: CREATE INDEX IDX_User ON t_order makes
// idx_user_t_order_0 (which DROP INDEX idx_user_t_order_0 then finds), not
// "IDX_User_t_order_0".
func TestDDLFoldsUnquotedNamesAsPostgreSQLDoes(t *testing.T) {
	dsns := []string{dbtest.Postgres(t, "ddl_names_case_0"), dbtest.Postgres(t, "ddl_names_case_1")}
	rules := writeFile(t, "rules.yaml", ddlRules("pgx", dsns[0], dsns[1]))
	tmpl := writeFile(t, "t_order.sql", `CREATE TABLE t_order (order_id BIGINT, user_id BIGINT, CONSTRAINT PK_Order PRIMARY KEY (order_id));
CREATE INDEX IDX_User ON t_order (user_id);
`)
	byDS := ddlJSON(t, "-rules", rules, "-table", "t_order", "-template", tmpl)
	db, err := sql.Open("pgx", dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if s, err := applyAll(db, byDS["ds_0"]); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	got := queryStrings(t, db, `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = 't_order_0' ORDER BY 1`)
	want := []string{"idx_user_t_order_0", "pk_order_t_order_0"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("indexes of t_order_0: %q, want %q (as PostgreSQL names the template's unquoted names)\n%s",
			got, want, strings.Join(byDS["ds_0"][0].Statements, ";\n"))
	}
	if _, err := db.Exec(`DROP INDEX idx_user_t_order_0`); err != nil {
		t.Errorf("DROP INDEX idx_user_t_order_0: %v", err)
	}
}

// TestDDLChecksTheTemplateInTheDataSourcesDialectWhenNothingIsPrinted:
// when -datasource leaves nothing to print, the template is still checked,
// in the data sources' dialect, so a valid MySQL template (here with a #
// comment) prints nothing and exits 0.
func TestDDLChecksTheTemplateInTheDataSourcesDialectWhenNothingIsPrinted(t *testing.T) {
	rules := writeFile(t, "rules.yaml", `dataSources:
  ds_0:
    driver: mysql
    dsn: 'root@tcp(127.0.0.1:3306)/a'
  ds_1:
    driver: mysql
    dsn: 'root@tcp(127.0.0.1:3306)/b'
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_order_inline
  shardingAlgorithms:
    t_order_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_${order_id % 2}
- !BROADCAST
  tables:
  - t_address
`)
	tmpl := writeFile(t, "t_order.sql", "# orders\nCREATE TABLE t_order (order_id BIGINT PRIMARY KEY, note VARCHAR(9) DEFAULT \"x\");\n")
	// The same template is fine for ds_0.
	mustCLI(t, "ddl", "-rules", rules, "-table", "t_order", "-template", tmpl, "-datasource", "ds_0")
	code, out, errs := cli(t, "ddl", "-rules", rules, "-table", "t_order", "-template", tmpl, "-datasource", "ds_1")
	if code != 0 || out != "" {
		t.Errorf("ddl -datasource ds_1 (t_order has no table there): exit %d, stdout %q, stderr %q; want exit 0, no output", code, out, errs)
	}
}

// TestDDLForeignKeyToAShardedTableRunsOrIsRefused: a FOREIGN KEY from one
// sharded table to another (t_order_item -> t_order; "write a referenced
// table first", the help says) names the logic table t_order, which no
// data source has. ddl maps the reference to the bound physical table, so
// the DDL runs on PostgreSQL, or refuses the template (exit 1); it never
// exits 0 with DDL that fails.
func TestDDLForeignKeyToAShardedTableRunsOrIsRefused(t *testing.T) {
	dsns := []string{dbtest.Postgres(t, "ddl_names_fk_0"), dbtest.Postgres(t, "ddl_names_fk_1")}
	rules := writeFile(t, "rules.yaml", ddlRules("pgx", dsns[0], dsns[1]))
	tmpl := writeFile(t, "schema.sql", `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY);
CREATE TABLE t_order_item (item_id BIGINT PRIMARY KEY, order_id BIGINT REFERENCES t_order (order_id));
`)
	code, out, errs := cli(t, "ddl", "-o", "json", "-rules", rules, "-table", "t_order,t_order_item", "-template", tmpl)
	if code != 0 {
		if code != 1 {
			t.Errorf("exit %d, want 1: %s", code, errs)
		}
		return // refusing is fine
	}
	var entries []ddlEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mine []ddlEntry
	for _, e := range entries {
		if e.DataSource == "ds_0" {
			mine = append(mine, e)
		}
	}
	if s, err := applyAll(db, mine); err != nil {
		t.Errorf("ddl exits 0 but its DDL fails on PostgreSQL: %v\n%s", err, s)
	}
}

// richTemplate has the shapes a renaming could get wrong (foreign keys,
// CHECK, a generated column, partial and unique indexes, columns and
// strings named like the table), in the portable subset of the three
// dialects.
const richTemplate = `-- t_order in a comment; CREATE TABLE t_order_item (x INT);
CREATE TABLE t_order (
  order_id BIGINT NOT NULL,
  user_id  BIGINT NOT NULL,
  t_order  INT DEFAULT 7,            -- a column named like the table
  t_orders INT,
  status   VARCHAR(20) NOT NULL DEFAULT 't_order.status',
  address_id BIGINT REFERENCES t_address (address_id),
  parent_id BIGINT,
  doubled  BIGINT GENERATED ALWAYS AS (user_id * 2) STORED,
  CONSTRAINT pk_t_order PRIMARY KEY (order_id),
  CONSTRAINT uk_t_order_user UNIQUE (user_id, order_id),
  CONSTRAINT chk_status CHECK (t_order.status <> '' AND t_order.t_order >= 0),
  CONSTRAINT fk_parent FOREIGN KEY (parent_id) REFERENCES t_order (order_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS uidx_t_order_status ON t_order (status, order_id);
CREATE INDEX idx_open ON t_order (user_id) WHERE status <> 't_order';
CREATE TABLE t_order_item (
  item_id  BIGINT NOT NULL PRIMARY KEY,
  order_id BIGINT NOT NULL,
  t_order_id BIGINT,
  CONSTRAINT fk_t_order_item_addr FOREIGN KEY (item_id) REFERENCES t_address (address_id)
);
CREATE INDEX idx_t_order_item_order ON t_order_item (order_id);
CREATE INDEX idx_t_order ON t_order_item (t_order_id);
`

const addressTable = "CREATE TABLE t_address (address_id BIGINT NOT NULL PRIMARY KEY, city VARCHAR(64));\n"

// TestDDLOfARichTemplateRunsOnPostgreSQLAndSQLite: a rich template (FKs,
// CHECK, generated column, partial and unique indexes, IF NOT EXISTS,
// columns and strings named like the table, t_order vs t_order_item vs
// t_orders) runs on PostgreSQL and SQLite, and the names come out as
// documented.
func TestDDLOfARichTemplateRunsOnPostgreSQLAndSQLite(t *testing.T) {
	check := func(t *testing.T, driver string, dsns []string, tablesQ string) {
		rules := writeFile(t, "rules.yaml", ddlRules(driver, dsns[0], dsns[1]))
		tmpl := writeFile(t, "schema.sql", addressTable+richTemplate)
		byDS := ddlJSON(t, "-rules", rules, "-template", tmpl)
		for i, ds := range []string{"ds_0", "ds_1"} {
			db, err := sql.Open(driver, dsns[i])
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if s, err := applyAll(db, byDS[ds]); err != nil {
				t.Fatalf("%s %s: %v\n%s", driver, ds, err, s)
			}
			got := strings.Join(queryStrings(t, db, tablesQ), ",")
			if got != "t_address,t_order_0,t_order_1,t_order_item_0,t_order_item_1" {
				t.Errorf("%s %s: tables %s", driver, ds, got)
			}
		}
		all := ""
		for _, e := range byDS["ds_0"] {
			all += strings.Join(e.Statements, ";\n") + ";\n"
		}
		for _, want := range []string{
			`  t_order  INT DEFAULT 7,`,
			`  t_orders INT,`,
			`DEFAULT 't_order.status'`,
			`REFERENCES t_address (address_id)`,
			`CONSTRAINT "pk_t_order_1" PRIMARY KEY`,
			`CONSTRAINT "uk_t_order_1_user" UNIQUE`,
			`CONSTRAINT "chk_status_t_order_1" CHECK ("t_order_1".status <> '' AND "t_order_1".t_order >= 0)`,
			`REFERENCES "t_order_1" (order_id)`,
			`CREATE UNIQUE INDEX IF NOT EXISTS "uidx_t_order_1_status" ON "t_order_1" (status, order_id)`,
			`CREATE INDEX "idx_open_t_order_1" ON "t_order_1" (user_id) WHERE status <> 't_order'`,
			`CREATE INDEX "idx_t_order_item_1_order" ON "t_order_item_1" (order_id)`,
			`CREATE INDEX "idx_t_order_t_order_item_1" ON "t_order_item_1" (t_order_id)`,
			`CONSTRAINT "fk_t_order_item_1_addr" FOREIGN KEY`,
		} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: output lacks %q:\n%s", driver, want, all)
			}
		}
	}
	t.Run("postgres", func(t *testing.T) {
		check(t, "pgx", []string{dbtest.Postgres(t, "ddl_names_rich_0"), dbtest.Postgres(t, "ddl_names_rich_1")},
			`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)
	})
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		check(t, "sqlite", []string{filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")},
			`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1`)
	})
}

// TestDDLOfAMySQLTemplateRunsWithForeignKeyNamesUniquePerDatabase: the
// MySQL flavour (backquotes, inline INDEX/KEY, CONSTRAINT without a name,
// # comments, "strings", ENGINE/COMMENT options) runs on the MySQL/MariaDB
// server, with FK names unique per database.
func TestDDLOfAMySQLTemplateRunsWithForeignKeyNamesUniquePerDatabase(t *testing.T) {
	dsns := []string{dbtest.MySQL(t, "ddl_names_my_0"), dbtest.MySQL(t, "ddl_names_my_1")}
	rules := writeFile(t, "rules.yaml", ddlRules("mysql", dsns[0], dsns[1]))
	tmpl := writeFile(t, "schema.sql", addressTable+"# t_order; comment\n"+
		"CREATE TABLE `t_order` (\n"+
		"  order_id BIGINT NOT NULL,\n"+
		"  user_id BIGINT NOT NULL,\n"+
		"  status VARCHAR(20) NOT NULL DEFAULT \"t_order\",\n"+
		"  address_id BIGINT,\n"+
		"  parent_id BIGINT,\n"+
		"  doubled BIGINT AS (user_id * 2) STORED,\n"+
		"  PRIMARY KEY (order_id),\n"+
		"  INDEX idx_user (user_id),\n"+
		"  UNIQUE KEY uk_t_order_status (status, order_id),\n"+
		"  CONSTRAINT fk_addr FOREIGN KEY (address_id) REFERENCES t_address (address_id),\n"+
		"  CONSTRAINT fk_t_order_parent FOREIGN KEY (parent_id) REFERENCES `t_order` (order_id),\n"+
		"  CONSTRAINT chk_user CHECK (user_id >= 0),\n"+
		"  CONSTRAINT UNIQUE (user_id, order_id)\n"+
		") ENGINE=InnoDB COMMENT='t_order; it''s'",
	)
	byDS := ddlJSON(t, "-rules", rules, "-table", "t_address,t_order", "-template", tmpl)
	for i, ds := range []string{"ds_0", "ds_1"} {
		db, err := sql.Open("mysql", dsns[i])
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if s, err := applyAll(db, byDS[ds]); err != nil {
			t.Fatalf("%s: %v\n%s", ds, err, s)
		}
		got := queryStrings(t, db, `SELECT constraint_name FROM information_schema.table_constraints
			WHERE table_schema = DATABASE() AND constraint_type = 'FOREIGN KEY' ORDER BY 1`)
		want := "fk_addr_t_order_0,fk_addr_t_order_1,fk_t_order_0_parent,fk_t_order_1_parent"
		if strings.Join(got, ",") != want {
			t.Errorf("%s: foreign keys %q, want %s", ds, got, want)
		}
	}
}

// TestDDLMalformedTemplateIsAnErrorNeverAPanic: truncated or odd templates
// are errors (exit 1), never panics.
func TestDDLMalformedTemplateIsAnErrorNeverAPanic(t *testing.T) {
	rules := writeFile(t, "rules.yaml", ddlRules("sqlite", "file:a.db", "file:b.db"))
	for _, src := range []string{
		"CREATE", "CREATE TABLE", "CREATE TABLE t_order", "CREATE INDEX", "CREATE INDEX ON", "CREATE UNIQUE",
		"CREATE TABLE t_order (", "CREATE TABLE t_order ())", "CREATE INDEX i ON t_order (a)",
		";;;", "CREATE TABLE t_order (a INT); CREATE INDEX IF NOT EXISTS ON t_order (a)",
		"CREATE TABLE t_order (a INT CONSTRAINT)", "CREATE TABLE t_order (a INT REFERENCES)",
		"CREATE TABLE \"\" (a INT)", "CREATE TABLE t_order (a TEXT DEFAULT $$x)", "CREATE TABLE [t_order (a INT)",
	} {
		for _, d := range []string{"postgres", "mysql", "sqlite"} {
			file := writeFile(t, "odd.sql", src)
			code, _, errs := cli(t, "ddl", "-rules", rules, "-table", "t_order", "-template", file, "-dialect", d)
			if code != 1 && code != 0 {
				t.Errorf("%s %q: exit %d %s", d, src, code, errs)
			}
		}
	}
}

// TestDDLRenamesIndexNamesWhoseLowerCaseChangesLength: lower-casing can
// change a name's length in bytes (Ⱥ, U+023A, 2 bytes, lowers to ⱥ, 3
// bytes; İ, 2 bytes, to i, 1 byte), so an offset found in a lower-cased
// copy must not cut the original: Ⱥ_t_order and İ_t_order on t_order
// become Ⱥ_t_order_0 and İ_t_order_0, without a panic.
func TestDDLRenamesIndexNamesWhoseLowerCaseChangesLength(t *testing.T) {
	rules := writeFile(t, "rules.yaml", ddlRules("pgx", "postgres://a/b", "postgres://a/c"))
	for _, idx := range []string{"\u023A_t_order", "\u0130_t_order"} {
		tmpl := writeFile(t, "t_order.sql", "CREATE TABLE t_order (id BIGINT PRIMARY KEY);\nCREATE INDEX "+idx+" ON t_order (id);\n")
		// Through the binary: a panic in-process would end the test run.
		code, out, errs := runBin(t, "ddl", "-rules", rules, "-table", "t_order", "-template", tmpl, "-datasource", "ds_0")
		want := `CREATE INDEX "` + idx + `_0" ON "t_order_0" (id)`
		if code != 0 || strings.Contains(errs, "panic") || !strings.Contains(out, want) {
			t.Errorf("index %s: exit %d, want %s; stdout:\n%s\nstderr:\n%.300s", idx, code, want, out, errs)
		}
	}
}

// TestUniqueNameReplacesTheLogicNameOnlyAsAWholePart: the help promises
// the logic table's name in an index name is replaced, else the physical
// name appended. The logic name counts only as a whole part of the index
// name: t_orders_idx on t_order becomes t_orders_idx_t_order_0, not
// t_order_0s_idx.
func TestUniqueNameReplacesTheLogicNameOnlyAsAWholePart(t *testing.T) {
	for _, tc := range []struct{ name, logic, phys, want string }{
		{"t_orders_idx", "t_order", "t_order_0", "t_orders_idx_t_order_0"},
		{"idx_username", "user", "user_0", "idx_username_user_0"},
	} {
		if got := uniqueName(tc.name, tc.logic, tc.phys); got != tc.want {
			t.Errorf("uniqueName(%q, %q, %q) = %q, want %q", tc.name, tc.logic, tc.phys, got, tc.want)
		}
	}
}

// TestDDLJSONLogicTableIsTheRulesSpelling: logicTable is spelled as the
// rules spell it (t_order), whatever -table says (T_ORDER), so ddl's and
// targets' -o json outputs join on it.
func TestDDLJSONLogicTableIsTheRulesSpelling(t *testing.T) {
	rules := writeFile(t, "rules.yaml", ddlRules("sqlite", "a.db", "b.db"))
	tmpl := writeFile(t, "schema.sql", ddlTemplate)
	for ds, es := range ddlJSON(t, "-rules", rules, "-template", tmpl, "-table", "T_ORDER") {
		for _, e := range es {
			if e.LogicTable != "t_order" {
				t.Errorf("%s %s: logicTable %q, want the rules' t_order", ds, e.Table, e.LogicTable)
			}
		}
	}
}
