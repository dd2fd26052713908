// Package sqlite registers sqlhook's SQLite compiler. Import it for its
// side effect beside the SQLite driver:
//
//	import (
//		_ "github.com/shardkey/shardkey/sqlhook/sqlite"
//		_ "modernc.org/sqlite"
//	)
//
// SQLite statements are respelled into PostgreSQL's grammar (their
// shapes are the same: RETURNING, ON CONFLICT, "identifiers") and parsed
// with libpg_query, so this package links the PostgreSQL parser (see
// sqlhook/postgres) and no MySQL parser.
package sqlite

import (
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"github.com/shardkey/shardkey/sqlhook/internal/pgsql"
)

func init() { ir.Register(ir.SQLite, pgsql.Compile) }
