package sqlhook_test

import (
	"errors"
	"math"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// LIMIT and OFFSET values bound to placeholders are read as each database
// reads them: NULL is no limit on PostgreSQL, 0 on MariaDB (the merge
// returned every row) and an error on SQLite; an integral float is its
// integer; MariaDB's "all rows" (the largest uint64) is no limit.
func TestBoundLimitsAreReadAsTheDatabaseReadsThem(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			const q = `SELECT id FROM t_sale ORDER BY price, id LIMIT ? OFFSET ?`
			e.agree(t, q, true, "3", "2")
			e.agree(t, q, true, int32(3), uint8(2))
			e.agree(t, q, true, 3.0, 2)
			if b.name == "sqlite" {
				for _, args := range [][]any{{nil, 2}, {3, nil}} {
					if _, err := e.db.Query(q, args...); err == nil || errors.Is(err, sqlhook.ErrUnsupported) {
						t.Errorf("SQLite LIMIT/OFFSET NULL %v: got %v, want SQLite's error", args, err)
					}
				}
				e.agree(t, q, true, -1, 40)
				return
			}
			e.agree(t, q, true, nil, 2)
			e.agree(t, q, true, 3, nil)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id ORDER BY 1 LIMIT ? OFFSET ?`, true, nil, 1)
			if b.name == "mariadb" {
				e.agree(t, q, true, uint64(math.MaxUint64), 40)
				e.agree(t, `SELECT id FROM t_sale ORDER BY price, id LIMIT 40, 18446744073709551615`, true)
				e.agree(t, `SELECT id FROM t_sale ORDER BY price, id LIMIT ?, ?`, true, 2, 3)
			}
		})
	}
}
