package xa

import (
	"context"
	"fmt"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// BranchID names one branch: a transaction's GTRID on a data source.
type BranchID struct {
	Source string
	GTRID  string
}

// InDoubt is a prepared branch of ours found on a data source. Decision
// is "commit" or "rollback" when the log has one, "" otherwise.
type InDoubt struct {
	Source   string
	GTRID    string
	Age      time.Duration
	Decision string
}

// Report is what one Recover did. A branch that was gone or busy when
// recovery acted was resolved by someone else and is in no list.
type Report struct {
	Committed  []BranchID
	RolledBack []BranchID
	Left       []InDoubt // undecided and younger than Timeout
	Errors     []error   // per data source or branch; recovery went on
}

// found is a prepared branch of ours and its transaction's birth time.
type found struct {
	BranchID
	born time.Time
}

// ready returns the logtag, or why the coordinator cannot act.
func (c *Coordinator) ready() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", ErrClosed
	}
	if c.tag == "" {
		return "", ErrNotStarted
	}
	return c.tag, nil
}

// Recover settles the prepared branches of ours on every 2PC data source:
// commit when the log says C, roll back when it says A, log A and roll
// back when undecided and older than Timeout, leave younger ones. Safe to
// run from many goroutines and processes at once: every decision is one
// row under a primary key, and a branch is finished by one of them.
func (c *Coordinator) Recover(ctx context.Context) (Report, error) {
	tag, err := c.ready()
	if err != nil {
		return Report{}, err
	}
	fs, errs := c.listAll(ctx, tag)
	rep := Report{Errors: errs}
	srcs := map[string][]string{}
	for _, f := range fs {
		srcs[f.GTRID] = append(srcs[f.GTRID], f.Source)
	}
	outcomes := map[string]byte{}
	for _, f := range fs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		o, err := c.outcomeFor(ctx, f, outcomes, srcs[f.GTRID])
		switch {
		case err != nil:
			rep.Errors = append(rep.Errors, err)
		case o == 0 || c.tooYoung(f):
			rep.Left = append(rep.Left, InDoubt{Source: f.Source, GTRID: f.GTRID, Age: c.now().Sub(f.born), Decision: decisionName(o)})
		default:
			c.act(ctx, f, o, &rep)
		}
	}
	return rep, nil
}

// tooYoung: a MySQL branch is finished by recovery only once its
// transaction is older than Timeout, whatever the decision. MariaDB 10.11
// can report an XA COMMIT from another session as done without doing it
// when it lands while the owning session disconnects (the transaction is
// left a zombie holding its locks); by then the coordinator, and its
// sessions, are long gone.
func (c *Coordinator) tooYoung(f found) bool {
	return c.sources[f.Source].Dialect == dialect.MySQL && c.now().Sub(f.born) <= c.timeout
}

func decisionName(o byte) string { return map[byte]string{'C': "commit", 'A': "rollback"}[o] }

// outcomeFor returns the log's outcome for f's transaction, writing A when
// there is none and the transaction is past Timeout; 0 means leave it.
func (c *Coordinator) outcomeFor(ctx context.Context, f found, cache map[string]byte, srcs []string) (byte, error) {
	if o, ok := cache[f.GTRID]; ok {
		return o, nil
	}
	o, ok, err := c.readDecision(ctx, f.GTRID)
	if err != nil {
		return 0, err
	}
	if !ok {
		if c.now().Sub(f.born) <= c.timeout {
			return 0, nil
		}
		if o, err = c.writeDecision(ctx, f.GTRID, 'A', srcs); err != nil {
			return 0, err
		}
	}
	cache[f.GTRID] = o
	return o, nil
}

// act commits (o == 'C') or rolls back f's branch through its pool.
func (c *Coordinator) act(ctx context.Context, f found, o byte, rep *Report) {
	s := c.sources[f.Source]
	q := finishSQL(s.Dialect, f.GTRID, f.Source, o == 'C')
	err := poolExec(ctx, s, q)
	k := classify(err)
	if o == 'A' && k == errRolledBack {
		err, k = nil, errOther // rolled back, as decided
	}
	switch {
	case k == errRolledBack:
		// A C-decided branch rolled back by the server: never taken as
		// committed (MariaDB does so to a prepared branch that wrote
		// nothing, which is harmless, but it cannot tell us that).
		err = fmt.Errorf("xa recovery: %s on data source %q: the server rolled the branch of a committed transaction back: %w", q, f.Source, err)
		rep.Errors = append(rep.Errors, err)
		c.logger.Error("xa recovery", "err", err)
	case err == nil && o == 'C':
		rep.Committed = append(rep.Committed, f.BranchID)
		c.logger.Info("xa recovery: committed a prepared branch", "source", f.Source, "gtrid", f.GTRID)
	case err == nil:
		rep.RolledBack = append(rep.RolledBack, f.BranchID)
		c.logger.Info("xa recovery: rolled back a prepared branch", "source", f.Source, "gtrid", f.GTRID)
	case k == errGone || k == errBusy:
		// Finished, or being finished, by another recoverer or its coordinator.
		c.logger.Debug("xa recovery: branch finished elsewhere", "source", f.Source, "gtrid", f.GTRID, "err", err)
	default:
		rep.Errors = append(rep.Errors, fmt.Errorf("xa recovery: %s on data source %q: %w", q, f.Source, err))
	}
}

// List returns the prepared branches of ours, with the log's decisions;
// it changes nothing. A log table that does not exist holds no decision.
func (c *Coordinator) List(ctx context.Context) ([]InDoubt, error) {
	tag, err := c.ready()
	if err != nil {
		return nil, err
	}
	fs, errs := c.listAll(ctx, tag)
	out := make([]InDoubt, 0, len(fs))
	for _, f := range fs {
		o, _, err := c.readDecision(ctx, f.GTRID)
		if err != nil && classify(err) != errNoTable {
			errs = append(errs, err)
		}
		out = append(out, InDoubt{Source: f.Source, GTRID: f.GTRID, Age: c.now().Sub(f.born), Decision: decisionName(o)})
	}
	return out, errorsJoin(errs)
}

// listAll lists the prepared branches of ours on every 2PC data source.
func (c *Coordinator) listAll(ctx context.Context, tag string) ([]found, []error) {
	var fs []found
	var errs []error
	for _, name := range c.order {
		s := c.sources[name]
		if !twoPhase(s.Dialect) {
			continue
		}
		got, err := c.listSource(ctx, s, tag)
		if err != nil {
			errs = append(errs, fmt.Errorf("xa recovery: listing prepared branches on data source %q: %w", name, err))
		}
		fs = append(fs, got...)
	}
	return fs, errs
}

// BranchPrefix is how every GTRID of this coordinator's decision log
// begins ("sk1:<logtag>:"), known after Attach or Start; "" before. Tools
// and tests that look for this deployment's branches should use it rather
// than compute the logtag themselves.
func (c *Coordinator) BranchPrefix() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tag == "" {
		return ""
	}
	return gtridPrefix + c.tag + ":"
}
