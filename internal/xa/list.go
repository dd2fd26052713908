package xa

import (
	"context"

	"github.com/shardkey/shardkey/internal/dialect"
)

// listSource lists s's prepared branches of ours: our format, our logtag
// and s's own name as the branch qualifier (another data source sharing
// the server lists its own).
func (c *Coordinator) listSource(ctx context.Context, s *source, tag string) ([]found, error) {
	if s.Dialect == dialect.Postgres {
		return c.listPG(ctx, s, tag)
	}
	return c.listMySQL(ctx, s, tag)
}

func (c *Coordinator) listPG(ctx context.Context, s *source, tag string) ([]found, error) {
	rows, err := s.DB.QueryContext(ctx, pgListPrepared, gtridPrefix+tag+":%")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fs []found
	for rows.Next() {
		var gid string
		if err := rows.Scan(&gid); err != nil {
			return fs, err
		}
		if gtrid, p, src, ok := parsePGGID(gid); ok && p.Tag == tag && src == s.Name {
			fs = append(fs, c.newFound(gtrid, p, src))
		}
	}
	return fs, rows.Err()
}

func (c *Coordinator) listMySQL(ctx context.Context, s *source, tag string) ([]found, error) {
	rows, err := s.DB.QueryContext(ctx, mysqlRecover)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fs []found
	for rows.Next() {
		var format, gl, bl int64
		var data []byte
		if err := rows.Scan(&format, &gl, &bl, &data); err != nil {
			return fs, err
		}
		if gtrid, p, src, ok := parseMySQLXID(format, gl, bl, data); ok && p.Tag == tag && src == s.Name {
			fs = append(fs, c.newFound(gtrid, p, src))
		}
	}
	return fs, rows.Err()
}

func (c *Coordinator) newFound(gtrid string, p gtridParts, src string) found {
	return found{BranchID: BranchID{Source: src, GTRID: gtrid}, born: p.Born()}
}
