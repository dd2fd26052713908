package sqlhook

import (
	"database/sql/driver"
	"slices"
	"strings"
	"sync"
)

// Session state on a connection with several data sources.
//
// A sqlhook connection holds one driver connection per data source it
// has used. State a statement leaves on a driver connection (a variable,
// the time zone, a temporary table) would exist on one data source only
// and a later statement on another would silently see other state. So,
// when the connector has more than one data source, every statement is
// classified here before it runs: a statement that sets session state
// in a way that can be repeated is run on every open data source
// connection and recorded, and the record is replayed on each data
// source connection opened later; anything else that changes or depends
// on such state is refused (ErrSessionState) before it is sent. With one
// data source nothing is classified: statements pass through.

// sessKind is what a statement does to session state.
type sessKind uint8

const (
	sessNone      sessKind = iota // no session state involved
	sessApply                     // run on every data source connection, record, replay on new ones
	sessTxLocal                   // PostgreSQL SET LOCAL / SET CONSTRAINTS: every data source of the transaction
	sessSavepoint                 // SAVEPOINT, RELEASE, ROLLBACK TO (the transaction handles them)
	sessRefuse                    // refused
)

type sessClass struct {
	kind sessKind
	// transactional: the change behaves differently inside a
	// transaction (PostgreSQL undoes a SET on rollback; SQLite ignores
	// or rolls back some pragmas), so inside one it is refused: the data
	// sources in the transaction and those outside it would differ.
	transactional bool
	why           string // for sessRefuse
	// lexMode: the refusal is of a change to how the server reads later
	// statements (session_lexmode.go), refused with one data source too.
	lexMode bool
}

func sessRefused(why string) sessClass { return sessClass{kind: sessRefuse, why: why} }

// maxSessionLog bounds the statements recorded on one connection for
// replay; past it a session statement is refused (use a fresh
// connection, or fewer SETs).
const maxSessionLog = 256

// sessionEntry is a recorded session statement.
type sessionEntry struct {
	sql  string
	args []driver.NamedValue
}

// sessClassCache keeps classifications by statement text (bounded like the
// plan cache).
type sessClassCache struct {
	mu   sync.RWMutex
	m    map[string]sessClass
	size int
}

func (c *sessClassCache) get(d Dialect, q string) sessClass {
	c.mu.RLock()
	cls, ok := c.m[q]
	c.mu.RUnlock()
	if ok {
		return cls
	}
	cls = classifySession(d, q)
	if c.size > 0 {
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]sessClass{}
		}
		if len(c.m) >= c.size {
			for k := range c.m {
				delete(c.m, k)
				break
			}
		}
		c.m[q] = cls
		c.mu.Unlock()
	}
	return cls
}

// classifySession classifies statement q of dialect d. A string of
// several statements is refused if any of them touches session state:
// the driver sends it to one data source as a whole.
func classifySession(d Dialect, q string) sessClass {
	toks, err := sessLex(d, q)
	if err != nil {
		return sessRefused("cannot read the statement's text: " + err.Error())
	}
	var parts [][]sessToken
	start := 0
	for i, t := range toks {
		if t.kind == slOp && t.text == ";" {
			if i > start {
				parts = append(parts, toks[start:i])
			}
			start = i + 1
		}
	}
	if start < len(toks) {
		parts = append(parts, toks[start:])
	}
	if len(parts) == 0 {
		return sessClass{}
	}
	if len(parts) == 1 {
		return classifyOne(d, parts[0])
	}
	for _, p := range parts {
		if cls := classifyOne(d, p); cls.lexMode {
			return cls
		} else if cls.kind != sessNone {
			return sessRefused("a string of several statements changes session state; send that statement on its own")
		}
	}
	return sessClass{}
}

