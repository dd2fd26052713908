package sqlhook

import (
	"errors"
	"testing"
)

// A text the grammar cannot read but the server may (SQLite's
// AUTOINCREMENT, MariaDB's RETURNING) goes through unchanged when the
// logic table's name occurs in it only inside longer words (accts for a
// logic table acct), as it would through the bare driver; where the name
// occurs as a word, or could be hidden (escapes, executable comments,
// PREPARE), such a text is still refused.
func TestUnreadableTextNamingNoTableAsAWordPassesThrough(t *testing.T) {
	rules := `
rules:
- !SHARDING
  tables:
    acct:
      actualDataNodes: ds_${0..1}.acct_${0..1}
      databaseStrategy: {standard: {shardingColumn: uid, shardingAlgorithmName: mod2}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: mod2}}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`
	cases := []struct {
		d        Dialect
		sql      string
		refused  bool
		sentinel error
	}{
		{SQLite, "CREATE TABLE accts (id INTEGER PRIMARY KEY AUTOINCREMENT, acct_id INTEGER)", false, nil},
		{SQLite, "INSERT OR REPLACE INTO accts (id) VALUES (1)", false, nil},
		{MySQL, "INSERT INTO accts (name) VALUES (?) RETURNING id", false, nil},
		{SQLite, "CREATE TABLE acct_x (id INTEGER PRIMARY KEY AUTOINCREMENT)", false, nil},
		// The name as a word: still read, and refused when unreadable.
		{SQLite, "INSERT OR REPLACE INTO acct (id, uid) VALUES (1, 1)", true, ErrParse},
		{SQLite, "INSERT OR REPLACE INTO accts (id) SELECT id FROM \"acct\"", true, ErrParse},
		{MySQL, "INSERT INTO acct (id, uid) VALUES (?, ?) RETURNING id", true, ErrParse},
		{MySQL, "DELETE FROM accts WHERE id IN (SELECT id FROM acct_1) RETURNING id", true, ErrParse},
		// An executable comment may glue a name to its version.
		{MySQL, "DELETE FROM /*!50000acct*/ WHERE id = 1 RETURNING id", true, nil},
	}
	for _, tc := range cases {
		h := hookFromRules(t, rules, tc.d)
		rt, err := h.route(tc.sql, args(int64(1), int64(1)))
		switch {
		case tc.refused && err == nil:
			t.Errorf("%v %q: routed as %s, want a refusal", tc.d, tc.sql, show(rt))
		case tc.refused && tc.sentinel != nil && !errors.Is(err, tc.sentinel):
			t.Errorf("%v %q: %v, want %v", tc.d, tc.sql, err, tc.sentinel)
		case !tc.refused && err != nil:
			t.Errorf("%v %q: %v, want it passed through", tc.d, tc.sql, err)
		case !tc.refused && (!rt.passthrough || rt.units[0].sql != tc.sql):
			t.Errorf("%v %q: routed as %s, want it unchanged", tc.d, tc.sql, show(rt))
		}
	}
}
