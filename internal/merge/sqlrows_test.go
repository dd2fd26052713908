package merge_test

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/merge"
)

// readAll reads a driver.Rows to the end.
func readAll(t *testing.T, r driver.Rows) [][]driver.Value {
	t.Helper()
	var out [][]driver.Value
	for {
		row := make([]driver.Value, len(r.Columns()))
		err := r.Next(row)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
}

// scanAny reads the same query through database/sql into *any.
func scanAny(t *testing.T, db *sql.DB, q string) [][]driver.Value {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]driver.Value
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]driver.Value, len(cols))
		for i, v := range vals {
			row[i] = v
		}
		out = append(out, row)
	}
	return out
}

// TestSQLRowsGivesDriverValuesAndColumnTypes: a *sql.Rows read through
// FromSQL (and through Buffer) yields the values database/sql gives a *any
// and the column types the driver reported, on SQLite and PostgreSQL.
func TestSQLRowsGivesDriverValuesAndColumnTypes(t *testing.T) {
	for _, c := range []struct{ name, driver, dsn string }{
		{"sqlite", "sqlite", filepath.Join(t.TempDir(), "a.db")},
		{"postgres", "pgx", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := c.dsn
			if dsn == "" {
				dsn = dbtest.Postgres(t, "gormread_sqlrows")
			}
			db, err := sql.Open(c.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, s := range []string{
				`CREATE TABLE t (id INTEGER, name TEXT, amount NUMERIC(10,2), raw BYTEA)`,
				`INSERT INTO t VALUES (1, 'a', 1.50, NULL), (2, NULL, NULL, NULL)`,
			} {
				if c.name == "sqlite" {
					s = strings.ReplaceAll(s, "BYTEA", "BLOB")
				}
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			const q = `SELECT id, name, amount, raw FROM t ORDER BY id`
			want := scanAny(t, db, q)
			for _, buffered := range []bool{false, true} {
				rows, err := db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				types, _ := rows.ColumnTypes()
				sr, err := merge.FromSQL(rows)
				if err != nil {
					t.Fatal(err)
				}
				var r driver.Rows = sr
				if buffered {
					if r, err = merge.Buffer(sr); err != nil {
						t.Fatal(err)
					}
				}
				got := readAll(t, r)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("buffered=%v: %#v, want %#v", buffered, got, want)
				}
				tn := r.(driver.RowsColumnTypeDatabaseTypeName)
				st := r.(driver.RowsColumnTypeScanType)
				for i, ct := range types {
					if tn.ColumnTypeDatabaseTypeName(i) != ct.DatabaseTypeName() {
						t.Errorf("column %d type %q, want %q", i, tn.ColumnTypeDatabaseTypeName(i), ct.DatabaseTypeName())
					}
					if ct.ScanType() != nil && st.ColumnTypeScanType(i) != ct.ScanType() {
						t.Errorf("column %d scan type %v, want %v", i, st.ColumnTypeScanType(i), ct.ScanType())
					}
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
