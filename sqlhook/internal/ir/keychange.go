package ir

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
)

// KeySet is an UPDATE's assignment of a new value to a sharding column of
// the routed table (an assignment of the column to itself is not one).
type KeySet struct {
	Table  int    // index into plan.tables
	Column string // lower case
	Val    ValRef
}

// KeyChangeError is the refusal of a sharding key change.
func KeyChangeError(table, column, value, why string) error {
	return fmt.Errorf("%w: %w (%s; to move a row, delete it and insert it again)", ErrUnsupported,
		&shardconf.RouteError{Table: table, Column: column, Value: value, Err: shardconf.ErrShardingKeyChange}, why)
}

// UpsertKeyChange decides an upsert's update part (PostgreSQL's and
// SQLite's ON CONFLICT DO UPDATE, MySQL's ON DUPLICATE KEY UPDATE) that
// assigns sharding columns of table. fromInserted are the sharding columns
// set to the inserted row's value (excluded.c, VALUES(c)); conflictCols
// are the columns a conflicting row shares with the inserted row (the
// conflict target's columns; nil when any unique key may conflict). The
// row the update changes is in the table the inserted row routed to, and
// keeps routing there when each sharding column ends up equal to the
// inserted row's: set from it, or equal to it through the conflict.
func (h *Schema) UpsertKeyChange(table string, fromInserted, conflictCols []string) error {
	if len(fromInserted) == 0 {
		return nil
	}
	for _, c := range h.Router.ShardingColumns(table) {
		if containsFold(fromInserted, c) || containsFold(conflictCols, c) {
			continue
		}
		return KeyChangeError(table, fromInserted[0], "",
			fmt.Sprintf("the upsert sets it from the inserted row, but sharding column %s is neither set so nor a conflict column, so the updated row may route elsewhere", c))
	}
	return nil
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}
