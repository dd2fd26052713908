package merge

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// Text, times and booleans merged from real per-range results equal the
// databases' own answers where the collation is one the engine implements:
// PostgreSQL "C" (and character(n)), MariaDB utf8mb4_bin (PAD SPACE) and
// utf8mb4_nopad_bin, SQLite BINARY and NOCASE.

var textValues = []any{"a", "A", "b", "b ", "b  ", "B", "a\t", "", "é", "É", "e\u0301", "z", "Z ", "ab", "a\x1f", "a\x1f ", "_", "[", nil}

func textRows() [][]any {
	rng := rand.New(rand.NewPCG(7, 11))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	rows := make([][]any, dialectRows)
	for id := range rows {
		var ts any = base.Add(time.Duration(rng.IntN(1000)) * time.Minute).Add(time.Duration(rng.IntN(3)) * 250 * time.Millisecond)
		if rng.IntN(8) == 0 {
			ts = nil
		}
		var flag any = rng.IntN(2) == 0
		if rng.IntN(8) == 0 {
			flag = nil
		}
		rows[id] = []any{id, id % 7, textValues[rng.IntN(len(textValues))], textValues[rng.IntN(len(textValues))], ts, flag}
	}
	return rows
}

type textCol struct {
	name string
	text Text
	pad  bool // ties of values written differently ('b', 'b '; 'a', 'A'): which one a group shows is the database's choice
}

func textDBs(t *testing.T) []struct {
	db   *dialectDB
	cols []textCol
} {
	rows := textRows()
	pg := dbtest.Postgres(t, "merge_text")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, g int NOT NULL, s text COLLATE "C", c char(4) COLLATE "C", ts timestamptz, flag boolean)`, rows, "$")
	my := dbtest.MySQL(t, "merge_text")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, g int NOT NULL, s varchar(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, c varchar(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin, ts datetime(3), flag boolean)`, rows, "?")
	lite := "file:" + filepath.Join(t.TempDir(), "text.db")
	fill(t, "sqlite", lite, `CREATE TABLE t (id integer PRIMARY KEY, g integer NOT NULL, s text, c text COLLATE NOCASE, ts datetime, flag boolean)`, rows, "?")
	return []struct {
		db   *dialectDB
		cols []textCol
	}{
		{&dialectDB{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
			[]textCol{{"s", TextBinary, false}, {"c", TextBinary, true}, {"ts", TextRefused, false}, {"flag", TextRefused, false}}},
		{&dialectDB{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
			[]textCol{{"s", TextPadSpace, true}, {"c", TextBinary, false}, {"ts", TextRefused, false}, {"flag", TextRefused, false}}},
		{&dialectDB{name: "mariadb-binary", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my, prepared: true},
			[]textCol{{"s", TextPadSpace, true}, {"c", TextBinary, false}, {"ts", TextRefused, false}}},
		{&dialectDB{name: "sqlite", dialect: SQLite, drv: driverOf(t, "sqlite", lite), dsn: lite},
			[]textCol{{"s", TextBinary, false}, {"c", TextNoCase, true}, {"flag", TextBinary, false}}},
	}
}

func noFloats(int) bool { return false }

func TestTextTimeAndBoolOrderEqualsTheDatabases(t *testing.T) {
	for _, tc := range textDBs(t) {
		d := tc.db
		for _, c := range tc.cols {
			for _, desc := range []bool{false, true} {
				dir, nullsFirst := "", d.dialect != PostgreSQL
				if desc {
					dir, nullsFirst = " DESC", !nullsFirst
				}
				order := fmt.Sprintf("ORDER BY %s%s, id", c.name, dir)
				want := readAll(t, d.query(t, d.conn(t, 0), fmt.Sprintf("SELECT id, %s FROM t %s LIMIT 300 OFFSET 3", c.name, order)))
				p := Plan{Dialect: d.dialect, Visible: 2,
					OrderBy: []Key{{Col: 1, Desc: desc, NullsFirst: nullsFirst, Text: c.text}, {Col: 0}}, Offset: 3, Limit: 300}
				got, _, err := d.mergeShards(t, fmt.Sprintf("SELECT id, %s FROM t WHERE id >= ? AND id < ? %s LIMIT 303", c.name, order), p)
				if err != nil {
					t.Fatalf("%s %s: %v", d.name, order, err)
				}
				sameResult(t, d.name+" "+order, got, want, noFloats)
			}
		}
	}
}

func TestTextGroupingEqualsTheDatabases(t *testing.T) {
	for _, tc := range textDBs(t) {
		d := tc.db
		for _, c := range tc.cols {
			if c.pad {
				continue // which of 'b' and 'b ' a group shows is the database's choice
			}
			minmax := fmt.Sprintf("MIN(%[1]s), MAX(%[1]s)", c.name)
			if c.name == "flag" && d.dialect == PostgreSQL {
				minmax = "bool_and(flag), bool_or(flag)"
			}
			order := " ORDER BY " + c.name
			if d.dialect == PostgreSQL {
				order += " NULLS FIRST"
			}
			if d.dialect == MySQL {
				order = "" // MariaDB returns groups in GROUP BY order
			}
			q := fmt.Sprintf("SELECT %[1]s, COUNT(*), COUNT(DISTINCT g), %[2]s FROM t GROUP BY %[1]s%[3]s", c.name, minmax, order)
			want := readAll(t, d.query(t, d.conn(t, 0), q))
			p := Plan{Dialect: d.dialect, Visible: 5, Grouped: true, GroupBy: []int{0}, GroupText: []Text{c.text},
				Aggs: []Agg{{Col: 1, Func: Count}, {Col: 2, Func: CountDistinct, Args: []int{5}},
					{Col: 3, Func: Min, Text: c.text}, {Col: 4, Func: Max, Text: c.text}}, Limit: -1}
			if order != "" {
				p.OrderBy = []Key{{Col: 0, NullsFirst: true, Text: c.text}}
			}
			if c.name == "flag" && d.dialect == PostgreSQL {
				p.Aggs[2].Func, p.Aggs[3].Func = Min, Max // bool_and, bool_or
			}
			sq := fmt.Sprintf("SELECT %s, COUNT(*), COUNT(DISTINCT g), %s, g FROM t WHERE id >= ? AND id < ? GROUP BY %[1]s, g", c.name, minmax)
			got, _, err := d.mergeShards(t, sq, p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, q, err)
			}
			sameResult(t, d.name+" "+q, got, want, noFloats)

			dq := fmt.Sprintf("SELECT DISTINCT %s FROM t ORDER BY 1", c.name)
			if d.dialect == PostgreSQL {
				dq += " NULLS FIRST"
			}
			want = readAll(t, d.query(t, d.conn(t, 0), dq))
			p = Plan{Dialect: d.dialect, Visible: 1, Distinct: true, DistinctText: []Text{c.text},
				OrderBy: []Key{{Col: 0, NullsFirst: true, Text: c.text}}, Limit: -1}
			got, _, err = d.mergeShards(t, fmt.Sprintf("SELECT DISTINCT %s FROM t WHERE id >= ? AND id < ? ORDER BY 1%s", c.name, map[bool]string{true: " NULLS FIRST"}[d.dialect == PostgreSQL]), p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, dq, err)
			}
			sameResult(t, d.name+" "+dq, got, want, noFloats)
		}
	}
}
