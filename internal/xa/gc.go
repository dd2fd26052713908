package xa

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// GC deletes decision log rows nobody needs: C rows of transactions with
// no branch left prepared, and A rows older than max(24h, 100×Timeout)
// (kept that long so a stalled coordinator still finds them). The C rows
// are read before the branches are listed, so a row whose branches are
// all absent from the listing is finished; nothing is deleted when any
// data source could not be listed. It returns how many rows it deleted.
func (c *Coordinator) GC(ctx context.Context) (int64, error) {
	tag, err := c.ready()
	if err != nil {
		return 0, err
	}
	done, err := c.decidedC(ctx, tag)
	if err != nil {
		return 0, err
	}
	fs, errs := c.listAll(ctx, tag)
	if len(errs) > 0 {
		return 0, errorsJoin(errs)
	}
	for _, f := range fs {
		delete(done, f.GTRID)
	}
	var n int64
	for gtrid := range done {
		k, err := c.logDelete(ctx, c.logSQL.deleteC, gtrid)
		if err != nil {
			return n, fmt.Errorf("xa: deleting the decision of %s: %w", gtrid, err)
		}
		n += k
	}
	k, err := c.logDelete(ctx, c.logSQL.deleteA, c.now().UTC().Add(-c.aKeep()))
	if err != nil {
		return n, fmt.Errorf("xa: deleting old rollback decisions: %w", err)
	}
	return n + k, nil
}

// logDelete runs a DELETE on the log in a transaction of its own and
// returns how many rows it deleted.
func (c *Coordinator) logDelete(ctx context.Context, q string, arg any) (int64, error) {
	var n int64
	err := c.inLogTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, arg)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// decidedC reads the C rows of our logtag whose branches are all on 2PC
// data sources this coordinator lists (others' it cannot judge).
func (c *Coordinator) decidedC(ctx context.Context, tag string) (map[string]bool, error) {
	done := map[string]bool{}
	err := c.inReadTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, c.logSQL.readC)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var gtrid, branches string
			if err := rows.Scan(&gtrid, &branches); err != nil {
				return err
			}
			if p, err := parseGTRID(gtrid); err == nil && p.Tag == tag && c.listsAll(branches) {
				done[gtrid] = true
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("xa: reading commit decisions: %w", err)
	}
	return done, nil
}

func (c *Coordinator) listsAll(branches string) bool {
	for _, name := range strings.Split(branches, ",") {
		if !c.CanTwoPhase(name) {
			return false
		}
	}
	return true
}
