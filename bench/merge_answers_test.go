package bench

import (
	"errors"
	"testing"
)

// TestMergeBenchmarksGiveOneTableAnswers runs every query of the merge
// benchmarks once: through sqlhook each gives the one-table answer or is
// refused (logged), never another answer.
func TestMergeBenchmarksGiveOneTableAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the merge data sets (about a minute the first time)")
	}
	for _, c := range []struct {
		set     mergeSet
		ordered bool
		q       string
		args    []any
	}{
		{scatterSet, true, `SELECT id, k, v FROM t_big ORDER BY k LIMIT 10`, nil},
		{scatterSet, true, `SELECT id, u, v FROM t_big ORDER BY u LIMIT 10`, nil},
		{groupSet, false, `SELECT g, COUNT(*), SUM(a), MAX(a) FROM t_grp GROUP BY g`, nil},
		{groupSet, true, `SELECT g, COUNT(*), SUM(a), MAX(a) FROM t_grp GROUP BY g ORDER BY g`, nil},
		{groupSet, false, `SELECT id, g, a FROM t_grp WHERE id < ?`, []any{overheadRows}},
		{groupSet, true, `SELECT id, g, a FROM t_grp WHERE id < ? ORDER BY id`, []any{overheadRows}},
	} {
		err := sameAnswer(c.set.sharded(t), c.set.one(t, -1), c.ordered, c.q, c.args...)
		switch {
		case errors.Is(err, errRefused):
			t.Logf("%s: %v", c.q, err)
		case err != nil:
			t.Errorf("%s: %v", c.q, err)
		}
	}
}
