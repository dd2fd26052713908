// Package mysql registers sqlhook's MySQL and MariaDB compiler. Import it
// for its side effect beside the MySQL driver:
//
//	import (
//		_ "github.com/go-sql-driver/mysql"
//		_ "github.com/shardkey/shardkey/sqlhook/mysql"
//	)
//
// Statements are parsed with TiDB's MySQL parser
// (github.com/pingcap/tidb/pkg/parser). A program that imports only this
// dialect links no PostgreSQL parser.
package mysql

import (
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"github.com/shardkey/shardkey/sqlhook/internal/mysqlsql"
)

func init() { ir.Register(ir.MySQL, mysqlsql.Compile) }