// classifyOne classifies one statement's tokens.
func classifyOne(d Dialect, toks []sessToken) sessClass {
	if cls, refused := classifyLexMode(d, toks); refused {
		return cls
	}
	first := tokWordAt(toks, 0)
	switch first {
	case "set":
		return classifySet(d, toks[1:])
	case "reset":
		if d == PostgreSQL {
			return sessClass{kind: sessApply, transactional: true}
		}
	case "use":
		if d == MySQL {
			return sessRefused("USE would change the database of one data source's connection; each data source is its own database")
		}
	case "update":
		if d == PostgreSQL && slices.ContainsFunc(toks, func(t sessToken) bool { return t.kind == slWord && t.text == "pg_settings" }) {
			return sessRefused("UPDATE pg_settings is SET on one data source's connection; use SET")
		}
	case "discard":
		if d == PostgreSQL {
			return sessRefused("DISCARD would reset one data source's session only")
		}
	case "pragma":
		if d == SQLite {
			return classifyPragma(toks[1:])
		}
	case "attach", "detach":
		if d == SQLite {
			return sessRefused("ATTACH and DETACH change one data source's connection only")
		}
	case "begin", "commit", "end", "abort", "xa":
		return sessRefused("transaction control in SQL text reaches one data source only; use BeginTx, Commit and Rollback")
	case "start":
		if tokWordAt(toks, 1) == "transaction" {
			return sessRefused("START TRANSACTION reaches one data source only; use BeginTx")
		}
	case "rollback":
		if isSavepointWords(toks) {
			return sessClass{kind: sessSavepoint}
		}
		return sessRefused("ROLLBACK in SQL text reaches one data source only; use Rollback")
	case "savepoint", "release":
		return sessClass{kind: sessSavepoint}
	case "do", "call":
		if first == "call" || d == PostgreSQL {
			return sessRefused("a procedure or DO block runs on one data source, and sqlhook cannot see what it does to session state (or to sharded tables); run it through UnwrapDataSource")
		}
	case "show", "get":
		if d == MySQL && (tokWordAt(toks, 1) == "warnings" || tokWordAt(toks, 1) == "errors" || tokWordAt(toks, 1) == "count" || tokWordAt(toks, 1) == "diagnostics") {
			return sessRefused("warnings and diagnostics are those of the last statement on one data source's connection, whichever data source it ran on")
		}
	case "prepare", "execute", "deallocate":
		return sessRefused("SQL-level prepared statements live on one data source's connection (prepare through database/sql instead)")
	case "lock", "unlock":
		if d == MySQL {
			return sessRefused("LOCK TABLES and UNLOCK TABLES hold for one data source's connection only")
		}
	case "create":
		if createsTemp(toks) {
			return sessRefused("a temporary table exists on one data source's connection only; use a regular (or broadcast) table")
		}
	case "drop":
		if d == MySQL && tokWordAt(toks, 1) == "temporary" {
			return sessRefused("a temporary table exists on one data source's connection only")
		}
	}
	return scanSessionUse(d, toks)
}

// perStatementVars are MySQL system variables that describe the
// connection's last statement.
var perStatementVars = map[string]bool{
	"warning_count": true, "error_count": true, "identity": true, "last_insert_id": true,
	"session.warning_count": true, "session.error_count": true, "session.identity": true, "session.last_insert_id": true,
}

// tokWordAt is toks[i]'s lower-cased text when it is an unquoted word.
func tokWordAt(toks []sessToken, i int) string {
	if i < len(toks) && toks[i].kind == slWord {
		return toks[i].text
	}
	return ""
}

func tokOpAt(toks []sessToken, i int, op string) bool {
	return i < len(toks) && toks[i].kind == slOp && toks[i].text == op
}

// isSavepointWords: ROLLBACK [WORK|TRANSACTION] TO ...
func isSavepointWords(toks []sessToken) bool {
	i := 1
	if w := tokWordAt(toks, i); w == "work" || w == "transaction" {
		i++
	}
	return tokWordAt(toks, i) == "to"
}

// createsTemp: CREATE [OR REPLACE] [GLOBAL|LOCAL] TEMP|TEMPORARY ..., or
// SQLite's CREATE TABLE|VIEW|... temp.name.
func createsTemp(toks []sessToken) bool {
	i := 1
	if tokWordAt(toks, i) == "or" && tokWordAt(toks, i+1) == "replace" {
		i += 2
	}
	if w := tokWordAt(toks, i); w == "global" || w == "local" {
		i++
	}
	if w := tokWordAt(toks, i); w == "temp" || w == "temporary" {
		return true
	}
	for j := i; j < len(toks) && j < i+8; j++ {
		// Quoted too, in any case: SQLite's schema names ignore case, and
		// PostgreSQL's "pg_temp" is pg_temp.
		if w := strings.ToLower(toks[j].text); (toks[j].kind == slWord || toks[j].kind == slQuoted) && (w == "temp" || w == "pg_temp") && tokOpAt(toks, j+1, ".") {
			return true
		}
	}
	return false
}

