package ir

import (
	"net/url"
	"strings"
)

// MySQLDatabases maps each MySQL data source of the rules to the database
// its DSN (go-sql-driver/mysql's format) connects to. A data source given
// as a connector (OpenWith, Wrap) has no DSN here; its database is
// unknown.
func (h *Schema) MySQLDatabases() map[string]string {
	cfg := h.Router.Config()
	if cfg == nil {
		return nil
	}
	var out map[string]string
	for _, ds := range cfg.DataSources {
		if ds.Driver != "mysql" {
			continue
		}
		if db, ok := MySQLDSNDatabase(ds.DSN); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[ds.Name] = db
		}
	}
	return out
}

// OwnDatabase reports whether schema is the database of a data source
// holding logic table table (or of the default data source, the one the
// application's unqualified names reach): a name so qualified is the
// logic table, and the qualifier is dropped so that each target's
// connection finds the physical table in its own database. Any other
// database (one whose data source holds no table of table, or one outside
// the rules) may hold an unrelated table of the same name.
func (h *Schema) OwnDatabase(dbs map[string]string, schema, table string) bool {
	if dbs[h.DefaultDS] == schema {
		return true
	}
	ts, err := h.Router.Targets(table)
	if err != nil {
		return false
	}
	for _, t := range ts {
		if db, ok := dbs[t.DataSource]; ok && db == schema {
			return true
		}
	}
	return false
}

// MySQLDSNDatabase reads the database name of a go-sql-driver/mysql DSN,
// [user[:password]@][net[(addr)]]/dbname[?params], as the driver does:
// after the last '/', up to the next '?', path-unescaped. ok is false when
// the DSN names none.
func MySQLDSNDatabase(dsn string) (string, bool) {
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
