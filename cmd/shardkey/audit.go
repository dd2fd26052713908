package main

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/shardconf"
)

var auditCmd = &command{
	name:     "audit",
	synopsis: "[-key COLUMN] [-batch N] [-limit N] [-keygen-props k=v,...] [-o text|json] [-rules] RULES.yaml [TABLE...]",
	summary:  "find rows already in the wrong shard, without sharding values, or in several shards",
	details: `Audit reads every physical table of each sharded logic table (or of the
tables named) from the data sources of the rule file, and reports:

  misplaced     a row whose sharding values route to another table or
                data source (the database and table strategies both apply)
  no value      a row whose sharding column is NULL: it routes nowhere
  unroutable    a row whose sharding values the rules refuse (a value no
                algorithm reads, a target that does not exist)
  duplicate     a key found in more than one physical table
  no key        a row whose key column is NULL (it cannot be audited)

Tables routed by a hint strategy are not audited (named, they are refused):
the hint each statement carried, not the row, chose the table.

The key column is the table's keyGenerateStrategy column, else -key; audit
refuses to guess. It must be unique within each physical table (a primary
key); -key a,b names a composite key, compared column by column. Each physical table is read in key order in batches (WHERE key > last
ORDER BY key LIMIT -batch), selecting only the key and sharding columns;
the tables of a logic table are merged by key, so a key in several tables
is found while holding one batch per physical table in memory, never every
key. Integer keys are ordered as numbers, text keys (uuid too) in the byte
order of their UTF-8 text, whatever the column's character set.

Sharding values are routed as the application passed them: integer,
DECIMAL and NUMERIC columns as numbers (10.00 is 10; a fraction is
unroutable), text as text (HASH_MOD hashes "10" and 10 apart, as
ShardingSphere does). A time routes by its wall clock as read back: MySQL
DATETIME and TIMESTAMP as the server prints them (in the DSN's loc with
parseTime), PostgreSQL timestamp as stored and timestamptz in audit's local
time zone (set TZ to the zone the application routed in).

Text output is a table of counts per physical table, then the findings
(at most -limit of each kind per logic table; counts are always complete).
-o json prints one document:

  {"clean": bool, "tables": [{"logicTable", "keyColumn", "shardingColumns",
    "physicalTables": [{"dataSource", "table", "rows", "misplaced",
      "missingShardingValue", "unroutable", "duplicateKeys", "withoutKey"}],
    "misplaced": [{"dataSource", "table", "key", "values", "routesTo"}],
    "missingShardingValue": [{"dataSource", "table", "key", "values", "nullColumns"}],
    "unroutable": [{"dataSource", "table", "key", "values", "error"}],
    "duplicateKeys": [{"key", "tables"}],
    "truncated": bool}],
   "totals": {"rows", "misplaced", "missingShardingValue", "unroutable",
     "duplicateKeys", "withoutKey"}}

Keys and values are strings (exact for any integer; a composite key as
"(part, part)" and its keyColumn as "a,b"), null for NULL;
"tables" of a duplicate and "routesTo" name targets as DATASOURCE.TABLE.
A progress bar goes to stderr when stderr is a terminal. Passwords in
DSNs are never printed.

Exit status: 0 nothing found, 1 findings, 2 usage, rule file, database or
query error (including a key that is not unique).
`,
	examples: `  shardkey audit rules.yaml
  shardkey audit -o json rules.yaml t_order
  shardkey audit -key id -batch 5000 rules.yaml t_order_item
`,
	setup: func(fs *flag.FlagSet) action {
		rf := addRulesFlags(fs)
		key := fs.String("key", "", "unique key `column` (or columns a,b of a composite key) of the tables without a keyGenerateStrategy (a table's keyGenerateStrategy column wins)")
		batch := fs.Int("batch", 1000, "rows read per query (`N`, 1..100000)")
		limit := fs.Int("limit", 100, "findings listed per kind and logic table (`N`; 0: all); counts are always complete")
		return func(args []string, stdout io.Writer) error {
			if *batch < 1 || *batch > 100000 {
				return usageErrorf("-batch %d: want 1..100000", *batch)
			}
			if *limit < 0 {
				return usageErrorf("-limit %d: want 0 or more", *limit)
			}
			file, tables, err := rf.file(args)
			if err != nil {
				return err
			}
			a, err := newAuditor(rf, file, tables, *key)
			if err != nil {
				return asExit2(err)
			}
			defer a.close()
			a.batch, a.limit, a.progress = *batch, *limit, newProgress(os.Stderr)
			rep, err := a.run(context.Background())
			if err != nil {
				return asExit2(a.scrub(err))
			}
			if rf.out.value == "json" {
				err = writeJSON(stdout, rep)
			} else {
				err = rep.writeText(stdout)
			}
			if err != nil {
				return asExit2(err) // a report not written must not read as findings (exit 1)
			}
			if !rep.Clean {
				return errSilent // exit 1: the report says what was found
			}
			return nil
		}
	},
}

