package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// Savepoints. A transaction keeps the savepoints in force in its log, in
// order, as the database keeps them. SAVEPOINT, RELEASE and ROLLBACK TO
// go to every data source the transaction has begun on; before it has
// begun on any they only change the log, which is replayed to each data
// source as it begins, so a savepoint taken first (GORM's nested
// Transaction) works with one data source exactly as without sqlhook,
// and every data source of a multi-source transaction has the same
// savepoints.

type spKind uint8

const (
	spSet spKind = iota + 1
	spRelease
	spRollback
)

// spStmt is a parsed savepoint statement; name is the savepoint's name
// as the database compares it.
type spStmt struct {
	kind spKind
	name string
}

// parseSavepoint reads SAVEPOINT n, RELEASE [SAVEPOINT] n or ROLLBACK
// [WORK|TRANSACTION] TO [SAVEPOINT] n, alone (a trailing semicolon
// aside).
func parseSavepoint(d Dialect, query string) (spStmt, bool) {
	toks, err := sessLex(d, query)
	if err != nil {
		return spStmt{}, false
	}
	for len(toks) > 0 && tokOpAt(toks, len(toks)-1, ";") {
		toks = toks[:len(toks)-1]
	}
	var st spStmt
	i := 1
	switch tokWordAt(toks, 0) {
	case "savepoint":
		st.kind = spSet
	case "release":
		st.kind = spRelease
		if tokWordAt(toks, 1) == "savepoint" && len(toks) == 3 {
			i = 2
		}
	case "rollback":
		st.kind = spRollback
		if w := tokWordAt(toks, i); w == "work" || w == "transaction" {
			i++
		}
		if tokWordAt(toks, i) != "to" {
			return spStmt{}, false
		}
		i++
		if tokWordAt(toks, i) == "savepoint" && len(toks) == i+2 {
			i++
		}
	default:
		return spStmt{}, false
	}
	if len(toks) != i+1 {
		return spStmt{}, false
	}
	switch t := toks[i]; {
	case t.kind == slWord:
		st.name = t.text // unquoted: folded (PostgreSQL), or compared without case
	case t.kind == slQuoted && d == PostgreSQL:
		st.name = t.text
	case t.kind == slQuoted:
		st.name = strings.ToLower(t.text)
	default:
		return spStmt{}, false
	}
	return st, true
}

// find is the index in the log of the latest savepoint called name, or
// -1.
func (t *tx) find(name string) int {
	for i := len(t.log) - 1; i >= 0; i-- {
		if t.log[i].name == name {
			return i
		}
	}
	return -1
}

// apply records a savepoint statement that succeeded everywhere.
func (t *tx) apply(d Dialect, sp spStmt, query string) {
	switch sp.kind {
	case spSet:
		if i := t.find(sp.name); i >= 0 && d == MySQL {
			// MySQL replaces a savepoint of the same name; PostgreSQL
			// and SQLite keep both.
			t.log = append(t.log[:i], t.log[i+1:]...)
		}
		t.log = append(t.log, txEntry{name: sp.name, sql: query})
	case spRelease:
		// The savepoint and the later ones go; SET LOCALs stay.
		i := t.find(sp.name)
		kept := t.log[:i]
		for _, e := range t.log[i:] {
			if e.name == "" {
				kept = append(kept, e)
			}
		}
		t.log = kept
	case spRollback:
		t.log = t.log[:t.find(sp.name)+1]
	}
}

// savepoint runs a savepoint statement of the transaction.
func (t *tx) savepoint(ctx context.Context, query string, r *routed, s *stmt, asQuery bool) (any, error) {
	sp, ok := parseSavepoint(t.c.cn.h.Dialect, query)
	if !ok {
		return nil, t.c.cn.refuse(ctx, &StatementError{SQL: query, Err: fmt.Errorf(
			"%w: a savepoint statement in a transaction must stand alone, naming one savepoint", ErrUnsupported)})
	}
	if t.broken != nil || t.failed != nil && sp.kind != spRollback {
		return nil, t.c.cn.refuse(ctx, t.usable(query))
	}
	known := sp.kind == spSet || t.find(sp.name) >= 0
	if len(t.begun) == 0 {
		if !known {
			return nil, &StatementError{SQL: query, Err: fmt.Errorf("sqlhook: savepoint %s does not exist", sp.name)}
		}
		t.apply(t.c.cn.h.Dialect, sp, query)
		return emptyResult(asQuery), nil
	}
	u := r.units[0]
	res, done, err := t.c.runEach(ctx, ir.SortedKeys(t.begun), u, s, asQuery)
	if err != nil {
		if len(done) == 0 && !known {
			// A savepoint no data source has (a ROLLBACK TO or RELEASE
			// of a name never set) failed where it was sent first and
			// ran nowhere: the transaction goes on as on the bare
			// driver (on PostgreSQL it fails until ROLLBACK TO).
			t.c.statementFailed(err)
			return nil, err
		}
		if len(done) > 0 || sp.kind == spRollback && t.c.cn.spansSources() {
			t.broken = fmt.Errorf("%s succeeded on %d data source(s) (%s) and failed on another: %v",
				strings.ToUpper(query), len(done), strings.Join(done, ", "), err)
			if len(done) == 0 {
				t.broken = fmt.Errorf("ROLLBACK TO failed in a transaction that may span data sources: %v", err)
			}
			return nil, &StatementError{SQL: query, Err: fmt.Errorf("%w: %v", ErrTxAborted, t.broken)}
		}
		return nil, err
	}
	if known {
		t.apply(t.c.cn.h.Dialect, sp, query)
	} else if t.c.cn.spansSources() && len(t.c.cn.names) > 1 {
		// The databases know a savepoint the log does not (set where
		// sqlhook did not see it): a data source joining later could not
		// be given the same savepoints.
		t.broken = fmt.Errorf("savepoint %s was not set through this transaction", sp.name)
	}
	if sp.kind == spRollback {
		t.failed = nil
	}
	return res, nil
}

// emptyResult is what a statement that ran nowhere yet returns.
func emptyResult(asQuery bool) any {
	if asQuery {
		return &bufferedRows{}
	}
	return driver.RowsAffected(0)
}

// runEach runs u's text and arguments on the open conn of each data
// source of dss in order, stopping at the first failure; it returns the
// first data source's result (a *bufferedRows for a query), and the data
// sources it succeeded on.
func (c *conn) runEach(ctx context.Context, dss []string, u unit, s *stmt, asQuery bool) (any, []string, error) {
	var first any
	done := make([]string, 0, len(dss))
	for _, ds := range dss {
		du := unit{ds: ds, sql: u.sql, args: u.args}
		var (
			res any
			err error
		)
		if asQuery {
			var rows driver.Rows
			if rows, err = c.queryUnit(ctx, du, s); err == nil {
				res, err = materialize(rows)
			}
		} else {
			res, err = c.execUnit(ctx, du, s)
		}
		if err != nil {
			if len(done) > 0 && errors.Is(err, driver.ErrBadConn) {
				c.bad = true
				err = fmt.Errorf("sqlhook: %v", err) // not retried: it ran on some data sources
			}
			return nil, done, err
		}
		if first == nil {
			first = res
		}
		done = append(done, ds)
	}
	if first == nil {
		first = emptyResult(asQuery)
	}
	return first, done, nil
}
