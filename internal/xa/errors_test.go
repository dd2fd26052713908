package xa

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

type stateErr struct{ state, msg string }

func (e stateErr) Error() string    { return e.msg }
func (e stateErr) SQLState() string { return e.state }

func TestClassifyReadsSQLStatesAndMySQLNumbersWithoutDrivers(t *testing.T) {
	cases := []struct {
		err  error
		want errKind
	}{
		{stateErr{"42704", `prepared transaction with identifier "x" does not exist`}, errGone},
		{fmt.Errorf("wrapped: %w", stateErr{"42704", "does not exist"}), errGone},
		{stateErr{"55000", `prepared transaction with identifier "x" is busy`}, errBusy},
		{stateErr{"55000", `prepared transaction belongs to another database`}, errOther},
		{stateErr{"23505", `duplicate key value violates unique constraint`}, errDuplicate},
		{stateErr{"40001", "could not serialize access"}, errOther},
		{errors.New(`ERROR: prepared transaction with identifier "x" does not exist (SQLSTATE 42704)`), errGone},
		{errors.New(`ERROR: duplicate key value (SQLSTATE 23505)`), errDuplicate},
		{errors.New("Error 1397 (XAE04): XAER_NOTA: Unknown XID"), errGone},
		{errors.New("Error 1397: XAER_NOTA: Unknown XID"), errGone},
		{errors.New("Error 1062 (23000): Duplicate entry 'x' for key 'PRIMARY'"), errDuplicate},
		{errors.New("Error 1399 (XAE07): XAER_RMFAIL"), errOther},
		{errors.New("Error 1402 (XA100): XA_RBROLLBACK: Transaction branch was rolled back"), errRolledBack},
		{errors.New("Error 1614 (XA102): XA_RBDEADLOCK: Transaction branch was rolled back: deadlock was detected"), errRolledBack},
		{errors.New("Error 1613 (XA106): XA_RBTIMEOUT: Transaction branch was rolled back: took too long"), errRolledBack},
		{stateErr{"42P01", `relation "x" does not exist`}, errNoTable},
		{errors.New("Error 1146 (42S02): Table 'db.x' doesn't exist"), errNoTable},
		{errors.New("Error 13970: something else"), errOther},
		{errors.New("driver: bad connection"), errOther},
		{nil, errOther},
	}
	for _, tc := range cases {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestInDoubtErrorMatchesErrInDoubtAndUnwrapsItsCause(t *testing.T) {
	cause := errors.New("connection reset")
	err := fmt.Errorf("commit: %w", &InDoubtError{GTRID: "g", Decided: true, Committed: []string{"a"}, Pending: []string{"b"}, Err: cause})
	var ide *InDoubtError
	if !errors.Is(err, ErrInDoubt) || !errors.Is(err, cause) || !errors.As(err, &ide) || ide.Pending[0] != "b" {
		t.Fatalf("%v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "pending [b]") || !strings.Contains(msg, "committed [a]") {
		t.Errorf("message: %s", msg)
	}
	rolled := fmt.Errorf("%w: %w", ErrRolledBack, errors.New("prepare failed"))
	if errors.Is(rolled, ErrInDoubt) || errors.Is(rolled, ErrUnavailable) {
		t.Error("a rolled-back commit matches ErrInDoubt or ErrUnavailable")
	}
	if errors.Is(&UnavailableError{Source: "s"}, ErrInDoubt) || !errors.Is(&UnavailableError{Source: "s"}, ErrUnavailable) {
		t.Error("UnavailableError matching")
	}
}

func TestIsLostTellsErrorsThatLeaveAStatementsOutcomeUnknown(t *testing.T) {
	lost := []error{context.DeadlineExceeded, fmt.Errorf("x: %w", context.Canceled), driver.ErrBadConn, io.ErrUnexpectedEOF,
		errors.New("invalid connection"), errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"),
		errors.New("Error 1927 (70100): Connection was killed"), errors.New("Error 2013: Lost connection to server during query")}
	for _, err := range lost {
		if !isLost(err) {
			t.Errorf("isLost(%v) = false", err)
		}
	}
	for _, err := range []error{errors.New("ERROR: could not serialize access (SQLSTATE 40001)"), errors.New("Error 1614 (XA102): XA_RBDEADLOCK")} {
		if isLost(err) {
			t.Errorf("isLost(%v) = true", err)
		}
	}
}
