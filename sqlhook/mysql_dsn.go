package sqlhook

import (
	"net/url"
	"strings"
)

// mysqlDatabases are the databases the rules' MySQL data sources connect
// to, read from their DSNs (go-sql-driver/mysql's format). A table
// qualified by one of them is a logic table of these rules, and the
// qualifier is dropped so that each target's connection resolves the
// physical table in its own database. A data source given as a connector
// (OpenWith, Wrap) has no DSN here; its database is unknown.
func (h *hook) mysqlDatabases() map[string]bool {
	cfg := h.router.Config()
	if cfg == nil {
		return nil
	}
	var out map[string]bool
	for _, ds := range cfg.DataSources {
		if ds.Driver != "mysql" {
			continue
		}
		if db, ok := mysqlDSNDatabase(ds.DSN); ok {
			if out == nil {
				out = map[string]bool{}
			}
			out[db] = true
		}
	}
	return out
}

// mysqlDSNDatabase reads the database name of a go-sql-driver/mysql DSN,
// [user[:password]@][net[(addr)]]/dbname[?params], as the driver does:
// after the last '/', up to the next '?', path-unescaped. ok is false when
// the DSN names none.
func mysqlDSNDatabase(dsn string) (string, bool) {
	i := strings.LastIndexByte(dsn, '/')
	if i < 0 {
		return "", false
	}
	name := dsn[i+1:]
	if j := strings.IndexByte(name, '?'); j >= 0 {
		name = name[:j]
	}
	name, err := url.PathUnescape(name)
	if err != nil || name == "" {
		return "", false
	}
	return name, true
}
