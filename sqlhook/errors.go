package sqlhook

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// Sentinel errors. Test with errors.Is; routing failures also match the
// shardconf sentinels (shardconf.ErrMissingShardingKey, ErrNoRoute, ...).
var (
	// ErrUnsupported: the statement references a logic table in a way the
	// router cannot place or merge safely (a subquery on a sharded table, a
	// JOIN of unbound sharded tables, an aggregate inside an expression
	// across shards, ...). Nothing was sent to any database, except for
	// refusals of a merge that depend on the values read (text under a
	// collation the merge cannot reproduce, too many groups), which come
	// from Query or Next.
	ErrUnsupported = ir.ErrUnsupported
	// ErrParse: the statement references a logic table but does not parse
	// in the connector's dialect.
	ErrParse = ir.ErrParse
	// ErrCrossSourceTx: a transaction would reach a second data source and
	// neither WithTwoPhaseCommit nor WithMultiSourceTx was given, or
	// WithTwoPhaseCommit was and one of the data sources cannot prepare a
	// transaction (SQLite; the error then matches ErrTwoPhaseUnavailable
	// too). Nothing was sent for the statement.
	ErrCrossSourceTx = errors.New("sqlhook: transaction spans data sources")
	// ErrDialectNotRegistered: the data sources speak a dialect whose
	// compiler the program does not link: it imports none of
	// github.com/shardkey/shardkey/sqlhook/postgres, .../sqlhook/mysql,
	// .../sqlhook/sqlite for it. Open and OpenWith return it, and every
	// Connect of a Wrap connector, before anything runs; the error is a
	// *DialectNotRegisteredError naming the import to add.
	ErrDialectNotRegistered = errors.New("sqlhook: no compiler registered for the SQL dialect")
	// ErrDataSource: a data source is unknown, misconfigured or cannot be
	// opened.
	ErrDataSource = errors.New("sqlhook: data source")
)

// StatementError is a failure to route one statement; it wraps the cause
// (ErrUnsupported, ErrParse, a shardconf routing error, ...).
type StatementError struct {
	SQL string // the statement as the caller wrote it
	Err error
}

func (e *StatementError) Error() string {
	sql := e.SQL
	if len(sql) > 200 {
		sql = sql[:200] + "..."
	}
	return fmt.Sprintf("%v (statement %q)", e.Err, sql)
}

func (e *StatementError) Unwrap() error { return e.Err }

// DialectNotRegisteredError is ErrDialectNotRegistered for one dialect:
// its Error names the blank import that registers the dialect's compiler.
type DialectNotRegisteredError struct {
	Dialect Dialect
}

// dialectImports is the package that registers each dialect's compiler.
var dialectImports = map[Dialect]string{
	PostgreSQL: "github.com/shardkey/shardkey/sqlhook/postgres",
	MySQL:      "github.com/shardkey/shardkey/sqlhook/mysql",
	SQLite:     "github.com/shardkey/shardkey/sqlhook/sqlite",
}

// Import is the import declaration that registers e.Dialect's compiler,
// such as `import _ "github.com/shardkey/shardkey/sqlhook/postgres"`.
func (e *DialectNotRegisteredError) Import() string {
	return fmt.Sprintf("import _ %q", dialectImports[e.Dialect])
}

func (e *DialectNotRegisteredError) Error() string {
	return fmt.Sprintf("%v: %v statements need its compiler linked in: add %s beside the driver's import",
		ErrDialectNotRegistered, e.Dialect, e.Import())
}

// Is makes errors.Is(err, ErrDialectNotRegistered) true.
func (e *DialectNotRegisteredError) Is(target error) bool { return target == ErrDialectNotRegistered }

// PartialCommitError reports a commit or rollback of a transaction that
// spanned several data sources (allowed by WithMultiSourceTx) where some
// data sources succeeded and others failed. Such a transaction is not
// atomic: the Committed data sources keep their changes. It never comes
// with WithTwoPhaseCommit (see ErrTxInDoubt).
type PartialCommitError struct {
	Op        string           // "commit" or "rollback"
	Committed []string         // data sources where Op succeeded
	Failed    map[string]error // data source -> its error
}

func (e *PartialCommitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sqlhook: %s failed on", e.Op)
	for _, ds := range ir.SortedKeys(e.Failed) {
		fmt.Fprintf(&b, " %s (%v)", ds, e.Failed[ds])
	}
	if len(e.Committed) > 0 {
		fmt.Fprintf(&b, "; succeeded on %s", strings.Join(e.Committed, ", "))
	}
	return b.String()
}

// Unwrap returns the data sources' errors.
func (e *PartialCommitError) Unwrap() []error {
	var errs []error
	for _, ds := range ir.SortedKeys(e.Failed) {
		errs = append(errs, e.Failed[ds])
	}
	return errs
}
