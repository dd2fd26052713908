package sqlhook_test

import (
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// An ORDER BY name is the output column only where the dialect reads it
// so: PostgreSQL folds unquoted names and keeps quoted ones ("AMOUNT" is
// not amount), and reads x COLLATE c as an expression over the table's
// columns. Taking the other column merged each target's first rows by
// values they were not sorted by (LIMIT 1 gave another target's row).
func TestOrderByNamesResolveAsTheDialectReadsThem(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			e.agree(t, `SELECT -amount AS amount, id FROM t_sale ORDER BY amount, id LIMIT 10`, true)
			e.agree(t, `SELECT -amount AS amount, id FROM t_sale ORDER BY (amount), id LIMIT 10`, true)
			e.agree(t, `SELECT -amount AS amount, id FROM t_sale ORDER BY t_sale.amount, id LIMIT 10`, true)
			e.agree(t, `SELECT amount AS id, id AS amount FROM t_sale ORDER BY id, amount LIMIT 10`, true)
			e.agree(t, `SELECT -amount AS "AMOUNT", id FROM t_sale WHERE amount IS NOT NULL ORDER BY AMOUNT, id LIMIT 1`, true)
			e.agree(t, `SELECT -amount AS "Amount", id FROM t_sale WHERE amount IS NOT NULL ORDER BY amount DESC, id LIMIT 1`, true)
			e.agree(t, `SELECT -amount AS Amount, id FROM t_sale WHERE amount IS NOT NULL ORDER BY AMOUNT, id LIMIT 1`, true)
			e.agree(t, `SELECT id AS "ID" FROM t_sale ORDER BY ID DESC LIMIT 2`, true)
			switch b.name {
			case "postgres":
				e.agree(t, `SELECT -amount AS "AMOUNT", id FROM t_sale ORDER BY "AMOUNT", id LIMIT 3`, true)
				e.agree(t, `SELECT upper(note) AS note, id FROM t_sale ORDER BY note COLLATE "C", id LIMIT 1`, true)
				e.agree(t, `SELECT upper(note) AS note, id FROM t_sale ORDER BY note COLLATE "C" DESC, id LIMIT 4`, true)
			case "mariadb":
				e.agree(t, `SELECT upper(note) AS note, id FROM t_sale ORDER BY note COLLATE utf8mb4_bin, id LIMIT 4`, true)
				e.agree(t, `SELECT upper(note) AS note, id FROM t_sale ORDER BY note COLLATE utf8mb4_bin DESC, id LIMIT 1`, true)
			case "sqlite":
				e.agree(t, `SELECT upper(note) AS note, id FROM t_sale ORDER BY note COLLATE BINARY, id LIMIT 4`, true)
			}
		})
	}
}

// Hidden columns are named apart from every name the statement writes: a
// query's own alias shardkey_hidden_0 made each target's ORDER BY
// ambiguous (PostgreSQL, MariaDB failed the query).
func TestHiddenColumnNamesNeverCollideWithTheQuerysNames(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			e.agree(t, `SELECT id, amount AS shardkey_hidden_0 FROM t_sale ORDER BY shardkey_hidden_0, price, id LIMIT 5`, true)
			e.agree(t, `SELECT id AS shardkey_hidden_0, amount FROM t_sale ORDER BY user_id, id LIMIT 5`, true)
			e.agree(t, `SELECT user_id AS shardkey_hidden_1, AVG(amount) AS shardkey_shardkey_hidden_0 FROM t_sale GROUP BY user_id ORDER BY shardkey_hidden_1`, true)
		})
	}
}

// SQLite names an unaliased expression by its text, so ORDER BY id is the
// table's id even when the select list has CAST(id AS TEXT), which
// PostgreSQL would name id. Merged by the text, ids 9 and 10 (one per
// target) came back as "10" first.
func TestSQLiteOrderByNameIsNotAnExpressionsColumn(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		if b.name != "sqlite" {
			continue
		}
		e := openSel(t, b, sqlhook.WithBinaryCollation())
		e.agree(t, `SELECT CAST(id AS TEXT) FROM t_sale WHERE id IN (9, 10) ORDER BY id LIMIT 1`, true)
		e.agree(t, `SELECT CAST(score AS INTEGER), id FROM t_sale ORDER BY score, id LIMIT 8`, true)
		e.agree(t, `SELECT t_sale.id, note FROM t_sale ORDER BY id DESC LIMIT 3`, true)
	}
}
