package sqlhook_test

import "testing"

// A grouped select item or ORDER BY term that reads a column neither
// grouped nor aggregated has no single value per group: MariaDB returns any
// row's (and NULL from a target without rows, where one table has a row),
// SQLite the row of the MIN or MAX. The first target's value is neither,
// so over several targets they are refused; PostgreSQL refuses them itself.
func TestUngroupedColumnsOfGroupedReadsAreRefused(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			// Still merged: columns the groups determine, constants.
			e.agree(t, `SELECT user_id, user_id + 1, COUNT(*) FROM t_sale GROUP BY user_id ORDER BY 2`, true)
			e.agree(t, `SELECT user_id % 3, COUNT(*) FROM t_sale GROUP BY user_id % 3 ORDER BY 1`, true)
			e.agree(t, `SELECT t_sale.user_id, COUNT(*) FROM t_sale GROUP BY user_id ORDER BY 1`, true)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY t_sale.user_id ORDER BY user_id + 1`, true)
			e.agree(t, `SELECT 'x', COUNT(*) FROM t_sale WHERE id > 1000`, true)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY 1 ORDER BY user_id + 1 DESC`, true)
			e.agree(t, `SELECT user_id, user_id * 2, COUNT(*) FROM t_sale GROUP BY 1 ORDER BY 1`, true)
			if b.name == "postgres" {
				return
			}
			// SQLite: note of the row with the largest id ("Ab"); the merge
			// took the first target's ("x"). MariaDB: user_id of the one row
			// with id 48 (7); the merge took NULL, from the target without it.
			e.refused(t, `SELECT note, MAX(id) FROM t_sale`)
			e.refused(t, `SELECT note, MIN(id), MAX(id) FROM t_sale`)
			e.refused(t, `SELECT user_id, COUNT(*) FROM t_sale WHERE id = 48`)
			e.refused(t, `SELECT user_id, note, MAX(id) FROM t_sale GROUP BY user_id ORDER BY user_id`)
			e.refused(t, `SELECT id, MAX(amount) FROM t_sale GROUP BY user_id ORDER BY 1`)
			e.refused(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id ORDER BY note`)
		})
	}
}

// SQLite fails an aggregate in HAVING or ORDER BY when neither GROUP BY nor
// the select list makes the query an aggregate one; each target, given the
// hidden aggregates in its select list, would not.
func TestSQLiteAggregatesOutsideTheSelectListOfAPlainQueryAreRefused(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			if b.name != "sqlite" {
				e.agree(t, `SELECT 1 FROM t_sale HAVING MIN(id) > 0`, true)
				e.agree(t, `SELECT 1 FROM t_sale ORDER BY COUNT(*)`, true)
				return
			}
			e.refused(t, `SELECT 1 FROM t_sale HAVING MIN(id) > 0`)
			e.refused(t, `SELECT 1 FROM t_sale ORDER BY COUNT(*)`)
			e.agree(t, `SELECT COUNT(*) FROM t_sale HAVING MIN(id) > 0`, true)
			e.agree(t, `SELECT COUNT(*) FROM t_sale HAVING COUNT(*) > 100`, true)
		})
	}
}
