package workerlease

import (
	"strconv"
	"strings"
)

// queries holds the statements of one dialect and table. They are written
// with ? placeholders; PostgreSQL's are renumbered to $n.
type queries struct {
	create, probe string
	// claim
	candidate, gap, claim, insert string
	// lease upkeep
	renew, release, owned string
	// operators
	list, revoke, exists string
}

func buildQueries(d Dialect, table string) queries {
	var now, create, candidate, insert string
	switch d {
	case PostgreSQL:
		// clock_timestamp is the real time, not the transaction's start.
		now = `floor(extract(epoch from clock_timestamp()) * 1000)::bigint`
		create = `CREATE TABLE IF NOT EXISTS ` + table + ` (
	namespace  VARCHAR(64)  NOT NULL,
	worker_id  BIGINT       NOT NULL,
	owner      VARCHAR(255),
	expires_at BIGINT       NOT NULL DEFAULT 0,
	last_ms    BIGINT       NOT NULL DEFAULT 0,
	PRIMARY KEY (namespace, worker_id)
)`
		insert = `INSERT INTO ` + table + ` (namespace, worker_id, owner, expires_at, last_ms)
VALUES (?, ?, ?, ` + now + ` + ?, ?) ON CONFLICT DO NOTHING`
	default:
		// UTC_TIMESTAMP and a fixed epoch: no time-zone conversion, so no
		// daylight-saving ambiguity.
		now = `(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)`
		create = `CREATE TABLE IF NOT EXISTS ` + table + ` (
	namespace  VARCHAR(64)  NOT NULL,
	worker_id  BIGINT       NOT NULL,
	owner      VARCHAR(255) NULL,
	expires_at BIGINT       NOT NULL DEFAULT 0,
	last_ms    BIGINT       NOT NULL DEFAULT 0,
	PRIMARY KEY (namespace, worker_id)
) ENGINE=InnoDB`
		// The values are validated, so IGNORE only skips a duplicate key.
		insert = `INSERT IGNORE INTO ` + table + ` (namespace, worker_id, owner, expires_at, last_ms)
VALUES (?, ?, ?, ` + now + ` + ?, ?)`
	}
	candidate = `SELECT worker_id, expires_at, last_ms FROM ` + table + `
WHERE namespace = ? AND worker_id <= ? AND expires_at + ? < ` + now + `
ORDER BY worker_id LIMIT 1 FOR UPDATE SKIP LOCKED`
	q := queries{
		create: create,
		probe:  `SELECT namespace, worker_id, owner, expires_at, last_ms FROM ` + table + ` WHERE 1 = 0`,
		// The lowest worker id without a row: 0 or the successor of a row
		// whose successor has none.
		gap: `SELECT MIN(c.w) FROM (
	SELECT 0 AS w
	UNION ALL
	SELECT worker_id + 1 FROM ` + table + ` WHERE namespace = ? AND worker_id < ?
) c WHERE NOT EXISTS (SELECT 1 FROM ` + table + ` x WHERE x.namespace = ? AND x.worker_id = c.w)`,
		candidate: candidate,
		// last_ms comes first: MySQL evaluates SET left to right with the
		// new values. Claims and renewals raise last_ms to the holder's
		// validity end on its own clock: a holder whose clock runs ahead
		// of the database's issues keys timed after expires_at.
		claim: `UPDATE ` + table + `
SET last_ms = GREATEST(last_ms, expires_at, ?), owner = ?, expires_at = ` + now + ` + ?
WHERE namespace = ? AND worker_id = ? AND expires_at + ? < ` + now,
		insert: insert,
		renew: `UPDATE ` + table + `
SET expires_at = ` + now + ` + ?, last_ms = GREATEST(last_ms, ?)
WHERE namespace = ? AND worker_id = ? AND owner = ?`,
		// release sets last_ms to the holder's last issued time or the id's
		// last use before its claim, whichever is later: the validity end
		// its claim and renewals wrote there was not reached.
		release: `UPDATE ` + table + `
SET last_ms = ?, owner = NULL, expires_at = 0
WHERE namespace = ? AND worker_id = ? AND owner = ?`,
		owned: `SELECT COUNT(*) FROM ` + table + ` WHERE namespace = ? AND worker_id = ? AND owner = ?`,
		list: `SELECT worker_id, owner, expires_at, last_ms,
	CASE WHEN owner IS NOT NULL AND owner <> '' AND expires_at >= ` + now + ` THEN 1 ELSE 0 END
FROM ` + table + ` WHERE namespace = ? ORDER BY worker_id`,
		revoke: `UPDATE ` + table + `
SET last_ms = GREATEST(last_ms, expires_at), owner = NULL
WHERE namespace = ? AND worker_id = ? AND owner IS NOT NULL`,
		exists: `SELECT COUNT(*) FROM ` + table + ` WHERE namespace = ? AND worker_id = ?`,
	}
	if d == PostgreSQL {
		for _, p := range []*string{&q.gap, &q.candidate, &q.claim, &q.insert, &q.renew, &q.release, &q.owned, &q.list, &q.revoke, &q.exists} {
			*p = dollarParams(*p)
		}
	}
	return q
}

// dollarParams renumbers ? placeholders to $1, $2, ... (the statements
// here hold no ? in literals).
func dollarParams(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
