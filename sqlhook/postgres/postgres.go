// Package postgres registers sqlhook's PostgreSQL compiler. Import it for
// its side effect beside the PostgreSQL driver:
//
//	import (
//		_ "github.com/jackc/pgx/v5/stdlib"
//		_ "github.com/shardkey/shardkey/sqlhook/postgres"
//	)
//
// Statements are parsed with libpg_query, the PostgreSQL server's own
// parser, through github.com/pganalyze/pg_query_go with cgo and
// github.com/wasilibs/go-pgquery (WebAssembly under wazero) without. A
// program that imports only this dialect links no MySQL parser.
package postgres

import (
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"github.com/shardkey/shardkey/sqlhook/internal/pgsql"
)

func init() { ir.Register(ir.PostgreSQL, pgsql.Compile) }
