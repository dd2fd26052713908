package xa

import (
	"database/sql"
	"log/slog"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/keygen"
)

// Defaults of Config.
const (
	DefaultLogTable = "shardkey_xa_log"
	DefaultTimeout  = 60 * time.Second
	DefaultInterval = 30 * time.Second
	// MinTimeout is the shortest Timeout New accepts: a shorter one would
	// roll back transactions that are merely slow to prepare.
	MinTimeout = time.Second
)

// Source is one data source the coordinator may span. DB is a pool of it,
// used for recovery, the decision log, capability checks and for finishing
// a branch whose own connection failed; it is never closed here.
type Source struct {
	Name    string
	Dialect dialect.Name
	DB      *sql.DB
}

// Config configures a Coordinator. The zero value means every default.
type Config struct {
	// LogSource names the data source holding the decision log; "" is the
	// first of the sources given to New. It must be PostgreSQL or MySQL.
	LogSource string
	// LogTable is the decision log's table, created at Start when missing;
	// "" is DefaultLogTable. An identifier, optionally schema-qualified.
	LogTable string
	// Timeout is how old a transaction may get before it can no longer be
	// decided: Commit rolls back an older one instead of logging, and
	// recovery rolls back an undecided branch older than it. 0 is
	// DefaultTimeout; less than MinTimeout is refused.
	Timeout time.Duration
	// Interval is how often the timer runs recovery; 0 is DefaultInterval,
	// negative runs no timer (recovery then runs at Start and on Recover).
	Interval time.Duration
	// IDs issues the ids that, with a random nonce, make GTRIDs unique;
	// nil is a SNOWFLAKE generator of its own (worker 0, private
	// SequenceScope). Any generator of positive ids will do: a
	// transaction's age comes from the time written in its GTRID.
	IDs keygen.IDGenerator
	// Logger receives recovery's actions and failures; nil is
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock ages are measured with; nil is time.Now. Tests set
	// it to age transactions without sleeping.
	Now func() time.Time
	// Hook, for tests only, is called at each Stage of a multi-branch
	// Commit (see Stage); a non-nil error is treated as a failure at that
	// point (or the hook ends the process to simulate a crash).
	Hook func(stage Stage, gtrid string) error
}

// Stage is a point in Commit where Config.Hook is called.
type Stage int

const (
	// StagePrepared: every branch prepared, nothing logged. A hook error
	// rolls every branch back.
	StagePrepared Stage = iota + 1
	// StageDecided: the commit decision is logged, no branch committed.
	// A hook error leaves every branch to recovery (*InDoubtError,
	// Decided).
	StageDecided
	// StageCommittedOne: the first branch is committed, the others not
	// yet (with a hook, that branch is committed alone first). A hook
	// error leaves the others to recovery.
	StageCommittedOne
)

func (s Stage) String() string {
	switch s {
	case StagePrepared:
		return "prepared"
	case StageDecided:
		return "decided"
	case StageCommittedOne:
		return "committed-one"
	}
	return "stage(?)"
}
