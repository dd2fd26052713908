package main

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// renderAll renders every statement of a MySQL template for the physical
// table <name>_1, one per line.
func renderAll(t *testing.T, src, dialect string) []string {
	t.Helper()
	tm, err := parseTemplate("x.sql", src, dialect)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tt := range tm.tables {
		for _, s := range tt.stmts {
			got, err := tm.render(s, tt.name+"_1", dialect, keepRef, map[string]bool{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
	}
	return out
}

// TestDDLTemplateKeepsMySQLExecutableComments: MySQL runs what /*! ... */
// holds, so a CREATE TABLE's trailing /*!50100 PARTITION BY ... */ is part
// of every physical table's DDL and names in it follow the table; a
// statement wholly inside executable comments (mysqldump's /*!40101 SET
// ... */) sets up a session and is not a table's.
func TestDDLTemplateKeepsMySQLExecutableComments(t *testing.T) {
	src := "/*!40101 SET @saved_cs_client = @@character_set_client */;\n" +
		"/*!40101 SET a = 1; SET b = 2 */;\n" +
		"CREATE TABLE t_order (id INT, CHECK (t_order.id > 0)) ENGINE=InnoDB /*!50100 PARTITION BY HASH (id) PARTITIONS 2 */;\n" +
		"CREATE INDEX idx_id ON t_order (id) /*!80000 INVISIBLE */"
	got := renderAll(t, src, dialectMySQL)
	want := []string{
		"CREATE TABLE `t_order_1` (id INT, CHECK (`t_order_1`.id > 0)) ENGINE=InnoDB /*!50100 PARTITION BY HASH (id) PARTITIONS 2 */",
		"CREATE INDEX `idx_id_t_order_1` ON `t_order_1` (id) /*!80000 INVISIBLE */",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Not in PostgreSQL or SQLite: there /*! ... */ is a comment.
	got = renderAll(t, "CREATE TABLE t_order (id INT) /*!50100 x */", dialectPostgres)
	if want := `CREATE TABLE "t_order_1" (id INT)`; len(got) != 1 || got[0] != want {
		t.Errorf("postgres: %q, want %q", got, want)
	}

	for _, tc := range []struct{ src, want string }{
		{"CREATE TABLE t_order (id INT)\n/*!50100 PARTITION BY HASH (id)", "x.sql:2: unterminated /*! comment"},
		{"CREATE TABLE t_order (id INT) /*!50100 COMMENT 'x */", "x.sql:1: unterminated '"},
	} {
		if _, err := parseTemplate("x.sql", tc.src, dialectMySQL); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.src, err, tc.want)
		}
	}
}

// TestDDLTemplatePartitionedTableOnMariaDB: the executable comment kept in
// a physical table's DDL is run by the server: the table is partitioned.
func TestDDLTemplatePartitionedTableOnMariaDB(t *testing.T) {
	db, err := sql.Open("mysql", dbtest.MySQL(t, "cli_ddl_partitions"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := renderAll(t, "CREATE TABLE t_order (id INT NOT NULL) ENGINE=InnoDB /*!50100 PARTITION BY HASH (id) PARTITIONS 2 */", dialectMySQL)
	if _, err := db.Exec(got[0]); err != nil {
		t.Fatalf("%s: %v", got[0], err)
	}
	var n int
	err = db.QueryRow(`SELECT COUNT(*) FROM information_schema.partitions
		WHERE table_schema = DATABASE() AND table_name = 't_order_1' AND partition_name IS NOT NULL`).Scan(&n)
	if err != nil || n != 2 {
		t.Errorf("partitions of t_order_1: %d, %v; want 2", n, err)
	}
}

// TestDDLTemplateMySQLDoubleDashNeedsASpace: MySQL reads -- as a comment
// only before a space or a control character; 1--1 is 1 - -1.
func TestDDLTemplateMySQLDoubleDashNeedsASpace(t *testing.T) {
	src := "CREATE TABLE t_order (id INT DEFAULT 1--1) -- t_order\n;\n-- x"
	got := renderAll(t, src, dialectMySQL)
	if want := "CREATE TABLE `t_order_1` (id INT DEFAULT 1--1)"; len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// In PostgreSQL and SQLite -- always starts a comment.
	if _, err := parseTemplate("x.sql", src, dialectSQLite); err == nil || !strings.Contains(err.Error(), "unbalanced (") {
		t.Errorf("sqlite: %v, want unbalanced (", err)
	}
}

// TestDDLTemplateQuotedNamesPerDialect: `x` is a name in every dialect (the
// template may be written once for several), [x] in SQLite, U&"x" in
// PostgreSQL keeps its U&; an empty quoted name is refused.
func TestDDLTemplateQuotedNamesPerDialect(t *testing.T) {
	for _, tc := range []struct{ dialect, src, want string }{
		{dialectPostgres, "CREATE TABLE `t_order` (`a``b` INT)", `CREATE TABLE "t_order_1" ("a` + "`" + `b" INT)`},
		{dialectSQLite, "CREATE TABLE [t_order] ([a b] INT)", `CREATE TABLE "t_order_1" ("a b" INT)`},
		{dialectPostgres, `CREATE TABLE t_order (U&"d\0061" INT)`, `CREATE TABLE "t_order_1" (U&"d\0061" INT)`},
		{dialectMySQL, `CREATE TABLE t_order (a TEXT DEFAULT "x""y\"")`, "CREATE TABLE `t_order_1` (a TEXT DEFAULT \"x\"\"y\\\"\")"},
	} {
		if got := renderAll(t, tc.src, tc.dialect); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s %q:\ngot  %q\nwant %q", tc.dialect, tc.src, got, tc.want)
		}
	}
	for _, d := range []string{dialectPostgres, dialectMySQL, dialectSQLite} {
		if _, err := parseTemplate("x.sql", "CREATE TABLE t_order (`` INT)", d); err == nil || !strings.Contains(err.Error(), "x.sql:1: empty quoted identifier") {
			t.Errorf("%s: %v, want empty quoted identifier", d, err)
		}
	}
}

// BenchmarkDDLTemplateParse: reading the ddl tests' five-statement
// template, the work the ddl command does once per dialect.
func BenchmarkDDLTemplateParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range []string{dialectPostgres, dialectMySQL, dialectSQLite} {
			if _, err := parseTemplate("schema.sql", ddlTemplate, d); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDDLTemplateLex: splitting the same template into statements of
// tokens, in each dialect.
func BenchmarkDDLTemplateLex(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range []string{dialectPostgres, dialectMySQL, dialectSQLite} {
			if _, err := lexSQL("schema.sql", ddlTemplate, d); err != nil {
				b.Fatal(err)
			}
		}
	}
}
