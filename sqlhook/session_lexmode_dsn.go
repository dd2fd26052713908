package sqlhook

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
)

// dsnLexModeError refuses a data source whose DSN makes its connections
// read statements otherwise than sqlhook does (see session_lexmode.go):
// go-sql-driver/mysql's charset and sql_mode parameters, and
// standard_conforming_strings or client_encoding in a PostgreSQL DSN.
// The driver applies them as it connects, where sqlhook cannot see.
func dsnLexModeError(ds shardconf.DataSource) error {
	bad := ""
	switch ds.Driver {
	case "mysql":
		bad = mysqlDSNLexMode(ds.DSN)
	case "pgx":
		bad = pgDSNLexMode(ds.DSN)
	}
	if bad == "" {
		return nil
	}
	return fmt.Errorf("%w %s: the dsn sets %s; sqlhook would read statements differently from the server", ErrDataSource, ds.Name, bad)
}

func mysqlDSNLexMode(dsn string) string {
	slash := strings.LastIndex(dsn, "/")
	q := strings.Index(dsn[slash+1:], "?")
	if q < 0 {
		return ""
	}
	params, err := url.ParseQuery(dsn[slash+1+q+1:])
	if err != nil {
		return "" // the driver reports it
	}
	for _, cs := range params["charset"] {
		for c := range strings.SplitSeq(cs, ",") {
			if !safeMySQLCharsets[strings.ToLower(strings.TrimSpace(c))] {
				return "charset " + c
			}
		}
	}
	for _, mode := range params["sql_mode"] {
		for m := range strings.SplitSeq(strings.Trim(mode, `'"`), ",") {
			if m = strings.ToUpper(strings.TrimSpace(m)); !safeSQLModes[m] {
				return "sql_mode " + m
			}
		}
	}
	return ""
}

// pgDSNLexMode looks for the two settings in either DSN form (URL
// parameters, options=-c ..., key=value words); only their harmless
// values pass.
func pgDSNLexMode(dsn string) string {
	l := strings.ToLower(dsn)
	if u, err := url.QueryUnescape(l); err == nil {
		l = u
	}
	for _, name := range []string{"standard_conforming_strings", "client_encoding"} {
		for rest := l; ; {
			i := strings.Index(rest, name)
			if i < 0 {
				break
			}
			rest = rest[i+len(name):]
			v := strings.TrimLeft(rest, " =")
			v = strings.TrimLeft(v, `'"`)
			end := strings.IndexAny(v, " &'\"")
			if end >= 0 {
				v = v[:end]
			}
			if name == "standard_conforming_strings" && v != "on" && v != "true" ||
				name == "client_encoding" && !pgSafeEncoding(v) {
				return name + " " + v
			}
		}
	}
	return ""
}