// asExit2 makes an error exit 2: audit keeps exit 1 for findings, so a
// rule file, connection or query error must not look like one.
func asExit2(err error) error {
	var ue *usageError
	if errors.As(err, &ue) {
		return err
	}
	return &usageError{msg: err.Error()}
}

// auditor holds what every logic table's audit shares.
type auditor struct {
	r        *shardconf.Router
	tables   []auditTable
	dss      map[string]shardconf.DataSource
	dbs      map[string]*sql.DB
	batch    int
	limit    int
	progress *progress
}

// auditTable is one logic table to audit.
type auditTable struct {
	logic   string
	keys    []string // the key column, or the columns of a composite key
	columns []string // sharding columns
	targets []shardconf.Target
}

// newAuditor loads the rules, resolves the tables and their key columns,
// and opens (and pings) every data source they use.
func newAuditor(rf rulesFlags, file string, names []string, key string) (*auditor, error) {
	r, _, err := rf.load(file)
	if err != nil {
		return nil, err
	}
	a := &auditor{r: r, dss: map[string]shardconf.DataSource{}, dbs: map[string]*sql.DB{}}
	for _, ds := range r.Config().DataSources {
		a.dss[ds.Name] = ds
	}
	if len(names) == 0 {
		// Every table whose rows could be in the wrong place: a logic
		// table with one data node (a single table in the rules) has none,
		// and must not make the run ask for its key column.
		for _, t := range r.Tables() {
			// A table routed by hints is left out: where its rows belong is
			// not a function of their columns (resolveAuditTable says so
			// when one is named).
			if ts, err := r.Targets(t); r.IsSharded(t) && !r.UsesHint(t) && err == nil && len(ts) > 1 {
				names = append(names, t)
			}
		}
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[strings.ToLower(name)] { // named twice: read and counted once
			continue
		}
		seen[strings.ToLower(name)] = true
		t, err := resolveAuditTable(r, name, key)
		if err != nil {
			return nil, err
		}
		a.tables = append(a.tables, t)
	}
	for _, t := range a.tables {
		for _, tg := range t.targets {
			if err := a.open(tg.DataSource); err != nil {
				a.close()
				return nil, err
			}
		}
	}
	return a, nil
}

func resolveAuditTable(r *shardconf.Router, name, key string) (auditTable, error) {
	if !r.IsSharded(name) {
		return auditTable{}, usageErrorf("%s is not a sharded logic table of the rules", name)
	}
	if r.UsesHint(name) {
		// Route without the statement's hint would call every row
		// unroutable: the hint, not the row, chose its table.
		return auditTable{}, usageErrorf("%s is routed by a hint strategy: the hint each statement carried chose its rows' tables, "+
			"so audit cannot check them", name)
	}
	col, _, ok := r.KeyGenerator(name)
	keys := []string{col}
	switch {
	case !ok && key == "":
		return auditTable{}, usageErrorf("table %s has no keyGenerateStrategy: give its unique key column with -key", name)
	case !ok:
		keys = strings.Split(key, ",")
		for i, k := range keys {
			if keys[i] = strings.TrimSpace(k); keys[i] == "" {
				return auditTable{}, usageErrorf("-key %q: an empty column name", key)
			}
		}
	}
	ts, err := r.Targets(name)
	if err != nil {
		return auditTable{}, err
	}
	return auditTable{logic: name, keys: keys, columns: r.ShardingColumns(name), targets: ts}, nil
}

// open opens data source name once.
func (a *auditor) open(name string) error {
	if _, ok := a.dbs[name]; ok {
		return nil
	}
	ds, ok := a.dss[name]
	if !ok {
		return fmt.Errorf("data source %s is not among the rules' dataSources", name)
	}
	driver := sqlDriver(ds.Driver)
	if driver == "" || ds.DSN == "" {
		return fmt.Errorf("data source %s: audit needs a driver (pgx, mysql or sqlite) and a dsn", name)
	}
	db, err := sql.Open(driver, ds.DSN)
	if err != nil {
		return a.scrub(fmt.Errorf("data source %s (%s): %w", name, redactedDSN(ds), err))
	}
	db.SetMaxOpenConns(2)
	a.dbs[name] = db
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return a.scrub(fmt.Errorf("data source %s (%s): %w", name, redactedDSN(ds), err))
	}
	return nil
}

func sqlDriver(d string) string {
	switch d {
	case "pgx", "postgres":
		return "pgx"
	case "mysql":
		return "mysql"
	case "sqlite", "sqlite3":
		return "sqlite"
	}
	return ""
}

func (a *auditor) close() {
	for _, db := range a.dbs {
		db.Close()
	}
}

// scrub removes every data source's DSN and password from an error's
// text: a driver may quote either.
func (a *auditor) scrub(err error) error { return scrubDSNs(err, maps.Values(a.dss)) }

