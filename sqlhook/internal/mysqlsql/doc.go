// Package mysqlsql compiles MySQL and MariaDB statements into ir plans,
// parsing with TiDB's MySQL parser (github.com/pingcap/tidb/pkg/parser).
// sqlhook/mysql registers Compile.
package mysqlsql
