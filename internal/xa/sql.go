package xa

import (
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/internal/dialect"
)

// Statements a branch's connection runs. Identifiers and xids are spliced
// in: gids are built from validated characters only (ValidSourceName,
// lower-case base36/hex GTRIDs) and MySQL xids are hex literals.

// preparePG is the phase-1 statement of a PostgreSQL branch.
func preparePG(gid string) string { return "PREPARE TRANSACTION '" + gid + "'" }

// pgCheckPrepared fails (division by zero) unless gid is prepared: one
// plain query, no PL/pgSQL. Every name is pg_catalog's, so a search_path
// with a shadowing view, function or operator cannot answer for it.
func pgCheckPrepared(gid string) string {
	return "SELECT 1 OPERATOR(pg_catalog./) pg_catalog.count(*) FROM pg_catalog.pg_prepared_xacts WHERE gid OPERATOR(pg_catalog.=) '" + gid + "'"
}

// commitPreparedPG and rollbackPreparedPG end a prepared PostgreSQL branch.
func commitPreparedPG(gid string) string   { return "COMMIT PREPARED '" + gid + "'" }
func rollbackPreparedPG(gid string) string { return "ROLLBACK PREPARED '" + gid + "'" }

// The XA statements of a MySQL branch with xid as mysqlXID spells it.
func xaStart(xid string) string          { return "XA START " + xid }
func xaEnd(xid string) string            { return "XA END " + xid }
func xaPrepare(xid string) string        { return "XA PREPARE " + xid }
func xaCommit(xid string) string         { return "XA COMMIT " + xid }
func xaCommitOnePhase(xid string) string { return "XA COMMIT " + xid + " ONE PHASE" }
func xaRollback(xid string) string       { return "XA ROLLBACK " + xid }

const (
	pgListPrepared = `SELECT gid FROM pg_catalog.pg_prepared_xacts WHERE database OPERATOR(pg_catalog.=) pg_catalog.current_database() AND gid OPERATOR(pg_catalog.~~) $1`
	pgMaxPrepared  = `SELECT pg_catalog.current_setting('max_prepared_transactions')`
	pgIsPrepared   = `SELECT pg_catalog.count(*) FROM pg_catalog.pg_prepared_xacts WHERE gid OPERATOR(pg_catalog.=) $1`
	pgLogLocation  = `SELECT pg_catalog.current_database(), n.nspname, c.relname FROM pg_catalog.pg_class c ` +
		`JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1)`
	mysqlLocation   = `SELECT DATABASE()`
	mysqlRecover    = `XA RECOVER`
	mysqlDurability = `SELECT @@innodb_flush_log_at_trx_commit, @@log_bin, @@sync_binlog`
)

// logSQL holds the decision log's statements in one dialect.
type logSQL struct {
	create, insert, read, readID, readC, count, deleteC, deleteA string
}

// newLogSQL spells the decision log's statements for d and table (a
// validated identifier, optionally schema-qualified, used unquoted).
func newLogSQL(d dialect.Name, table string) logSQL {
	ts, ph := "timestamp(6)", func(i int) string { return fmt.Sprintf("$%d", i) }
	if d == dialect.MySQL {
		ts, ph = "datetime(6)", func(int) string { return "?" }
	}
	insert := "INSERT INTO " + table + " (gtrid, outcome, branches, created_at) VALUES (" +
		strings.Join([]string{ph(1), ph(2), ph(3), ph(4)}, ", ") + ")"
	if d == dialect.Postgres {
		// synchronous_commit on for this transaction, in the same round
		// trip: with it off (a common setting) COMMIT returns before the
		// row is flushed, and a crash loses a decision whose branches
		// were already committed.
		insert = "WITH durable AS (SELECT pg_catalog.set_config('synchronous_commit', 'on', true)) INSERT INTO " + table +
			" (gtrid, outcome, branches, created_at) SELECT $1::varchar, $2::char(1), $3::text, $4::timestamp FROM durable"
	}
	return logSQL{
		create: "CREATE TABLE IF NOT EXISTS " + table + " (gtrid varchar(64) NOT NULL PRIMARY KEY, " +
			"outcome char(1) NOT NULL, branches text NOT NULL, created_at " + ts + " NOT NULL)",
		insert:  insert,
		read:    "SELECT outcome FROM " + table + " WHERE gtrid = " + ph(1),
		readID:  "SELECT branches FROM " + table + " WHERE gtrid = " + ph(1) + " AND outcome = 'I'",
		readC:   "SELECT gtrid, branches FROM " + table + " WHERE outcome = 'C'",
		count:   "SELECT count(*) FROM " + table + " WHERE gtrid <> '" + logIDKey + "'",
		deleteC: "DELETE FROM " + table + " WHERE gtrid = " + ph(1) + " AND outcome = 'C'",
		deleteA: "DELETE FROM " + table + " WHERE outcome = 'A' AND created_at < " + ph(1),
	}
}

// validTable tells whether name is an identifier, or schema.identifier,
// of [A-Za-z_][A-Za-z0-9_]* with at most 63 bytes a part.
func validTable(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 63 || '0' <= p[0] && p[0] <= '9' {
			return false
		}
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_') {
				return false
			}
		}
	}
	return true
}