// perConnFuncs read state of the connection's last statement, which ran
// on whichever data source it was routed to.
var perConnFuncs = map[string]bool{
	"last_insert_id": true, "found_rows": true, "row_count": true, // MySQL
	"lastval": true, "currval": true, "set_config": true, // PostgreSQL
	"last_insert_rowid": true, "changes": true, "total_changes": true, // SQLite
}

// scanSessionUse refuses a statement that assigns a MySQL user variable
// outside SET, selects into a temporary table, or calls a function whose
// answer is per connection.
func scanSessionUse(d Dialect, toks []sessToken) sessClass {
	first := tokWordAt(toks, 0)
	for i, t := range toks {
		switch {
		case t.kind == slUserVar && tokOpAt(toks, i+1, ":="):
			return sessRefused("a user variable assigned outside SET would be set on one data source only; assign it with SET")
		case t.kind == slWord && t.text == "into" && i+1 < len(toks) && toks[i+1].kind == slUserVar:
			return sessRefused("SELECT ... INTO @variable would set it on one data source only; assign it with SET")
		case t.kind == slWord && t.text == "into" && d == PostgreSQL && (first == "select" || first == "with") &&
			(tokWordAt(toks, i+1) == "temp" || tokWordAt(toks, i+1) == "temporary"):
			return sessRefused("a temporary table exists on one data source's connection only")
		case t.kind == slSysVar && perStatementVars[t.text]:
			return sessRefused("@@" + t.text + " describes the last statement on one data source's connection, whichever data source it ran on")
		case (t.kind == slWord || t.kind == slQuoted) && perConnFuncs[strings.ToLower(t.text)] && tokOpAt(toks, i+1, "("):
			// A quoted name ("set_config"(...)) calls the same function.
			return sessRefused(t.text + "() answers for the connection to one data source, whichever the last statement reached; use RETURNING or the Result instead")
		}
	}
	return sessClass{}
}

// classifySet classifies SET (toks follow the SET keyword).
func classifySet(d Dialect, toks []sessToken) sessClass {
	switch d {
	case PostgreSQL:
		switch tokWordAt(toks, 0) {
		case "local", "constraints":
			return sessClass{kind: sessTxLocal}
		case "transaction":
			return sessRefused("SET TRANSACTION reaches one data source only; give the options to BeginTx")
		}
		return sessClass{kind: sessApply, transactional: true}
	case MySQL:
		return classifyMySQLSet(toks)
	}
	return sessClass{}
}

// classifyMySQLSet accepts SET of session variables and user variables
// to values that every data source computes alike (literals, arguments,
// variables, deterministic functions, no subquery), SET NAMES, SET
// CHARACTER SET, SET SESSION TRANSACTION and SET ROLE.
func classifyMySQLSet(toks []sessToken) sessClass {
	switch w := tokWordAt(toks, 0); {
	case w == "names" || w == "charset" || w == "role" || w == "character" && tokWordAt(toks, 1) == "set":
		return checkSetValues(toks, sessClass{kind: sessApply})
	case w == "session" && tokWordAt(toks, 1) == "transaction":
		return sessClass{kind: sessApply}
	case w == "transaction":
		return sessRefused("SET TRANSACTION applies to one data source's next transaction; give the options to BeginTx")
	case w == "password" || w == "default" || w == "statement":
		return sessRefused("SET " + w + " is not session state sqlhook can repeat on every data source")
	}
	depth, start := 0, 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) {
			if tokOpAt(toks, i, "(") {
				depth++
			} else if tokOpAt(toks, i, ")") {
				depth--
			}
			if !tokOpAt(toks, i, ",") || depth != 0 {
				continue
			}
		}
		if cls := checkSetAssignment(toks[start:i]); cls.kind == sessRefuse {
			return cls
		}
		start = i + 1
	}
	return sessClass{kind: sessApply}
}

