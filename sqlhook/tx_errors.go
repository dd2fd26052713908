package sqlhook

import (
	"errors"

	"github.com/shardkey/shardkey/internal/xa"
)

// Sentinels of the transaction and session layer (test with errors.Is).
var (
	// ErrTxAborted: the transaction can no longer be used. A savepoint
	// statement succeeded on some of its data sources and failed on
	// others, a ROLLBACK TO failed in a transaction that may span data
	// sources, replaying the savepoints to a data source that joined late
	// failed, or a statement ran on some of its units and failed on the
	// next (until a ROLLBACK TO undoes it). Every later statement fails
	// with it and Commit rolls everything back and returns it: committing
	// would keep work the application undid, or part of a statement.
	ErrTxAborted = errors.New("sqlhook: transaction aborted")
	// ErrSessionState: on a connection with several data sources, the
	// statement changes or depends on per-connection state that sqlhook
	// cannot keep the same on every data source (a temporary table, USE, a
	// user variable assigned outside SET, LAST_INSERT_ID(), ...). Nothing
	// was sent. It also matches ErrUnsupported. With one data source as
	// with several, it refuses a change to how the server reads later
	// statements (sql_mode ANSI_QUOTES or NO_BACKSLASH_ESCAPES, a GBK or
	// SJIS client character set, standard_conforming_strings off):
	// sqlhook would read their text differently from the server.
	ErrSessionState = errors.New("sqlhook: session state across data sources")
	// ErrTxInDoubt: with WithTwoPhaseCommit, Commit failed and the outcome
	// is not known to be a rollback: the decision to commit may have been
	// logged, and some data sources may have committed. The error is a
	// *TxInDoubtError: if Decided, recovery commits what is left; if
	// not, recovery commits or rolls back according to the log (rolls
	// back if nothing was logged). Any other Commit error means every
	// data source rolled back.
	ErrTxInDoubt = xa.ErrInDoubt
	// ErrTwoPhaseUnavailable: WithTwoPhaseCommit cannot commit across
	// these data sources: a SQLite data source (SQLite cannot prepare a
	// transaction), or a PostgreSQL server whose max_prepared_transactions
	// is 0. A statement that would take a transaction to a second data
	// source that cannot prepare is refused before it runs, with an error
	// matching both ErrCrossSourceTx and ErrTwoPhaseUnavailable.
	ErrTwoPhaseUnavailable = xa.ErrUnavailable
)

// TxInDoubtError is ErrTxInDoubt with the details: the transaction's
// global id (GTRID), whether the commit decision was logged (Decided),
// the data sources known to have committed (Committed) and those whose
// outcome is pending (Pending), and the cause (Err).
type TxInDoubtError = xa.InDoubtError

// sessionStateError is a refusal matching ErrSessionState and
// ErrUnsupported.
type sessionStateError struct{ why string }

func (e *sessionStateError) Error() string { return ErrSessionState.Error() + ": " + e.why }

func (e *sessionStateError) Is(target error) bool {
	return target == ErrSessionState || target == ErrUnsupported
}
