package gormplugin

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
)

// Plugin fills generated keys and routes statements to shard tables. Build
// it with New and attach it with db.Use.
type Plugin struct {
	gen     keygen.Generator
	ownGen  bool // gen was built by New from props: closed if Initialize fails
	rules   *shardconf.Router
	pools   map[string]gorm.ConnPool
	logger  *slog.Logger
	scatter bool
	timeLoc *time.Location // WithTimeLocation (timeloc.go); nil is UTC
	err     error          // a construction problem, returned by Initialize (db.Use)
	// keygenOpts are WithKeyGenOptions', for the generator built from props.
	keygenOpts []keygen.Option

	keyed keyedModels    // per-model key-fill decisions (keyfill.go)
	query func(*gorm.DB) // GORM's query callback, which mergeQuery runs per target (route.go)
	// txSources maps a transaction GORM began for a routed write (its
	// ConnPool) to the data source it began on, for the statements it runs
	// before committing (association saves).
	txSources sync.Map
	rw        *readWrite // readwrite-splitting groups' pools, dbresolver guard (replicas.go)
	// subquerySchemas caches the schemas of subqueries' models, parsed to
	// find the tables they read (route.go shardedSubquery).
	subquerySchemas sync.Map

	// binaryText: WithBinaryCollation (readoptions.go); text read across
	// several tables compares bytewise.
	binaryText bool

	tp twoPhase // WithTwoPhaseCommit (twophase.go)

	obs   observe.Observer // WithObserver (observer.go); nil reports nothing
	names sync.Map         // name -> []string{name}, shared by reports (observer.go)
}

// Option configures New. Options follow the convention of every shardkey
// package (see keygen.Option): With... functions applied in order, a later
// one replacing an earlier one's value and a variadic one
// (WithKeyGenOptions) appending; a nil argument means the default; a bad
// value is reported by db.Use, never by the option.
type Option func(*Plugin)

// WithKeyGenOptions passes options (a clock, a logger, a worker source, a
// keygen.SequenceScope) to the generator New builds from props. A
// generator given with WithGenerator, and those of the rules (see
// shardconf.WithKeyGenOptions), are built by their owner and unaffected.
func WithKeyGenOptions(opts ...keygen.Option) Option {
	return func(p *Plugin) { p.keygenOpts = append(p.keygenOpts, opts...) }
}

// WithGenerator sets the generator for tables that no rule gives one; it
// replaces the generator New would build from props.
func WithGenerator(g keygen.Generator) Option { return func(p *Plugin) { p.gen = g } }

// WithRules routes statements with the rules and fills keys with their
// per-table key generators.
func WithRules(r *shardconf.Router) Option { return func(p *Plugin) { p.rules = r } }

// WithDataSources gives the connection pool of each data source the rules
// name. With a single data source the *gorm.DB's own connection serves it
// and this option is not needed. A data source that is a
// readwrite-splitting group (the rule file's !READWRITE_SPLITTING) gets no
// pool of its own: give one for its write data source and one for each
// read data source, by their names; reads outside a transaction then go to
// the read data sources, as the group's load balancer chooses, and
// everything else to the write data source (see ReadFromPrimary).
func WithDataSources(pools map[string]gorm.ConnPool) Option {
	return func(p *Plugin) { p.pools = pools }
}

// WithLogger sets the logger (routing decisions at debug level).
func WithLogger(l *slog.Logger) Option { return func(p *Plugin) { p.logger = l } }

// WithScatter lets statements without a sharding condition run on every
// target their other conditions allow, merging the results. Without it
// they fail with shardconf.ErrMissingShardingKey. A read reaching several
// data sources runs on each one's pool (outside a transaction); a write
// reaching several is ErrUnsupported.
func WithScatter() Option { return func(p *Plugin) { p.scatter = true } }

// New builds the plugin. props configure the default key generator, a
// SNOWFLAKE unless props name another keygen type with "type"; they may be
// empty when WithGenerator is given, or when WithRules gives every keyed
// table its generator. A problem with props or options is returned by
// db.Use.
func New(props keygen.Props, opts ...Option) *Plugin {
	p := &Plugin{}
	for _, o := range opts {
		o(p)
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	if p.obs != nil {
		p.obs = containedObserver{o: p.obs, logger: p.logger}
	}
	if p.gen == nil && (len(props) > 0 || p.rules == nil) {
		typ := "SNOWFLAKE"
		rest := keygen.Props{}
		for k, v := range props {
			if strings.EqualFold(k, "type") {
				typ = v
				continue
			}
			rest[k] = v
		}
		g, err := keygen.New(typ, rest, p.keygenOpts...)
		if err != nil {
			p.err = fmt.Errorf("gormplugin: %w", err)
		}
		p.gen, p.ownGen = g, err == nil
	}
	return p
}

// Name is the plugin's name in gorm.Config.Plugins.
func (p *Plugin) Name() string { return "shardkey" }

// Initialize registers the plugin's callbacks, in the shardkey: namespace.
// It is called by db.Use, which returns its error: a bad prop or option,
// or GORM's error when the plugin is registered twice.
func (p *Plugin) Initialize(db *gorm.DB) error {
	if p.err != nil {
		return p.err
	}
	err := p.initialize(db)
	if err != nil && p.ownGen {
		// A generator New built from props is the plugin's to close: a
		// CACHED_UID's filler or a worker-id lease would otherwise hold its
		// ID space until garbage collection. One given by WithGenerator
		// stays the caller's.
		if c, ok := p.gen.(io.Closer); ok {
			_ = c.Close()
		}
	}
	return err
}

func (p *Plugin) initialize(db *gorm.DB) error {
	// Before anything is registered: refuses dbresolver, builds the
	// readwrite-splitting groups' pools (replicas.go).
	if err := p.prepareReadWrite(db); err != nil {
		return err
	}
	if err := p.adoptDSNLocation(db); err != nil { // timeloc.go
		return err
	}
	if err := p.registerKeyFill(db); err != nil {
		return err
	}
	if p.rules != nil {
		if err := p.registerRouting(db); err != nil {
			return err
		}
		if err := p.registerReadWrite(db); err != nil {
			return err
		}
	}
	return p.startTwoPhase(db) // last: a refused db.Use leaves no coordinator running
}