// checkSetAssignment checks one "target = value" of a MySQL SET.
func checkSetAssignment(a []sessToken) sessClass {
	eq := slices.IndexFunc(a, func(t sessToken) bool { return t.kind == slOp && (t.text == "=" || t.text == ":=") })
	if eq < 1 {
		return sessRefused("cannot read the SET assignment")
	}
	target := a[:eq]
	name, userVar := "", false
	switch {
	case len(target) == 1 && target[0].kind == slUserVar:
		userVar = true
	case len(target) == 1 && target[0].kind == slSysVar:
		name = target[0].text
		if scope, rest, ok := cutVarScope(name); ok {
			if scope != "session" && scope != "local" {
				return sessRefused("SET @@" + name + " changes server-wide state, not the session's")
			}
			name = rest
		}
	case len(target) == 1 && (target[0].kind == slWord || target[0].kind == slQuoted):
		name = target[0].text
	case len(target) == 2 && (tokWordAt(target, 0) == "session" || tokWordAt(target, 0) == "local"):
		name = target[1].text
	case len(target) >= 1 && (tokWordAt(target, 0) == "global" || tokWordAt(target, 0) == "persist" || tokWordAt(target, 0) == "persist_only"):
		return sessRefused("SET GLOBAL changes server-wide state, not the session's")
	default:
		return sessRefused("cannot read the SET target")
	}
	if name == "autocommit" {
		return sessRefused("SET autocommit would leave every data source in a transaction database/sql does not know of; use BeginTx")
	}
	if name == "transaction_isolation" || name == "tx_isolation" || name == "transaction_read_only" || name == "tx_read_only" {
		return sessClass{kind: sessApply}
	}
	if userVar && slices.ContainsFunc(a[eq+1:], func(t sessToken) bool { return t.kind == slSysVar }) {
		// @@server_id, @@hostname, ... differ per server: the variable
		// would hold another value on each data source.
		return sessRefused("a user variable set from a system variable may get another value on each data source; read it first and pass it as an argument")
	}
	return checkSetValues(a[eq+1:], sessClass{kind: sessApply})
}

func cutVarScope(name string) (scope, rest string, ok bool) {
	for i := 0; i < len(name); i++ {
		if name[i] == '.' {
			return name[:i], name[i+1:], true
		}
	}
	return "", name, false
}

// sessSetFuncs are the functions a repeated SET may call: deterministic, and
// reading no table.
var sessSetFuncs = map[string]bool{
	"concat": true, "concat_ws": true, "replace": true, "lower": true, "upper": true, "lcase": true, "ucase": true,
	"ifnull": true, "coalesce": true, "nullif": true, "if": true, "cast": true, "convert": true, "trim": true,
	"ltrim": true, "rtrim": true, "substring": true, "substr": true, "left": true, "right": true, "length": true,
	"char_length": true, "abs": true, "round": true, "floor": true, "ceil": true, "ceiling": true, "greatest": true,
	"least": true, "hex": true, "unhex": true, "find_in_set": true, "instr": true, "locate": true, "mod": true,
	"char": true, "json_object": true, "json_array": true, "json_quote": true,
}

// checkSetValues refuses a value every data source would not compute
// alike: a subquery, or a function outside sessSetFuncs (NOW(), RAND(),
// UUID(), CONNECTION_ID() differ per server or connection).
func checkSetValues(vals []sessToken, ok sessClass) sessClass {
	for i, t := range vals {
		if t.kind != slWord {
			continue
		}
		if t.text == "select" || t.text == "table" || t.text == "values" {
			return sessRefused("a SET whose value is a query would compute it on each data source; compute it first and pass it as an argument")
		}
		if tokOpAt(vals, i+1, "(") && !sessSetFuncs[t.text] {
			return sessRefused("SET with " + t.text + "() would compute a different value on each data source; compute it first and pass it as an argument")
		}
		if slices.Contains([]string{"current_timestamp", "current_date", "current_time", "localtime", "localtimestamp", "utc_timestamp", "utc_date", "utc_time"}, t.text) {
			return sessRefused("SET with " + t.text + " would compute a different value on each data source; pass it as an argument")
		}
	}
	return ok
}

// readPragmas are SQLite pragmas of the form name(argument) that only
// read.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true, "integrity_check": true,
	"quick_check": true,
}

// classifyPragma: PRAGMA name = value is applied everywhere; PRAGMA name
// and the reading name(argument) forms pass through; other name(value)
// forms (setters) are refused.
func classifyPragma(toks []sessToken) sessClass {
	i := 0
	if tokOpAt(toks, 1, ".") {
		i = 2
	}
	switch {
	case tokOpAt(toks, i+1, "="):
		// Inside a transaction some pragmas are no-ops (foreign_keys)
		// or roll back (user_version) on the data sources in it while
		// they take effect on the others: refused there.
		return sessClass{kind: sessApply, transactional: true}
	case tokOpAt(toks, i+1, "("):
		if i < len(toks) && readPragmas[toks[i].text] {
			return sessClass{}
		}
		return sessRefused("PRAGMA name(value) would change one data source's connection; write PRAGMA name = value")
	}
	return sessClass{}
}