// scrubDSNs removes the DSN and the password of each of dss from err's
// text (audit and xa print driver errors, which may quote either).
func scrubDSNs(err error, dss iter.Seq[shardconf.DataSource]) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for ds := range dss {
		if ds.DSN != "" {
			msg = strings.ReplaceAll(msg, ds.DSN, redactedDSN(ds))
		}
		if pw := dsnPassword(ds); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// redactedDSN is ds's DSN without its password. A MySQL DSN is read as
// the driver reads it: its password ends at the last '@' before the
// address, so "app:p@ss@tcp(h)/db" hides all of "p@ss" (the first '@'
// would leave "ss" in the message).
func redactedDSN(ds shardconf.DataSource) string {
	if sqlDriver(ds.Driver) == "mysql" && !strings.Contains(ds.DSN, "://") {
		if c, err := mysql.ParseDSN(ds.DSN); err == nil {
			if c.Passwd != "" {
				c.Passwd = "xxxxx"
			}
			return c.FormatDSN()
		}
	}
	return ds.RedactedDSN()
}

// dsnPassword is the password a DSN holds, "" when none.
func dsnPassword(ds shardconf.DataSource) string {
	if u, err := url.Parse(ds.DSN); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		return pw
	}
	if sqlDriver(ds.Driver) == "mysql" {
		if c, err := mysql.ParseDSN(ds.DSN); err == nil {
			return c.Passwd
		}
	}
	for _, f := range strings.Fields(ds.DSN) {
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") {
			return strings.Trim(v, "'")
		}
	}
	return ""
}

// run audits every table.
func (a *auditor) run(ctx context.Context) (*auditReport, error) {
	rep := &auditReport{Clean: true, Tables: []*tableReport{}}
	for _, t := range a.tables {
		tr, err := a.auditTable(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t.logic, err)
		}
		rep.add(tr)
	}
	return rep, nil
}

// auditTable merges the key-ordered streams of t's physical tables: each
// row is routed, and a key at the head of several streams is a duplicate.
func (a *auditor) auditTable(ctx context.Context, t auditTable) (*tableReport, error) {
	tr := newTableReport(t, a.limit)
	streams, total, err := a.openStreams(ctx, t, tr)
	if err != nil {
		return nil, err
	}
	heap.Init(&streams)
	a.progress.start(t.logic, total)
	defer a.progress.done()
	var dup []*stream
	for len(streams) > 0 {
		dup = dup[:0]
		head := streams[0].row.key
		for len(streams) > 0 && streams[0].row.key.cmp(head) == 0 {
			dup = append(dup, heap.Pop(&streams).(*stream))
		}
		if len(dup) > 1 {
			tr.duplicate(head, dup)
		}
		for _, s := range dup {
			tr.check(a.r, s)
			a.progress.add(1)
			ok, err := s.next(ctx)
			if err != nil {
				return nil, err
			}
			if ok {
				heap.Push(&streams, s)
			}
		}
	}
	return tr, nil
}

// openStreams opens a key-ordered stream on each physical table of t,
// positioned at its first row (an empty table gives none), counting the
// rows whose key is NULL into tr and, for the progress bar, all rows.
func (a *auditor) openStreams(ctx context.Context, t auditTable, tr *tableReport) (streams streamHeap, total int64, err error) {
	streams = make(streamHeap, 0, len(t.targets))
	for i, tg := range t.targets {
		s, err := a.newStream(ctx, t, tg, i)
		if err != nil {
			return nil, 0, err
		}
		if tr.Physical[i].WithoutKey, err = s.countNullKeys(ctx); err != nil {
			return nil, 0, err
		}
		if a.progress != nil {
			n, err := s.count(ctx)
			if err != nil {
				return nil, 0, err
			}
			total += n
		}
		if ok, err := s.next(ctx); err != nil {
			return nil, 0, err
		} else if ok {
			streams = append(streams, s)
		}
	}
	return streams, total, nil
}

// ---- reading one physical table ----

// auditRow is one row as read: its key, and the sharding values in the
// order of auditTable.columns, normalized for routing.
type auditRow struct {
	key    rowKey
	values []any
}

// rowKey is a row's key: one part, or one per column of a composite key,
// compared part by part.
type rowKey []auditKey

func (k rowKey) cmp(o rowKey) int {
	for i := range k {
		if c := k[i].cmp(o[i]); c != 0 {
			return c
		}
	}
	return 0
}

// args is the key as query arguments, one per part.
func (k rowKey) args() []any {
	out := make([]any, len(k))
	for i, p := range k {
		out[i] = p.arg()
	}
	return out
}

