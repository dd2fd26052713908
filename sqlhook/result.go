package sqlhook

import (
	"database/sql/driver"
	"fmt"
)

// sumResult is the result of an Exec that ran as several units: one
// statement per shard table.
type sumResult struct{ results []driver.Result }

// LastInsertId fails: each unit inserted on its own, so there is no one
// last id. Generate keys in the application (package keygen) instead.
func (r sumResult) LastInsertId() (int64, error) {
	return 0, fmt.Errorf("sqlhook: LastInsertId is not available: the statement ran as %d statements on different shards", len(r.results))
}

// RowsAffected is the sum over the units.
func (r sumResult) RowsAffected() (int64, error) {
	var n int64
	for i, res := range r.results {
		k, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("sqlhook: rows affected by unit %d: %w", i+1, err)
		}
		n += k
	}
	return n, nil
}
