package xa

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/keygen"
)

// Coordinator runs two-phase commits across a fixed set of data sources
// and recovers the branches a failed commit left prepared. It is safe for
// concurrent use; several coordinators (processes) may share one decision
// log.
type Coordinator struct {
	sources map[string]*source
	order   []string // sources in the order given
	log     *source
	table   string
	logSQL  logSQL
	timeout time.Duration
	every   time.Duration
	ids     keygen.IDGenerator
	ownIDs  bool
	now     func() time.Time
	logger  *slog.Logger
	hook    func(Stage, string) error

	ctx     context.Context // canceled by Close: stops a running timed recovery
	cancel  context.CancelFunc
	startMu sync.Mutex
	mu      sync.Mutex
	tag     string // the log's logtag, set by Start
	started bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// source is a Source and its cached PostgreSQL capability check.
type source struct {
	Source
	mu      sync.Mutex
	checked bool // max_prepared_transactions > 0 seen
}

// twoPhase tells whether the dialect can prepare branches.
func twoPhase(d dialect.Name) bool { return d == dialect.Postgres || d == dialect.MySQL }

// New checks cfg and sources and returns a Coordinator; it does no I/O
// (Start does). Sources of a dialect without 2PC (SQLite, unknown) are
// accepted: CanTwoPhase reports them and Commit refuses to span them.
func New(cfg Config, sources []Source) (*Coordinator, error) {
	c := &Coordinator{sources: map[string]*source{}, timeout: cfg.Timeout, every: cfg.Interval,
		now: cfg.Now, logger: cfg.Logger, hook: cfg.Hook, table: cfg.LogTable, stop: make(chan struct{})}
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	if err := c.addSources(sources); err != nil {
		return nil, err
	}
	if err := c.setLog(cfg.LogSource); err != nil {
		return nil, err
	}
	if err := c.setIDs(cfg.IDs); err != nil {
		return nil, err
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func (c *Coordinator) setDefaults() error {
	switch {
	case c.timeout == 0:
		c.timeout = DefaultTimeout
	case c.timeout < MinTimeout:
		return configErr("timeout %v is shorter than %v", c.timeout, MinTimeout)
	}
	if c.every == 0 {
		c.every = DefaultInterval
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.table == "" {
		c.table = DefaultLogTable
	}
	if !validTable(c.table) {
		return configErr("log table %q is not an identifier (letters, digits, _; optionally schema.table)", c.table)
	}
	return nil
}

func (c *Coordinator) addSources(sources []Source) error {
	if len(sources) == 0 {
		return configErr("no data sources")
	}
	for _, s := range sources {
		if _, dup := c.sources[s.Name]; dup {
			return configErr("data source %q given twice", s.Name)
		}
		if twoPhase(s.Dialect) {
			if !ValidSourceName(s.Name) {
				return configErr("data source name %q cannot name a two-phase branch: it must be 1 to %d bytes of [A-Za-z0-9_.-]", s.Name, MaxSourceName)
			}
			if s.DB == nil {
				return configErr("data source %q has no *sql.DB", s.Name)
			}
		}
		c.sources[s.Name] = &source{Source: s}
		c.order = append(c.order, s.Name)
	}
	if n := len(strings.Join(c.order, ",")); n > maxBranches {
		return configErr("data source names take %d bytes together, more than the decision log's branches column holds (%d)", n, maxBranches)
	}
	return nil
}

// maxBranches is what the log's branches column (text: 65535 bytes on
// MySQL) holds: a transaction may span every data source.
const maxBranches = 65535

func (c *Coordinator) setLog(name string) error {
	if name == "" {
		name = c.order[0]
	}
	s, ok := c.sources[name]
	if !ok {
		return configErr("log data source %q is not one of the data sources", name)
	}
	if !twoPhase(s.Dialect) {
		return configErr("log data source %q is %q: the decision log needs PostgreSQL or MySQL", name, s.Dialect)
	}
	c.log, c.logSQL = s, newLogSQL(s.Dialect, c.table)
	return nil
}

func (c *Coordinator) setIDs(ids keygen.IDGenerator) error {
	if ids == nil {
		// Worker 0 in every process: the GTRID's nonce keeps them apart.
		g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "0"}, keygen.WithSequenceScope(keygen.NewSequenceScope()))
		if err != nil {
			return configErr("default id generator: %v", err)
		}
		ids, c.ownIDs = g, true
	}
	c.ids = ids
	return nil
}

// CanTwoPhase tells whether source is known and its dialect can prepare
// branches. (A PostgreSQL server with max_prepared_transactions = 0 is
// found out at Start or at the first prepare.)
func (c *Coordinator) CanTwoPhase(source string) bool {
	s, ok := c.sources[source]
	return ok && twoPhase(s.Dialect)
}

// Close stops the recovery timer and waits for a running recovery to
// end. It does not close the sources' pools. Closing twice is harmless.
func (c *Coordinator) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.stop)
	c.cancel()
	c.mu.Unlock()
	c.wg.Wait()
	if cl, ok := c.ids.(io.Closer); ok && c.ownIDs {
		return cl.Close()
	}
	return nil
}

// NewTx starts a transaction: its GTRID is issued now, and its age counts
// from now. It needs Start to have succeeded (the GTRID carries the log's
// logtag).
func (c *Coordinator) NewTx() (*Tx, error) {
	c.mu.Lock()
	tag, started, closed := c.tag, c.started, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if !started {
		return nil, ErrNotStarted
	}
	id, err := c.ids.NextID(context.Background())
	if err != nil {
		return nil, err
	}
	if id <= 0 {
		return nil, fmt.Errorf("xa: id generator %s issued %d (want a positive id)", c.ids.Type(), id)
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	born := c.now()
	if ms := born.UnixMilli(); ms <= 0 || ms >= maxMillis {
		return nil, fmt.Errorf("xa: clock reads %v, outside the years 1970 to 4199", born)
	}
	return &Tx{c: c, gtrid: formatGTRID(tag, born.UnixMilli(), id, nonce), born: born}, nil
}