func (k rowKey) String() string {
	if len(k) == 1 {
		return k[0].String()
	}
	parts := make([]string, len(k))
	for i, p := range k {
		parts[i] = p.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// stream reads one physical table in key order, a batch at a time.
type stream struct {
	idx      int // index of the physical table in auditTable.targets
	target   shardconf.Target
	db       *sql.DB
	dialect  string
	t        auditTable
	keyTypes []keyType // of each key column
	colTypes []string  // database type of each selected column: the key columns, then the sharding columns
	batch    int
	rows     []auditRow
	pos      int
	row      auditRow // the current row (valid after next returned true)
	last     []any    // the last key read, as query arguments (rowKey.args); nil before the first page
	started  bool
	ended    bool
}

// newStream probes the key column's type, which decides how keys are
// ordered and compared.
func (a *auditor) newStream(ctx context.Context, t auditTable, tg shardconf.Target, idx int) (*stream, error) {
	s := &stream{idx: idx, target: tg, db: a.dbs[tg.DataSource], dialect: dialectFor(a.dss[tg.DataSource].Driver),
		t: t, batch: a.batch}
	if err := s.resolveColumns(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", tg, err)
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE 1 = 0", s.selectList(), s.q(tg.Table))
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tg, err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tg, err)
	}
	for _, ct := range cts {
		s.colTypes = append(s.colTypes, strings.ToUpper(ct.DatabaseTypeName()))
	}
	for i, k := range t.keys {
		kt := keyTypeOf(s.dialect, s.colTypes[i])
		if kt == keyOther {
			return nil, fmt.Errorf("%s: key column %s has type %s; audit orders keys that are integers or text", tg, k, s.colTypes[i])
		}
		s.keyTypes = append(s.keyTypes, kt)
	}
	return s, rows.Err()
}

// resolveColumns names the key and sharding columns as the physical
// table spells them. Rule files match columns ignoring case (the router
// lower-cases sharding columns), while a quoted PostgreSQL name must match
// exactly: "ORDER_ID" or user_id for a column created as "userId" would
// not be found. The one column equal ignoring case is taken; two such
// columns ("userId" and userid) are an error, since the rules cannot say
// which one the application routes by.
func (s *stream) resolveColumns(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf("SELECT * FROM %s WHERE 1 = 0", s.q(s.target.Table)))
	if err != nil {
		return err
	}
	have, err := rows.Columns()
	rows.Close()
	if err != nil {
		return err
	}
	resolve := func(names []string) ([]string, error) {
		out := make([]string, len(names))
		for i, n := range names {
			var found []string
			for _, h := range have {
				if strings.EqualFold(h, n) {
					found = append(found, h)
				}
			}
			switch len(found) {
			case 0:
				return nil, fmt.Errorf("no column %s (the table has %s)", n, strings.Join(have, ", "))
			case 1:
				out[i] = found[0]
			default:
				return nil, fmt.Errorf("column %s is ambiguous: the table has %s", n, strings.Join(found, " and "))
			}
		}
		return out, nil
	}
	keys, err := resolve(s.t.keys)
	if err != nil {
		return err
	}
	cols, err := resolve(s.t.columns)
	if err != nil {
		return err
	}
	s.t.keys, s.t.columns = keys, cols
	return nil
}

func dialectFor(driver string) string {
	switch sqlDriver(driver) {
	case "pgx":
		return dialectPostgres
	case "mysql":
		return dialectMySQL
	}
	return dialectSQLite
}

func (s *stream) q(name string) string { return quoteIdent(name, s.dialect) }

// selectList is the key columns, then the sharding columns.
func (s *stream) selectList() string {
	var cols []string
	for _, k := range s.t.keys {
		cols = append(cols, s.q(k))
	}
	for _, c := range s.t.columns {
		cols = append(cols, s.q(c))
	}
	return strings.Join(cols, ", ")
}

// keyExpr is the key as ORDER BY and > compare it: text in the byte order
// of its UTF-8 form, the order Go compares the strings the driver returns
// in (a collation may sort 'a' and 'B' otherwise, and the merge and the
// keyset pages need both to agree). A MySQL column in another character
// set (latin1) is converted to utf8mb4 first: its own bytes sort 'é'
// (0xE9) above what Go holds ("\xc3\xa9"), so a page would restart at a
// key already read, or skip 'Á' after 'À'. A PostgreSQL uuid has no
// collation; it sorts as its bytes, which is the order of its text.
func (s *stream) keyExpr(i int) string {
	k := s.q(s.t.keys[i])
	if s.keyTypes[i] != keyText {
		return k
	}
	switch s.dialect {
	case dialectPostgres:
		if s.colTypes[i] == "UUID" {
			return k
		}
		return k + ` COLLATE "C"`
	case dialectMySQL:
		if t := baseType(s.colTypes[i]); t == "BINARY" || t == "VARBINARY" {
			return "CAST(" + k + " AS BINARY)"
		}
		return "CAST(CONVERT(" + k + " USING utf8mb4) AS BINARY)"
	}
	return k + " COLLATE BINARY"
}

// keyList is the key expressions, comma-separated: ORDER BY's list.
func (s *stream) keyList() string {
	parts := make([]string, len(s.t.keys))
	for i := range parts {
		parts[i] = s.keyExpr(i)
	}
	return strings.Join(parts, ", ")
}

