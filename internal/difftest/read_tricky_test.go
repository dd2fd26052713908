package difftest

import (
	"fmt"
	"math/rand/v2"
)

// trickyRead is a read whose answer needs rows of several shards at once
// in a way a per-shard query cannot give: window functions, subqueries on
// the logic table, derived tables, CTEs, UNION, self-joins, DISTINCT ON,
// aggregate FILTER, WITH ROLLUP, GROUP BY a position or an alias. Merged
// naively each gives a plausible wrong answer; it must be merged right or
// refused.
type trickyRead struct {
	text   string
	strict bool // its ORDER BY is total: the rows compare in order
}

// trickyFamily is the summary's name of these reads.
const trickyFamily = "sql.tricky"

// trickyReads are the forms for a database; %d is a small number.
func trickyReads(db string) []trickyRead {
	forms := []trickyRead{
		{text: "SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM t_read WHERE qty > %d"},
		{text: "SELECT user_id, COUNT(*) OVER (PARTITION BY user_id) AS n FROM t_read WHERE qty = %d"},
		{text: "SELECT id FROM t_read WHERE qty > (SELECT AVG(qty) FROM t_read) + %d"},
		{text: "SELECT id FROM t_read WHERE user_id IN (SELECT user_id FROM t_read WHERE qty = %d)"},
		{text: "SELECT COUNT(*) FROM (SELECT DISTINCT qty FROM t_read WHERE k <> %d) s"},
		{text: "WITH s AS (SELECT qty FROM t_read WHERE qty > %d) SELECT COUNT(*), COUNT(DISTINCT qty) FROM s"},
		{text: "SELECT qty FROM t_read WHERE k = 0 UNION SELECT qty FROM t_read WHERE k = 1 AND qty > %d"},
		{text: "SELECT user_id FROM t_read WHERE qty = %d UNION ALL SELECT user_id FROM t_read WHERE qty IS NULL"},
		{text: "SELECT a.id FROM t_read a WHERE EXISTS (SELECT 1 FROM t_read b WHERE b.user_id = a.user_id AND b.id <> a.id AND b.qty = a.qty + %d)"},
		{text: "SELECT a.id, b.id FROM t_read a JOIN t_read b ON a.user_id = b.user_id AND a.qty = b.qty AND a.id < b.id WHERE a.qty = %d"},
		{text: "SELECT COUNT(*) FROM t_read WHERE id IN (SELECT MAX(id) FROM t_read WHERE qty <> %d GROUP BY user_id)"},
		{text: "SELECT user_id, COUNT(*) FROM t_read GROUP BY user_id HAVING COUNT(*) > (SELECT COUNT(*) FROM t_read) / 10 + %d"},
		{text: "SELECT k, SUM(qty) FROM t_read WHERE qty > %d GROUP BY 1"},
		{text: "SELECT k AS kk, COUNT(*) FROM t_read WHERE qty > %d GROUP BY kk"},
		{text: "SELECT 1 AS one, k, COUNT(*) FROM t_read WHERE qty > %d GROUP BY k"},
		{text: "SELECT id, (SELECT MAX(qty) FROM t_read) - qty AS gap FROM t_read WHERE qty = %d"},
	}
	switch db {
	case "postgres":
		forms = append(forms,
			trickyRead{text: "SELECT DISTINCT ON (user_id) user_id, id FROM t_read WHERE qty > %d ORDER BY user_id, id", strict: true},
			trickyRead{text: "SELECT user_id, COUNT(*) FILTER (WHERE qty > %d) AS n FROM t_read GROUP BY user_id"},
			trickyRead{text: "SELECT id FROM t_read ORDER BY id OFFSET %d ROWS FETCH FIRST 7 ROWS ONLY", strict: true},
			trickyRead{text: "SELECT id FROM t_read ORDER BY id LIMIT ALL OFFSET %d", strict: true},
			trickyRead{text: "SELECT k, COUNT(*) FROM t_read WHERE qty > %d GROUP BY ROLLUP (k)"})
	case "mariadb":
		forms = append(forms,
			trickyRead{text: "SELECT k, COUNT(*) FROM t_read WHERE qty > %d GROUP BY k WITH ROLLUP"},
			trickyRead{text: "SELECT SQL_CALC_FOUND_ROWS id FROM t_read ORDER BY id LIMIT %d", strict: true},
			trickyRead{text: "SELECT GROUP_CONCAT(id ORDER BY id) FROM t_read WHERE qty = %d"},
			trickyRead{text: "SELECT k, COUNT(*) FROM t_read WHERE qty > %d GROUP BY k ORDER BY NULL"},
			trickyRead{text: "SELECT k, COUNT(*) FROM t_read WHERE qty > %d GROUP BY k DESC", strict: true})
	case "sqlite":
		forms = append(forms,
			trickyRead{text: "SELECT group_concat(id) FROM (SELECT id FROM t_read WHERE qty = %d ORDER BY id)"},
			trickyRead{text: "SELECT id FROM t_read ORDER BY id LIMIT -1 OFFSET %d", strict: true})
	}
	return forms
}

// genTricky draws one of the forms as a case.
func (g *sqlReadGen) genTricky(rng *rand.Rand) readCase {
	f := pick(rng, trickyReads(g.w.b.name))
	text := fmt.Sprintf(f.text, rng.IntN(8))
	rc := readCase{family: trickyFamily, desc: text, shard: queryOn(g.w.binHook, text, nil),
		oracle: queryOn(g.w.oracle, text, nil)}
	if f.strict {
		// every column is a key: the rows must come in the oracle's order
		rc.ordered = true
		rc.win = window{0, -1}
		rc.full = func() (*readResult, error) {
			res, err := queryOn(g.w.oracle, text, nil)()
			if err != nil {
				return nil, err
			}
			for i, r := range res.rows {
				res.rows[i] = append(r, r...)
			}
			return res, nil
		}
	}
	return rc
}
