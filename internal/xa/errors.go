package xa

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/internal/dialect"
)

// ErrInDoubt is matched (errors.Is) by an *InDoubtError: Commit could not
// tell whether every branch committed. sqlhook and gormplugin re-export it
// as ErrTxInDoubt.
var ErrInDoubt = errors.New("shardkey: two-phase commit outcome in doubt")

// ErrUnavailable is matched by an *UnavailableError: a data source cannot
// take part in a two-phase commit. Re-exported as ErrTwoPhaseUnavailable.
var ErrUnavailable = errors.New("shardkey: two-phase commit unavailable")

// Other sentinels of this package.
var (
	// ErrInvalidConfig is wrapped by New's errors.
	ErrInvalidConfig = errors.New("shardkey: invalid two-phase commit configuration")
	// ErrNoLog is wrapped by Attach's error when the decision log table or
	// its id is missing: nothing prepared can be this deployment's.
	ErrNoLog = errors.New("shardkey: two-phase commit decision log not found")
	// ErrLogIDLost is wrapped by Start's error when the decision log has
	// rows but its id row is gone (see Start).
	ErrLogIDLost = errors.New("shardkey: two-phase commit decision log lost its id")
	// ErrNotStarted is returned by NewTx before Start succeeded.
	ErrNotStarted = errors.New("shardkey: two-phase commit coordinator not started")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("shardkey: two-phase commit coordinator closed")
	// ErrRolledBack is wrapped by Commit's error when the transaction was
	// rolled back on every branch instead of committed (a prepare failed,
	// the transaction outlived Timeout, or recovery aborted it first). It
	// never matches ErrInDoubt: nothing was committed.
	ErrRolledBack = errors.New("shardkey: two-phase commit rolled back")
	// ErrTxDone is returned by a second Commit or Rollback of one Tx.
	ErrTxDone = errors.New("shardkey: two-phase transaction already ended")
)

// InDoubtError says Commit could not finish: some branches may be
// committed and others still prepared. Decided tells whether the commit
// decision was logged: if it was, recovery commits the Pending branches;
// if it was not (the log write's outcome is unknown), recovery commits
// them when the log row exists and rolls them back after Timeout when it
// does not. Either way every branch ends the same way; the caller cannot
// know which way yet.
type InDoubtError struct {
	GTRID     string
	Decided   bool
	Committed []string // data sources whose branch is known committed
	Pending   []string // data sources whose branch may still be prepared
	Err       error    // the failure that left the outcome open
}

func (e *InDoubtError) Error() string {
	state := "commit decided, recovery will commit the pending branches"
	if !e.Decided {
		state = "commit decision not known to be logged, recovery will settle every branch one way"
	}
	return fmt.Sprintf("%s: transaction %s (%s; committed [%s], pending [%s]): %v",
		ErrInDoubt, e.GTRID, state, strings.Join(e.Committed, ","), strings.Join(e.Pending, ","), e.Err)
}

// Is makes errors.Is(err, ErrInDoubt) true.
func (e *InDoubtError) Is(target error) bool { return target == ErrInDoubt }

// Unwrap returns the underlying failure.
func (e *InDoubtError) Unwrap() error { return e.Err }

// UnavailableError says data source Source cannot take part in a
// two-phase commit, and why (Reason tells the fix when there is one).
type UnavailableError struct {
	Source  string
	Dialect dialect.Name
	Reason  string
}

func (e *UnavailableError) Error() string {
	d := string(e.Dialect)
	if d == "" {
		d = "unknown dialect"
	}
	return fmt.Sprintf("%s: data source %q (%s): %s", ErrUnavailable, e.Source, d, e.Reason)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}
