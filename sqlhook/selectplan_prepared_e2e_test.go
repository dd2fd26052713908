package sqlhook_test

import (
	"slices"
	"strings"
	"testing"
)

// One prepared statement whose arguments take it to one target, then to
// several, then back: each execution is planned for its own targets (one
// target gets the statement as written, several the merge), and each
// gives one table's answer.
func TestPreparedSelectAlternatingOneAndSeveralTargets(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			q := e.q(`SELECT user_id, COUNT(*), AVG(amount), MAX(price) FROM t_sale WHERE user_id IN (?, ?) AND id IN (?, ?, ?)
				GROUP BY user_id HAVING COUNT(*) >= ? ORDER BY AVG(amount) DESC, user_id LIMIT ?`)
			st, err := e.db.Prepare(q)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ost, err := e.oracle.Prepare(strings.ReplaceAll(q, "t_sale", "o_sale"))
			if err != nil {
				t.Fatal(err)
			}
			defer ost.Close()
			argsets := [][]any{
				{1, 1, 7, 7, 7, 1, 5},      // user 1, id 7: one target
				{1, 3, 2, 7, 9, 1, 5},      // two data sources, two tables
				{3, 3, 2, 2, 2, 1, 1},      // one target again
				{1, 2, 1, 7, 14, 0, 1},     // several, LIMIT 1
				{5, 5, 11, 4, 4, 2, 3},     // HAVING filters out
				{7, 7, 13, 20, 27, 1, nil}, // LIMIT NULL (PostgreSQL: all; MariaDB: none)
			}
			for _, args := range argsets {
				if b.name == "sqlite" && args[6] == nil {
					continue
				}
				rows, err := st.Query(args...)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				got, err := readResult(rows)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				orows, err := ost.Query(args...)
				if err != nil {
					t.Fatalf("oracle %v: %v", args, err)
				}
				want, err := readResult(orows)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.cols, want.cols) || !slices.Equal(got.rows, want.rows) {
					t.Errorf("%s %v:\n got %q %q\nwant %q %q", b.name, args, got.cols, got.rows, want.cols, want.rows)
				}
			}
		})
	}
}
