package xa

import (
	"context"
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
		res, err := c.log.DB.ExecContext(ctx, c.logSQL.deleteC, gtrid)
		if err != nil {
			return n, fmt.Errorf("xa: deleting the decision of %s: %w", gtrid, err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	res, err := c.log.DB.ExecContext(ctx, c.logSQL.deleteA, c.now().UTC().Add(-c.aKeep()))
	if err != nil {
		return n, fmt.Errorf("xa: deleting old rollback decisions: %w", err)
	}
	k, _ := res.RowsAffected()
	return n + k, nil
}

// decidedC reads the C rows of our logtag whose branches are all on 2PC
// data sources this coordinator lists (others' it cannot judge).
func (c *Coordinator) decidedC(ctx context.Context, tag string) (map[string]bool, error) {
	rows, err := c.log.DB.QueryContext(ctx, c.logSQL.readC)
	if err != nil {
		return nil, fmt.Errorf("xa: reading commit decisions: %w", err)
	}
	defer rows.Close()
	done := map[string]bool{}
	for rows.Next() {
		var gtrid, branches string
		if err := rows.Scan(&gtrid, &branches); err != nil {
			return nil, fmt.Errorf("xa: reading commit decisions: %w", err)
		}
		if p, err := parseGTRID(gtrid); err == nil && p.Tag == tag && c.listsAll(branches) {
			done[gtrid] = true
		}
	}
	return done, rows.Err()
}

func (c *Coordinator) listsAll(branches string) bool {
	for _, name := range strings.Split(branches, ",") {
		if !c.CanTwoPhase(name) {
			return false
		}
	}
	return true
}