// keyAbove is "key > the last key", a row-value comparison for a
// composite key ((a, b) > (?, ?), which PostgreSQL, MySQL and SQLite
// compare column by column).
func (s *stream) keyAbove() string {
	if len(s.t.keys) == 1 {
		return s.keyExpr(0) + " > " + s.placeholders(1)
	}
	return "(" + s.keyList() + ") > (" + s.placeholders(1) + ")"
}

// keyEquals is "key = the given key".
func (s *stream) keyEquals() string {
	parts := make([]string, len(s.t.keys))
	for i := range parts {
		parts[i] = s.keyExpr(i) + " = " + s.placeholder(i+1)
	}
	return strings.Join(parts, " AND ")
}

// keyNull is "some key column is NULL" (negated: every one is set).
func (s *stream) keyNull(null bool) string {
	parts := make([]string, len(s.t.keys))
	for i, k := range s.t.keys {
		parts[i] = s.q(k) + " IS NOT NULL"
		if null {
			parts[i] = s.q(k) + " IS NULL"
		}
	}
	if null {
		return strings.Join(parts, " OR ")
	}
	return strings.Join(parts, " AND ")
}

// placeholder is the n-th (from 1) query argument.
func (s *stream) placeholder(n int) string {
	if s.dialect == dialectPostgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// placeholders lists one per key column, numbered from n.
func (s *stream) placeholders(n int) string {
	parts := make([]string, len(s.t.keys))
	for i := range parts {
		parts[i] = s.placeholder(n + i)
	}
	return strings.Join(parts, ", ")
}

// next advances to the next row, reading a batch when the last is used up.
func (s *stream) next(ctx context.Context) (bool, error) {
	if s.pos >= len(s.rows) {
		if s.ended {
			return false, nil
		}
		if err := s.fetch(ctx); err != nil {
			return false, fmt.Errorf("%s: %w", s.target, err)
		}
		if len(s.rows) == 0 {
			return false, nil
		}
	}
	prev := s.row
	s.row = s.rows[s.pos]
	s.pos++
	if s.started && prev.key.cmp(s.row.key) == 0 {
		return false, fmt.Errorf("%s: %w", s.target, s.notUnique(s.row.key, 2))
	}
	s.started = true
	return true, nil
}

// fetch reads the batch after the last key. A full batch ending in a key
// that other rows share would let WHERE key > last skip them: that key is
// counted, and a key that is not unique is an error.
func (s *stream) fetch(ctx context.Context) error {
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", s.selectList(), s.q(s.target.Table), s.keyNull(false))
	var args []any
	if s.last != nil {
		q += " AND " + s.keyAbove()
		args = s.last
	}
	// The last key goes back as the typed value it was read as (keyArg),
	// never as the driver's raw form: MySQL's text protocol gives a BIGINT
	// as []byte, which a server may compare with the column as a double.
	q += fmt.Sprintf(" ORDER BY %s LIMIT %d", s.keyList(), s.batch)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	s.rows, s.pos = s.rows[:0], 0
	for rows.Next() {
		raw := make([]any, len(s.colTypes))
		ptrs := make([]any, len(raw))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		r, err := s.toRow(raw)
		if err != nil {
			return err
		}
		s.rows, s.last = append(s.rows, r), r.key.args()
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.ended = len(s.rows) < s.batch
	if !s.ended {
		if n, err := s.countKey(ctx, s.last); err != nil {
			return err
		} else if n > 1 {
			return s.notUnique(s.rows[len(s.rows)-1].key, n)
		}
	}
	return nil
}

func (s *stream) notUnique(k rowKey, n int64) error {
	what := "key column " + s.t.keys[0] + " is"
	if len(s.t.keys) > 1 {
		what = "key columns " + strings.Join(s.t.keys, ",") + " are"
	}
	return fmt.Errorf("%s not unique (%s appears %d times): give a unique column with -key (a,b for a composite key)",
		what, k, n)
}

func (s *stream) toRow(raw []any) (auditRow, error) {
	nk := len(s.t.keys)
	r := auditRow{key: make(rowKey, nk), values: make([]any, len(s.t.columns))}
	for i, kt := range s.keyTypes {
		k, err := keyOf(kt, raw[i])
		if err != nil {
			return auditRow{}, fmt.Errorf("key %s: %w", s.t.keys[i], err)
		}
		r.key[i] = k
	}
	for i := range s.t.columns {
		r.values[i] = columnValue(s.dialect, s.colTypes[nk+i], raw[nk+i])
	}
	return r, nil
}

func (s *stream) scalar(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", s.target, err)
	}
	return n, nil
}

func (s *stream) countKey(ctx context.Context, k []any) (int64, error) {
	return s.scalar(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s", s.q(s.target.Table), s.keyEquals()), k...)
}

func (s *stream) countNullKeys(ctx context.Context) (int64, error) {
	return s.scalar(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s", s.q(s.target.Table), s.keyNull(true)))
}

func (s *stream) count(ctx context.Context) (int64, error) {
	return s.scalar(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s", s.q(s.target.Table)))
}

// streamHeap orders streams by their current row's key.
type streamHeap []*stream

func (h streamHeap) Len() int { return len(h) }
func (h streamHeap) Less(i, j int) bool {
	if c := h[i].row.key.cmp(h[j].row.key); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h streamHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *streamHeap) Push(x any)   { *h = append(*h, x.(*stream)) }
func (h *streamHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// ---- keys and values ----

type keyType uint8

const (
	keyOther keyType = iota
	keyInt
	keyText
)

// baseType is a database type name without UNSIGNED and a size.
func baseType(t string) string {
	t = strings.TrimSpace(strings.TrimPrefix(t, "UNSIGNED "))
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t
}

// keyTypeOf classifies a column's database type name.
func keyTypeOf(dialect, t string) keyType {
	t = baseType(t)
	if isIntegerType(dialect, t) {
		return keyInt
	}
	switch t {
	case "TEXT", "VARCHAR", "CHAR", "BPCHAR", "NAME", "UUID", "BINARY", "VARBINARY", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "CHARACTER VARYING", "CHARACTER":
		return keyText
	}
	if dialect == dialectSQLite && (strings.Contains(t, "CHAR") || strings.Contains(t, "TEXT") || strings.Contains(t, "CLOB")) {
		return keyText
	}
	return keyOther
}

// isIntegerType reports an integer column type; SQLite gives any declared
// type containing INT integer affinity.
func isIntegerType(dialect, t string) bool {
	t = baseType(t)
	if dialect == dialectSQLite {
		return strings.Contains(t, "INT")
	}
	switch t {
	case "INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "MEDIUMINT", "INT2", "INT4", "INT8":
		return true
	}
	return false
}

// auditKey is a key as the merge compares it: an integer (n, or u above
// int64) or text in byte order.
type auditKey struct {
	isInt bool
	above bool // u holds an integer above int64
	n     int64
	u     uint64
	s     string
}

func (k auditKey) cmp(o auditKey) int {
	switch {
	case k.isInt != o.isInt: // one table's key is text, another's an integer
		if k.isInt {
			return -1
		}
		return 1
	case !k.isInt:
		return strings.Compare(k.s, o.s)
	case k.above != o.above:
		if k.above {
			return 1
		}
		return -1
	case k.above:
		return cmpInt(k.u, o.u)
	}
	return cmpInt(k.n, o.n)
}

func cmpInt[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arg is the key as a query argument: an integer as int64 or uint64, text
// as a string.
func (k auditKey) arg() any {
	switch {
	case !k.isInt:
		return k.s
	case k.above:
		return k.u
	}
	return k.n
}

func (k auditKey) String() string {
	switch {
	case !k.isInt:
		return k.s
	case k.above:
		return strconv.FormatUint(k.u, 10)
	}
	return strconv.FormatInt(k.n, 10)
}

func keyOf(t keyType, v any) (auditKey, error) {
	if t == keyText {
		return auditKey{s: textOf(v)}, nil
	}
	switch x := v.(type) {
	case int64:
		return auditKey{isInt: true, n: x}, nil
	case uint64:
		if x > 1<<63-1 {
			return auditKey{isInt: true, above: true, u: x}, nil
		}
		return auditKey{isInt: true, n: int64(x)}, nil
	}
	s := textOf(v)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return auditKey{isInt: true, n: n}, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return auditKey{isInt: true, above: true, u: u}, nil
	}
	return auditKey{}, fmt.Errorf("%q (%T) is not an integer", s, v)
}

func textOf(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case [16]byte: // a PostgreSQL uuid: its text form sorts as its bytes
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:])
	}
	return fmt.Sprint(v)
}

// decimalText is a number as a DECIMAL or NUMERIC column spells it (not
// NaN; SQLite may also hold any text there, which stays text).
var decimalText = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// columnValue is a sharding column's value as an application would pass
// it, the same whichever protocol read it: an integer column's value as an
// integer (MySQL's text protocol, used for a page read without arguments,
// gives []byte where later pages get int64), a float column's as the
// float the binary protocol gives, a DECIMAL or NUMERIC as the number it
// spells (json.Number, read exactly: 5.00 is the integer 5, 5.50 a
// fraction no algorithm routes; pgx and MySQL give its text), text as a
// string, anything else as the driver gave it.
func columnValue(dialect, dbType string, v any) any {
	var s string
	switch x := v.(type) {
	case []byte:
		s = string(x)
	case string:
		s = x
	default:
		return v
	}
	switch t := baseType(dbType); {
	case isIntegerType(dialect, t):
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u
		}
	case (t == "DECIMAL" || t == "NUMERIC") && decimalText.MatchString(s):
		return json.Number(s)
	case dialect == dialectMySQL && t == "FLOAT":
		if f, err := strconv.ParseFloat(s, 32); err == nil {
			return float32(f)
		}
	case dialect == dialectMySQL && (t == "DOUBLE" || t == "REAL"):
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}

// ---- the report ----

type auditReport struct {
	Clean  bool           `json:"clean"`
	Tables []*tableReport `json:"tables"`
	Totals auditCounts    `json:"totals"`
}

type auditCounts struct {
	Rows                 int64 `json:"rows"`
	Misplaced            int64 `json:"misplaced"`
	MissingShardingValue int64 `json:"missingShardingValue"`
	Unroutable           int64 `json:"unroutable"`
	DuplicateKeys        int64 `json:"duplicateKeys"`
	WithoutKey           int64 `json:"withoutKey"`
}

func (c *auditCounts) plus(o auditCounts) {
	c.Rows += o.Rows
	c.Misplaced += o.Misplaced
	c.MissingShardingValue += o.MissingShardingValue
	c.Unroutable += o.Unroutable
	c.DuplicateKeys += o.DuplicateKeys
	c.WithoutKey += o.WithoutKey
}

func (c auditCounts) findings() int64 {
	return c.Misplaced + c.MissingShardingValue + c.Unroutable + c.DuplicateKeys + c.WithoutKey
}

type physicalReport struct {
	DataSource string `json:"dataSource"`
	Table      string `json:"table"`
	auditCounts
}

type rowFinding struct {
	DataSource  string             `json:"dataSource"`
	Table       string             `json:"table"`
	Key         string             `json:"key"`
	Values      map[string]*string `json:"values"`
	RoutesTo    []string           `json:"routesTo,omitempty"`
	NullColumns []string           `json:"nullColumns,omitempty"`
	Error       string             `json:"error,omitempty"`
}

type dupFinding struct {
	Key    string   `json:"key"`
	Tables []string `json:"tables"`
}

type tableReport struct {
	Logic           string           `json:"logicTable"`
	KeyColumn       string           `json:"keyColumn"`
	ShardingColumns []string         `json:"shardingColumns"`
	Physical        []physicalReport `json:"physicalTables"`
	Misplaced       []rowFinding     `json:"misplaced"`
	Missing         []rowFinding     `json:"missingShardingValue"`
	Unroutable      []rowFinding     `json:"unroutable"`
	Duplicates      []dupFinding     `json:"duplicateKeys"`
	Truncated       bool             `json:"truncated"`

	limit   int
	columns []string
	dupKeys int64
}

func newTableReport(t auditTable, limit int) *tableReport {
	tr := &tableReport{Logic: t.logic, KeyColumn: strings.Join(t.keys, ","), ShardingColumns: t.columns, Misplaced: []rowFinding{},
		Missing: []rowFinding{}, Unroutable: []rowFinding{}, Duplicates: []dupFinding{}, limit: limit, columns: t.columns}
	for _, tg := range t.targets {
		tr.Physical = append(tr.Physical, physicalReport{DataSource: tg.DataSource, Table: tg.Table})
	}
	return tr
}

// room reports whether one more finding may be listed.
func (tr *tableReport) room(n int) bool {
	if tr.limit == 0 || n < tr.limit {
		return true
	}
	tr.Truncated = true
	return false
}

// check routes the current row of s by every sharding column.
func (tr *tableReport) check(r *shardconf.Router, s *stream) {
	p := &tr.Physical[s.idx]
	p.Rows++
	row := s.row
	f := rowFinding{DataSource: s.target.DataSource, Table: s.target.Table, Key: row.key.String(), Values: map[string]*string{}}
	conds := make([]shardconf.Cond, 0, len(tr.columns))
	for i, c := range tr.columns {
		v := row.values[i]
		if v == nil {
			f.Values[c] = nil
			f.NullColumns = append(f.NullColumns, c)
			continue
		}
		text := textOf(v)
		f.Values[c] = &text
		conds = append(conds, shardconf.Eq(c, v))
	}
	if len(f.NullColumns) > 0 {
		p.MissingShardingValue++
		if tr.room(len(tr.Missing)) {
			tr.Missing = append(tr.Missing, f)
		}
		return
	}
	ts, err := r.Route(tr.Logic, conds...)
	switch {
	case err != nil:
		p.Unroutable++
		f.Error = err.Error()
		if tr.room(len(tr.Unroutable)) {
			tr.Unroutable = append(tr.Unroutable, f)
		}
	case !slices.Contains(ts, s.target):
		p.Misplaced++
		for _, t := range ts {
			f.RoutesTo = append(f.RoutesTo, t.String())
		}
		if tr.room(len(tr.Misplaced)) {
			tr.Misplaced = append(tr.Misplaced, f)
		}
	}
}

// duplicate records a key found in several physical tables.
func (tr *tableReport) duplicate(k rowKey, in []*stream) {
	tr.dupKeys++
	d := dupFinding{Key: k.String()}
	for _, s := range in {
		tr.Physical[s.idx].DuplicateKeys++
		d.Tables = append(d.Tables, s.target.String())
	}
	slices.Sort(d.Tables)
	if tr.room(len(tr.Duplicates)) {
		tr.Duplicates = append(tr.Duplicates, d)
	}
}

// counts sums the physical tables; a duplicate key counts once.
func (tr *tableReport) counts() auditCounts {
	var c auditCounts
	for _, p := range tr.Physical {
		c.plus(p.auditCounts)
	}
	c.DuplicateKeys = tr.dupKeys
	return c
}

func (rep *auditReport) add(tr *tableReport) {
	c := tr.counts()
	rep.Totals.plus(c)
	if c.findings() > 0 {
		rep.Clean = false
	}
	rep.Tables = append(rep.Tables, tr)
}

func (rep *auditReport) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOGIC TABLE\tDATA SOURCE\tTABLE\tROWS\tMISPLACED\tNO VALUE\tUNROUTABLE\tDUPLICATE KEYS\tNO KEY")
	for _, t := range rep.Tables {
		for _, p := range t.Physical {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", t.Logic, p.DataSource, p.Table, p.Rows,
				p.Misplaced, p.MissingShardingValue, p.Unroutable, p.DuplicateKeys, p.WithoutKey)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range rep.Tables {
		t.writeFindings(w)
	}
	c := rep.Totals
	if rep.Clean {
		_, err := fmt.Fprintf(w, "\nclean: %d rows in %d logic tables, every row where its sharding values route\n", c.Rows, len(rep.Tables))
		return err
	}
	_, err := fmt.Fprintf(w, "\nfound: %d misplaced, %d without a sharding value, %d unroutable, %d keys in several tables, %d without a key (%d rows read)\n",
		c.Misplaced, c.MissingShardingValue, c.Unroutable, c.DuplicateKeys, c.WithoutKey, c.Rows)
	return err
}

func (tr *tableReport) writeFindings(w io.Writer) {
	for _, f := range tr.Misplaced {
		fmt.Fprintf(w, "misplaced   %s %s.%s %s=%s (%s) routes to %s\n", tr.Logic, f.DataSource, f.Table, tr.KeyColumn, f.Key,
			tr.valueText(f), strings.Join(f.RoutesTo, ", "))
	}
	for _, f := range tr.Missing {
		fmt.Fprintf(w, "no value    %s %s.%s %s=%s: %s NULL\n", tr.Logic, f.DataSource, f.Table, tr.KeyColumn, f.Key,
			strings.Join(f.NullColumns, ", "))
	}
	for _, f := range tr.Unroutable {
		fmt.Fprintf(w, "unroutable  %s %s.%s %s=%s (%s): %s\n", tr.Logic, f.DataSource, f.Table, tr.KeyColumn, f.Key, tr.valueText(f), f.Error)
	}
	for _, d := range tr.Duplicates {
		fmt.Fprintf(w, "duplicate   %s %s=%s in %s\n", tr.Logic, tr.KeyColumn, d.Key, strings.Join(d.Tables, ", "))
	}
	for _, p := range tr.Physical {
		if p.WithoutKey > 0 {
			fmt.Fprintf(w, "no key      %s %s.%s: %d rows with %s NULL\n", tr.Logic, p.DataSource, p.Table, p.WithoutKey, tr.KeyColumn)
		}
	}
	if tr.Truncated {
		fmt.Fprintf(w, "(%s: more findings than -limit %d; the counts above are complete)\n", tr.Logic, tr.limit)
	}
}

func (tr *tableReport) valueText(f rowFinding) string {
	parts := make([]string, 0, len(tr.columns))
	for _, c := range tr.columns {
		v := "NULL"
		if p := f.Values[c]; p != nil {
			v = *p
		}
		parts = append(parts, c+"="+v)
	}
	return strings.Join(parts, " ")
}

// ---- progress ----

// progress draws a one-line bar on a terminal; nil draws nothing (every
// method accepts a nil receiver).
type progress struct {
	w      io.Writer
	table  string
	n, all int64
	last   time.Time
}

// newProgress returns a bar on f when f is a terminal (a character
// device), else nil.
func newProgress(f *os.File) *progress {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 || os.Getenv("TERM") == "dumb" {
		return nil
	}
	return &progress{w: f}
}

func (p *progress) start(table string, total int64) {
	if p == nil {
		return
	}
	p.table, p.n, p.all, p.last = table, 0, total, time.Time{}
	p.draw()
}

func (p *progress) add(n int64) {
	if p == nil {
		return
	}
	p.n += n
	if time.Since(p.last) >= 100*time.Millisecond {
		p.draw()
	}
}

func (p *progress) draw() {
	p.last = time.Now()
	const width = 30
	frac := 1.0
	if p.all > 0 {
		frac = min(float64(p.n)/float64(p.all), 1)
	}
	fill := int(frac * width)
	fmt.Fprintf(p.w, "\r\033[Kaudit %s [%s%s] %d/%d rows", p.table, strings.Repeat("#", fill), strings.Repeat(".", width-fill), p.n, p.all)
}

func (p *progress) done() {
	if p == nil {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}
