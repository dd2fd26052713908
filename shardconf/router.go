package shardconf

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// Target is one physical table in one data source.
type Target struct {
	DataSource string
	Table      string
}

func (t Target) String() string { return t.DataSource + "." + t.Table }

// Router maps a logic table and sharding conditions to physical targets.
// It is built once by NewRouter, which compiles every rule, and is safe for
// concurrent use. Slices it returns are shared: do not modify them.
type Router struct {
	cfg         *Config
	tables      map[string]*tableRoute // by logic name, lower case
	byName      tableIndex             // by logic name as written and lower case
	broadcast   map[string][]Target    // by logic name, lower case
	dataSources []string
	keygens     map[string]keygen.Generator // by key generator name
	names       []string                    // logic tables, sorted
	fallbackDS  string                      // where unsharded tables live, "" when ambiguous
	bindings    map[string][]string
	unreachable []Unreachable
}

// Unreachable is a partition a table's sharding algorithm computes but no
// data node serves. ShardingSphere loads such rules and fails only when a
// value lands there; so does shardkey: a statement whose value maps to it
// fails with ErrNoRoute before anything runs. `shardkey validate` lists
// them as warnings (errors with -strict).
type Unreachable struct {
	Table     string // the logic table
	Algorithm string // the algorithm's name in shardingAlgorithms
	Pos       Pos    // where the algorithm is declared
	Partition string // what the algorithm computes, e.g. "t_order_3" or "interval from 2025-01-01 (suffix 202501)"
}

func (u Unreachable) String() string {
	return fmt.Sprintf("table %s, algorithm %s: %s has no data node", u.Table, u.Algorithm, u.Partition)
}

// Unreachable lists the partitions no data node serves, in rule order.
func (r *Router) Unreachable() []Unreachable { return append([]Unreachable(nil), r.unreachable...) }

// tableRoute is one compiled logic table.
type tableRoute struct {
	name   string
	ds     []string // data sources of the table: the database strategy's targets
	tbl    []string // distinct physical table names: the table strategy's targets
	node   []int    // node[di*len(tbl)+ti]: index into nodes, or -1
	nodes  []Target // sorted by data source, then table (natural order)
	single [][]Target
	// byTable[ti] / byDS[di]: the only node holding table ti / in data
	// source di, or -1, so a route constrained on one strategy only still
	// returns without building a list.
	byTable, byDS []int
	// tableOnly[ti] is the single node of table ti when only the table
	// strategy shards and it has an int fast path (fast.go); else nil.
	tableOnly [][]Target
	db        *compiledStrategy // nil: every data source
	table     *compiledStrategy // nil: every table of the chosen data sources
	keyCol    string
	keyGen    keygen.Generator
}

// compiledStrategy is a strategy bound to its algorithm and targets.
type compiledStrategy struct {
	columns   []string // lower case; one for standard
	std       shardFunc
	col       string    // columns[0]
	kernel    intKernel // std's int64 fast path (fast.go)
	hasKernel bool
	cpx       multiFunc
	algo      string
	targets   []string
	// hint: a hint strategy, routed by the values of a Hint (hint.go) with
	// std, never by conditions; columns is empty.
	hint bool
}

// RouterOption configures NewRouter. Options follow the convention of
// every shardkey package (see keygen.Option): With... functions applied in
// order, a later one replacing an earlier one's value and a variadic one
// (WithKeyGenOptions) appending; a nil argument means the default.
type RouterOption func(*routerOptions)

type routerOptions struct {
	keygenProps keygen.Props
	keygenOpts  []keygen.Option
	clock       keygen.Clock
}

// WithClock sets the clock the rules read the time from, as keygen.WithClock
// does for key generators: INTERVAL's datetime-upper when the rule gives
// none is now on this clock (ShardingSphere's LocalDateTime.now()), and so
// is the time SNOWFLAKE_INTERVAL's messages name. Without it, time.Now.
// The rules' key generators take their clock from WithKeyGenOptions.
func WithClock(c keygen.Clock) RouterOption {
	return func(o *routerOptions) { o.clock = c }
}

// WithKeyGenProps adds props to the key generators the rules declare,
// without overriding props the file sets. A deployment uses it to supply a
// per-process worker-id to a rule file shared by every process.
//
// Each generator gets only the props its type accepts: worker-id reaches a
// SNOWFLAKE but not a SEGMENT of the same file. A prop that at least one
// generator of the file refuses and none accepts is an error naming the
// prop and the refusing types, so a misspelt prop is not silently ignored.
// Props written in the file itself are checked strictly as before: an
// unknown one is an error with its file and line.
func WithKeyGenProps(p keygen.Props) RouterOption {
	return func(o *routerOptions) { o.keygenProps = p }
}

// WithKeyGenOptions passes options (a clock, a logger, a
// keygen.SequenceScope) to every key generator the rules declare.
func WithKeyGenOptions(opts ...keygen.Option) RouterOption {
	return func(o *routerOptions) { o.keygenOpts = append(o.keygenOpts, opts...) }
}

// now is the rules' clock as algoSpec.now takes it (nil: time.Now).
func (o routerOptions) now() func() time.Time {
	if o.clock == nil {
		return nil
	}
	return o.clock.Now
}

// NewRouter compiles cfg. Every problem is reported, each as a
// *ConfigError with its position, joined with errors.Join.
func NewRouter(cfg *Config, opts ...RouterOption) (*Router, error) {
	if cfg == nil {
		return nil, &ConfigError{Msg: "nil Config"}
	}
	var o routerOptions
	for _, opt := range opts {
		opt(&o)
	}
	c := &compiler{cfg: cfg, opts: o}
	r := c.compile()
	if len(c.errs) > 0 {
		// The key generators built before a later problem are closed at
		// once: a CACHED_UID's filler or a worker-id lease would otherwise
		// hold its ID space until garbage collection.
		_ = r.Close()
		// A default strategy's algorithm is compiled once per table:
		// joinErrors reports each problem once.
		return nil, joinErrors(c.errs)
	}
	return r, nil
}

// Close closes the key generators the rules built that hold resources
// (a CACHED_UID's ring buffer filler, a leased worker id: every
// generator that is an io.Closer), so that their ID space is free for
// another generator at once rather than when they are garbage collected.
// Call it when nothing routes through r any more; keys are not issued
// after it. It returns the generators' errors joined.
func (r *Router) Close() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, g := range r.keygens {
		if c, ok := g.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

type compiler struct {
	cfg         *Config
	opts        routerOptions
	errs        []error
	unreachable []Unreachable
}

func (c *compiler) errorf(p Pos, format string, args ...any) {
	c.errs = append(c.errs, c.cfg.errAt(p, format, args...))
}

// single refuses a !SINGLE rule that places a table elsewhere than the
// data source unsharded tables route to. Without such a data source they
// are refused (ErrUnknownTable), so the rule cannot be contradicted. "*"
// (any data source) agrees only when the file lists its data sources, so
// that the one shardkey uses is the only one there is.
func (c *compiler) single(r *Router) {
	for _, s := range c.cfg.singlePlaces {
		if r.fallbackDS == "" || s.dataSource == r.fallbackDS || (s.dataSource == "*" && c.cfg.dataSourcesGiven) {
			continue
		}
		c.errorf(s.pos, "!SINGLE puts tables on data source %q, but shardkey sends tables the rules do not shard to %q; "+
			"list the data sources under dataSources: or remove the entry", s.dataSource, r.fallbackDS)
	}
}

func (c *compiler) compile() *Router {
	cfg := c.cfg
	r := &Router{cfg: cfg, tables: map[string]*tableRoute{}, broadcast: map[string][]Target{},
		keygens: map[string]keygen.Generator{}, bindings: map[string][]string{}}
	for _, ds := range cfg.DataSources {
		r.dataSources = append(r.dataSources, ds.Name)
	}
	switch {
	case cfg.DefaultDataSource != "":
		r.fallbackDS = cfg.DefaultDataSource
	case len(r.dataSources) == 1:
		r.fallbackDS = r.dataSources[0]
	}
	c.single(r)
	c.keyGenerators(r)
	for _, t := range cfg.Tables {
		if tr := c.table(r, t); tr != nil {
			r.tables[strings.ToLower(t.Name)] = tr
			r.byName.add(t.Name, tr)
			if low := strings.ToLower(t.Name); low != t.Name {
				r.byName.add(low, tr)
			}
			r.names = append(r.names, t.Name)
		}
	}
	for i, b := range cfg.Broadcast {
		key := strings.ToLower(b)
		if _, dup := r.tables[key]; dup {
			c.errorf(cfg.broadcastAt(i), "table %s is both sharded and broadcast", b)
			continue
		}
		if len(r.dataSources) == 0 {
			c.errorf(cfg.broadcastAt(i), "broadcast table %s: no data sources are known", b)
			continue
		}
		var ts []Target
		for _, ds := range r.dataSources {
			ts = append(ts, Target{ds, b})
		}
		sortTargets(ts)
		if _, dup := r.broadcast[key]; !dup {
			r.names = append(r.names, b)
		}
		r.broadcast[key] = ts[:len(ts):len(ts)] // callers appending get their own array
	}
	for i, g := range cfg.BindingGroups {
		c.binding(r, g, cfg.bindingAt(i))
	}
	sort.Strings(r.names)
	r.unreachable = c.unreachable
	return r
}

func (c *compiler) keyGenerators(r *Router) {
	names := make([]string, 0, len(c.cfg.KeyGenerators))
	for n := range c.cfg.KeyGenerators {
		names = append(names, n)
	}
	sort.Strings(names)
	accepted := map[string]bool{}    // WithKeyGenProps key -> some generator took it
	refused := map[string][]string{} // WithKeyGenProps key -> types that refused it
	for _, n := range names {
		kg := c.cfg.KeyGenerators[n]
		g, drop, err := c.keyGenerator(kg)
		for k := range c.opts.keygenProps {
			switch {
			case drop[k]:
				refused[k] = append(refused[k], strings.ToUpper(kg.Type))
			case err == nil && !hasPropKey(kg.Props, k):
				accepted[k] = true
			}
		}
		if err != nil {
			msg := err.Error()
			var pe *keygen.PropError
			if errors.As(err, &pe) && pe.Key == "worker-id" && pe.Value == "" {
				msg += " (ShardingSphere defaults worker-id to 0, so every process shares it and issues the same keys;" +
					" set it per process in props or with shardconf.WithKeyGenProps)"
			}
			c.errs = append(c.errs, &ConfigError{File: c.cfg.File, Line: kg.Pos.Line, Column: kg.Pos.Column, Path: kg.Pos.Path, Msg: msg, Err: err})
			continue
		}
		r.keygens[n] = g
	}
	c.refusedKeyGenProps(accepted, refused)
}

// keyGenerator builds kg from its file props plus the WithKeyGenProps props
// the file does not set. A WithKeyGenProps prop the type refuses as unknown
// is dropped and the build retried once (drop names it); the file's own
// props stay strictly checked. Generators check props before acquiring
// anything (a lease, a database row), so the refused build has no effect.
func (c *compiler) keyGenerator(kg *KeyGenerator) (keygen.Generator, map[string]bool, error) {
	props := keygen.Props{}
	for k, v := range kg.Props {
		props[k] = v
	}
	extra := map[string]bool{}
	for k, v := range c.opts.keygenProps {
		if !hasPropKey(props, k) {
			props[k], extra[k] = v, true
		}
	}
	g, err := keygen.New(kg.Type, props, c.opts.keygenOpts...)
	if err == nil || len(extra) == 0 {
		return g, nil, err
	}
	drop := map[string]bool{}
	for _, pe := range propErrors(err) {
		if pe.Unknown() && extra[pe.Key] {
			drop[pe.Key] = true
		}
	}
	if len(drop) == 0 {
		return nil, nil, err
	}
	for k := range drop {
		delete(props, k)
	}
	g, err = keygen.New(kg.Type, props, c.opts.keygenOpts...)
	return g, drop, err
}

// refusedKeyGenProps reports each WithKeyGenProps prop that at least one
// generator refused and none accepted: a misspelt or misplaced prop would
// otherwise be silently ignored.
func (c *compiler) refusedKeyGenProps(accepted map[string]bool, refused map[string][]string) {
	keys := make([]string, 0, len(refused))
	for k := range refused {
		if !accepted[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.errs = append(c.errs, &ConfigError{File: c.cfg.File, Err: keygen.ErrInvalidProps, Msg: fmt.Sprintf(
			"WithKeyGenProps prop %q is accepted by no key generator of the file (refused by %s)",
			k, strings.Join(refused[k], ", "))})
	}
}

// propErrors lists every *keygen.PropError in err's tree (errors.Join
// collects one per bad prop).
func propErrors(err error) []*keygen.PropError {
	if pe, ok := err.(*keygen.PropError); ok {
		return []*keygen.PropError{pe}
	}
	var out []*keygen.PropError
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, propErrors(e)...)
		}
	case interface{ Unwrap() error }:
		if e := u.Unwrap(); e != nil {
			out = propErrors(e)
		}
	}
	return out
}

// hasPropKey reports whether p has key under any spelling keygen accepts
// (worker-id, worker.id, workerId).
func hasPropKey(p keygen.Props, key string) bool {
	for k := range p {
		if keygen.CanonicalPropKey(k) == keygen.CanonicalPropKey(key) {
			return true
		}
	}
	return false
}

// table compiles one logic table.
func (c *compiler) table(r *Router, t *Table) *tableRoute {
	nodes, dbStrat, tblStrat, ok := c.dataNodes(r, t)
	if !ok {
		return nil
	}
	tr := &tableRoute{name: t.Name}
	tr.index(nodes)
	layout := c.tableKeyGenerator(r, t, tr)
	tr.db = c.strategy(t, dbStrat, tr.ds, layout)
	tr.table = c.strategy(t, tblStrat, tr.tbl, layout)
	if tr.db == nil && tr.table != nil && tr.table.hasKernel {
		tr.tableOnly = make([][]Target, len(tr.tbl))
		for ti, k := range tr.byTable {
			if k >= 0 {
				tr.tableOnly[ti] = tr.single[k]
			}
		}
	}
	return tr
}

// dataNodes is t's data nodes and its database and table strategies: an
// auto table's computed from its sharding count, another's as declared
// (the rules' defaults where t has none). ok is false after an error.
func (c *compiler) dataNodes(r *Router, t *Table) (nodes []DataNode, dbStrat, tblStrat *Strategy, ok bool) {
	nodes = t.DataNodes
	dbStrat, tblStrat = t.DatabaseStrategy, t.TableStrategy
	if t.Auto {
		ds := t.AutoDataSources
		if len(ds) == 0 {
			ds = r.dataSources
		}
		if len(ds) == 0 || t.AutoStrategy == nil {
			c.errorf(t.Pos, "auto table %s: no data sources", t.Name)
			return nil, nil, nil, false
		}
		n, err := c.autoCount(t.AutoStrategy)
		if err != nil {
			c.errs = append(c.errs, err)
			return nil, nil, nil, false
		}
		nodes = nil // the Config is the caller's: left as it is
		for i := 0; i < n; i++ {
			nodes = append(nodes, DataNode{ds[i%len(ds)], fmt.Sprintf("%s_%d", t.Name, i)})
		}
		dbStrat, tblStrat = &Strategy{Type: "none"}, t.AutoStrategy
	} else {
		if dbStrat == nil {
			dbStrat = c.cfg.DefaultDatabaseStrategy
		}
		if tblStrat == nil {
			tblStrat = c.cfg.DefaultTableStrategy
		}
	}
	if len(nodes) == 0 {
		c.errorf(t.Pos, "table %s has no data nodes", t.Name)
		return nil, nil, nil, false
	}
	return nodes, dbStrat, tblStrat, true
}

// index fills tr's data sources and tables (in the nodes' order), its
// sorted targets, and the lookups from a data source and table index to a
// target: node, single, byTable and byDS.
func (tr *tableRoute) index(nodes []DataNode) {
	dsIdx, tblIdx := map[string]int{}, map[string]int{}
	for _, n := range nodes {
		if _, ok := dsIdx[n.DataSource]; !ok {
			dsIdx[n.DataSource] = len(tr.ds)
			tr.ds = append(tr.ds, n.DataSource)
		}
		if _, ok := tblIdx[n.Table]; !ok {
			tblIdx[n.Table] = len(tr.tbl)
			tr.tbl = append(tr.tbl, n.Table)
		}
	}
	for _, n := range nodes {
		tr.nodes = append(tr.nodes, Target(n))
	}
	sortTargets(tr.nodes)
	tr.nodes = tr.nodes[:len(tr.nodes):len(tr.nodes)] // callers appending get their own array
	tr.node = make([]int, len(tr.ds)*len(tr.tbl))
	for i := range tr.node {
		tr.node[i] = -1
	}
	tr.single = make([][]Target, len(tr.nodes))
	tr.byTable, tr.byDS = make([]int, len(tr.tbl)), make([]int, len(tr.ds))
	for i := range tr.byTable {
		tr.byTable[i] = -1
	}
	for i := range tr.byDS {
		tr.byDS[i] = -1
	}
	only := func(slot *int, k int) {
		if *slot == -1 {
			*slot = k
		} else {
			*slot = -2 // several
		}
	}
	for k, n := range tr.nodes {
		di, ti := dsIdx[n.DataSource], tblIdx[n.Table]
		tr.node[di*len(tr.tbl)+ti] = k
		tr.single[k] = tr.nodes[k : k+1 : k+1]
		only(&tr.byTable[ti], k)
		only(&tr.byDS[di], k)
	}
}

// tableKeyGenerator sets tr's key column and generator from t's
// keyGenerateStrategy (the rules' default where t has none) and returns
// the generator's key layout when it has one, for strategies that read a
// key's time.
func (c *compiler) tableKeyGenerator(r *Router, t *Table, tr *tableRoute) *keygen.Layout {
	kg := t.KeyGenerate
	if kg == nil {
		kg = c.cfg.DefaultKeyGenerate
	}
	if kg == nil {
		return nil
	}
	g, ok := r.keygens[kg.Generator]
	if !ok {
		if _, declared := c.cfg.KeyGenerators[kg.Generator]; !declared {
			c.errorf(kg.Pos, "key generator %q is not in keyGenerators", kg.Generator)
		}
		return nil
	}
	tr.keyCol, tr.keyGen = strings.ToLower(kg.Column), g
	if lg, ok := g.(interface{ Layout() keygen.Layout }); ok {
		l := lg.Layout()
		return &l
	}
	return nil
}

// strategy compiles s against targets; nil for none.
func (c *compiler) strategy(t *Table, s *Strategy, targets []string, layout *keygen.Layout) *compiledStrategy {
	if s == nil || s.Type == "none" {
		return nil
	}
	cfg := c.cfg
	a, ok := cfg.Algorithms[s.Algorithm]
	if !ok {
		c.errorf(s.Pos, "sharding algorithm %q is not in shardingAlgorithms", s.Algorithm)
		return nil
	}
	cols := s.Columns
	if len(cols) == 0 && s.Type == "standard" {
		if cfg.DefaultShardingColumn == "" {
			c.errorf(s.Pos, "no shardingColumn and no defaultShardingColumn")
			return nil
		}
		cols = []string{cfg.DefaultShardingColumn}
	}
	cs := &compiledStrategy{algo: a.Name, targets: targets}
	for _, col := range cols {
		cs.columns = append(cs.columns, strings.ToLower(col))
	}
	if len(cs.columns) > 0 {
		cs.col = cs.columns[0]
	}
	spec := algoSpec{typ: a.Type, props: a.Props, targets: targets, columns: cs.columns, keyLayout: layout, auto: t.Auto,
		table: t.Name, now: c.opts.now(), unreachable: func(p string) {
			c.unreachable = append(c.unreachable, Unreachable{Table: t.Name, Algorithm: a.Name, Pos: a.Pos, Partition: p})
		}}
	if len(cs.columns) > 0 {
		spec.column = cs.columns[0]
	}
	if t.Auto && !autoAlgorithms[a.Type] {
		c.errorf(a.Pos, "algorithm %s (%s) cannot serve autoTables %s: auto tables take %s", a.Name, a.Type, t.Name, strings.Join(sortedKeys(autoAlgorithms), ", "))
		return nil
	}
	if !c.instantiate(cs, s.Type, t, a, spec) {
		return nil
	}
	return cs
}

// instantiate runs algorithm a's factory for a strategy of kind (hint,
// standard or complex) into cs. It reports false after an error.
func (c *compiler) instantiate(cs *compiledStrategy, kind string, t *Table, a *Algorithm, spec algoSpec) bool {
	var err error
	switch kind {
	case "hint":
		if !c.hintAlgorithm(a) {
			return false
		}
		f, _ := lookupStandard(a.Type)
		cs.std, err = f(spec)
		cs.hint = true
	case "standard":
		if a.Type == hintInlineType {
			c.errorf(a.Pos, "algorithm %s: %s serves hint strategies only (write hint: {shardingAlgorithmName: %s})", a.Name, a.Type, a.Name)
			return false
		}
		f, ok := lookupStandard(a.Type)
		if !ok {
			c.errorf(a.Pos, "algorithm %s: type %q is not a standard sharding algorithm (known: %s)", a.Name, a.Type, strings.Join(algorithmTypes(), ", "))
			return false
		}
		cs.std, err = f(spec)
		if err == nil {
			cs.kernel, cs.hasKernel = newKernel(cs.std)
		}
	case "complex":
		f, ok := lookupComplex(a.Type)
		if !ok {
			c.errorf(a.Pos, "algorithm %s: type %q is not a complex sharding algorithm", a.Name, a.Type)
			return false
		}
		var mf multiFunc
		if mf, err = f(spec); err == nil {
			cs.cpx = mf
			cs.columns = nil
			for _, col := range mf.columns() {
				cs.columns = append(cs.columns, strings.ToLower(col))
			}
		}
	}
	if err != nil {
		c.errs = append(c.errs, &ConfigError{File: c.cfg.File, Line: a.Pos.Line, Column: a.Pos.Column, Path: a.Pos.Path,
			Msg: fmt.Sprintf("algorithm %s (%s) for table %s: %v", a.Name, a.Type, t.Name, err), Err: err})
		return false
	}
	return true
}

// autoAlgorithms may serve autoTables (ShardingSphere 5.4+ allows only the
// auto algorithms there; shardkey adds its SNOWFLAKE_BITS).
var autoAlgorithms = map[string]bool{"MOD": true, "HASH_MOD": true, "VOLUME_RANGE": true, "BOUNDARY_RANGE": true,
	"AUTO_INTERVAL": true, "SNOWFLAKE_BITS": true}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *compiler) binding(r *Router, group []string, at Pos) {
	var first *tableRoute
	for _, name := range group {
		tr := r.tables[strings.ToLower(name)]
		if tr == nil {
			c.errorf(at, "binding table %s is not a sharded table", name)
			return
		}
		if first == nil {
			first = tr
		} else if len(tr.nodes) != len(first.nodes) || len(tr.ds) != len(first.ds) {
			c.errorf(at, "binding tables %s and %s have different data nodes (%d and %d)", first.name, tr.name,
				len(first.nodes), len(tr.nodes))
			return
		}
	}
	for _, name := range group {
		r.bindings[strings.ToLower(name)] = group
	}
}

// Tables lists the logic tables of the rules (sharded, auto and
// broadcast), sorted.
func (r *Router) Tables() []string { return append([]string(nil), r.names...) }

// DataSources lists the data source names, in the file's order.
func (r *Router) DataSources() []string { return append([]string(nil), r.dataSources...) }

// Config returns the configuration the router was compiled from.
func (r *Router) Config() *Config { return r.cfg }

// BindingGroup returns the binding group of table, or nil.
func (r *Router) BindingGroup(table string) []string { return r.bindings[strings.ToLower(table)] }

// BoundTarget is the physical table of partner that binds with t, a target
// of table: the one at the same position among their data nodes, in the
// same data source. The two tables must be in one binding group
// (bindingTables), which guarantees their data nodes pair up.
func (r *Router) BoundTarget(table string, t Target, partner string) (Target, error) {
	if !slices.ContainsFunc(r.BindingGroup(table), func(b string) bool { return strings.EqualFold(b, partner) }) {
		return Target{}, fmt.Errorf("shardconf: %s and %s are not binding tables", table, partner)
	}
	if level := r.hintMismatch(table, partner); level != "" {
		return Target{}, fmt.Errorf("shardconf: binding tables %s and %s do not pair: one's %s strategy routes by hint, the other's by its columns, so a row of one need not be beside its partner rows (ShardingSphere refuses such a binding of a hint and an INLINE strategy)",
			table, partner, level)
	}
	mine, err := r.Targets(table)
	if err != nil {
		return Target{}, err
	}
	theirs, err := r.Targets(partner)
	if err != nil {
		return Target{}, err
	}
	for i, x := range mine {
		if x == t && i < len(theirs) && theirs[i].DataSource == t.DataSource {
			return theirs[i], nil
		}
	}
	return Target{}, fmt.Errorf("shardconf: binding tables %s and %s do not pair at %s", table, partner, t)
}

// hintMismatch names the level ("database" or "table") at which one of
// two binding tables routes by hint and the other does not, or "". A
// level with one choice (one data source; one table in each) pairs
// whatever routes it.
func (r *Router) hintMismatch(a, b string) string {
	ta, tb := r.lookup(a), r.lookup(b)
	if ta == nil || tb == nil {
		return ""
	}
	isHint := func(s *compiledStrategy) bool { return s != nil && s.hint }
	switch {
	case len(ta.ds) > 1 && isHint(ta.db) != isHint(tb.db):
		return "database"
	case len(ta.nodes) > len(ta.ds) && isHint(ta.table) != isHint(tb.table):
		return "table"
	}
	return ""
}

// IsBroadcast reports whether table is a broadcast table.
func (r *Router) IsBroadcast(table string) bool {
	_, ok := r.broadcast[strings.ToLower(table)]
	return ok
}

// IsSharded reports whether table has a sharding rule (tables or autoTables).
func (r *Router) IsSharded(table string) bool { return r.lookup(table) != nil }

// ShardingColumns lists the sharding columns of table's strategies (lower
// case, database strategy first), or nil for a table that is not sharded.
func (r *Router) ShardingColumns(table string) []string {
	tr := r.lookup(table)
	if tr == nil {
		return nil
	}
	var out []string
	for _, s := range []*compiledStrategy{tr.db, tr.table} {
		if s == nil {
			continue
		}
		for _, c := range s.columns {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// Targets lists every physical target of table: its data nodes, a
// broadcast table in every data source, or an unsharded table in the
// single data source that holds it.
func (r *Router) Targets(table string) ([]Target, error) {
	if tr := r.lookup(table); tr != nil {
		return tr.nodes, nil
	}
	return r.unsharded(table)
}

// KeyGenerator returns the key column and generator of table, from its
// keyGenerateStrategy or the default one.
func (r *Router) KeyGenerator(table string) (column string, gen keygen.Generator, ok bool) {
	tr := r.lookup(table)
	if tr == nil || tr.keyGen == nil {
		return "", nil, false
	}
	return tr.keyCol, tr.keyGen, true
}

func (r *Router) lookup(table string) *tableRoute {
	if tr := r.byName.get(table); tr != nil {
		return tr
	}
	return r.tables[strings.ToLower(table)]
}

func (r *Router) unsharded(table string) ([]Target, error) {
	if ts, ok := r.broadcast[strings.ToLower(table)]; ok {
		return ts, nil
	}
	if r.fallbackDS == "" {
		return nil, &RouteError{Table: table, Err: ErrUnknownTable}
	}
	return []Target{{r.fallbackDS, table}}, nil
}

// Route returns the targets of a statement on table with the given
// conditions (ANDed). It fails closed: a sharding column without a
// condition is ErrMissingShardingKey, a value mapping to a target that
// does not exist is ErrNoRoute. Results are sorted by data source, then
// table; contradictory conditions give an empty result. Equality on a
// single-column strategy allocates nothing.
func (r *Router) Route(table string, conds ...Cond) ([]Target, error) {
	return r.route(table, conds, false)
}

// Scatter is Route with every unconstrained strategy expanded to all its
// targets, for statements the caller has decided to run everywhere.
func (r *Router) Scatter(table string, conds ...Cond) ([]Target, error) {
	return r.route(table, conds, true)
}

// idxSet is a set of target indexes: all of them, exactly one, or a list.
type idxSet struct {
	all  bool
	one  int // valid when !all && list == nil
	list []int
}

func (r *Router) route(table string, conds []Cond, scatter bool) ([]Target, error) {
	tr := r.byName.get(table)
	if tr == nil {
		if tr = r.tables[strings.ToLower(table)]; tr == nil {
			return r.unsharded(table)
		}
	}
	// The commonest statement, one integer key choosing the table, written
	// out here to save three calls (fast.go has the general fast path).
	if tr.tableOnly != nil && len(conds) == 1 {
		if c, s := &conds[0], tr.table; c.op == opEq && (c.column == s.col || strings.EqualFold(c.column, s.col)) {
			if n, ok := intOf(c.v); ok {
				if t, ok := s.kernel.index(n); ok && tr.tableOnly[t] != nil {
					return tr.tableOnly[t], nil
				}
			}
		}
	}
	if ts, ok := tr.fastRoute(conds); ok {
		return ts, nil
	}
	return tr.routeGeneral(conds, scatter, nil)
}

// routeGeneral is the general path of route; h holds the hint for the
// table (nil: none), whose values route its hint strategies.
func (tr *tableRoute) routeGeneral(conds []Cond, scatter bool, h *Hint) ([]Target, error) {
	sc := scratchPool.Get().(*scratch)
	sc.used = 0
	defer scratchPool.Put(sc)
	var dbHint, tblHint []any
	if h != nil {
		dbHint, tblHint = h.Database, h.Table
	}
	dbs, err := tr.choose(tr.db, conds, dbHint, scatter, sc)
	if err != nil {
		return nil, err
	}
	tbs, err := tr.choose(tr.table, conds, tblHint, scatter, sc)
	if err != nil {
		return nil, err
	}
	dbOne, tblOne := !dbs.all && dbs.list == nil, !tbs.all && tbs.list == nil
	switch {
	case dbOne && tblOne:
		k := tr.node[dbs.one*len(tr.tbl)+tbs.one]
		if k < 0 {
			return nil, &RouteError{Table: tr.name, Target: tr.ds[dbs.one] + "." + tr.tbl[tbs.one], Err: ErrNoRoute}
		}
		return tr.single[k], nil
	case tblOne && dbs.all && tr.byTable[tbs.one] >= 0:
		return tr.single[tr.byTable[tbs.one]], nil
	case dbOne && tbs.all && tr.byDS[dbs.one] >= 0:
		return tr.single[tr.byDS[dbs.one]], nil
	}
	return tr.combine(dbs, tbs, sc)
}

// combine lists the existing nodes of the chosen data sources and tables.
// The result is the only allocation.
func (tr *tableRoute) combine(dbs, tbs idxSet, sc *scratch) ([]Target, error) {
	if dbs.all && tbs.all {
		return tr.nodes, nil
	}
	expand := func(s idxSet, n int) []int {
		switch {
		case s.all:
			out := sc.take()
			for i := 0; i < n; i++ {
				out = append(out, i)
			}
			return out
		case s.list != nil:
			return s.list
		}
		return append(sc.take(), s.one)
	}
	ks := sc.take()
	dl, tl := expand(dbs, len(tr.ds)), expand(tbs, len(tr.tbl))
	for _, d := range dl {
		for _, t := range tl {
			if k := tr.node[d*len(tr.tbl)+t]; k >= 0 {
				ks = append(ks, k)
			}
		}
	}
	if len(ks) == 0 && len(dl) > 0 && len(tl) > 0 {
		// Every chosen combination is missing: the values route nowhere.
		return nil, &RouteError{Table: tr.name, Target: tr.ds[dl[0]] + "." + tr.tbl[tl[0]], Err: ErrNoRoute}
	}
	ks = sortUnique(ks) // nodes are sorted, so their indexes sort the result
	out := make([]Target, len(ks))
	for i, k := range ks {
		out[i] = tr.nodes[k]
	}
	return out, nil
}

// scratch holds reusable index buffers for one general-path route, so
// that IN lists and ranges allocate only their result.
type scratch struct {
	bufs [8][]int
	used int
}

func (sc *scratch) take() []int {
	if sc.used < len(sc.bufs) {
		b := sc.bufs[sc.used][:0]
		sc.used++
		return b
	}
	return make([]int, 0, 16)
}

var scratchPool = sync.Pool{New: func() any {
	sc := &scratch{}
	for i := range sc.bufs {
		sc.bufs[i] = make([]int, 0, 64)
	}
	return sc
}}

// choose applies one strategy to the conditions, or a hint strategy to
// the hint's values.
func (tr *tableRoute) choose(s *compiledStrategy, conds []Cond, hint []any, scatter bool, sc *scratch) (idxSet, error) {
	if s == nil {
		return idxSet{all: true}, nil
	}
	if s.hint {
		return tr.chooseHint(s, hint, scatter, sc)
	}
	if s.cpx != nil {
		return tr.chooseComplex(s, conds, scatter)
	}
	col := s.columns[0]
	var (
		set   idxSet
		found bool
	)
	add := func(cur idxSet) {
		if !found {
			set, found = cur, true
			return
		}
		set = intersect(set, cur, sc)
	}
	// Range conditions on the column are merged into one span first, so
	// that order_id >= 1 AND order_id <= 2 narrows like BETWEEN 1 AND 2.
	var (
		rng    span
		hasRng bool
	)
	for i := range conds {
		c := &conds[i]
		if c.column != col && !strings.EqualFold(c.column, col) {
			continue
		}
		if c.isRange() {
			sp, err := c.span()
			if err != nil {
				return idxSet{}, fmt.Errorf("shardconf: table %s, column %s: %w", tr.name, c.column, err)
			}
			if !hasRng {
				rng, hasRng = sp, true
				continue
			}
			if merged, ok := mergeSpans(rng, sp); ok {
				rng = merged
				continue
			}
			cur, err := tr.evalSpan(s, c.column, sp, sc)
			if err != nil {
				return idxSet{}, err
			}
			add(cur)
			continue
		}
		cur, err := tr.evalCond(s, c, sc)
		if err != nil {
			return idxSet{}, err
		}
		add(cur)
	}
	if hasRng {
		cur, err := tr.evalSpan(s, col, rng, sc)
		if err != nil {
			return idxSet{}, err
		}
		add(cur)
	}
	if !found {
		if scatter {
			return idxSet{all: true}, nil
		}
		return idxSet{}, &RouteError{Table: tr.name, Column: col, Err: ErrMissingShardingKey}
	}
	return set, nil
}

// evalCond computes the targets one condition allows.
func (tr *tableRoute) evalCond(s *compiledStrategy, c *Cond, sc *scratch) (idxSet, error) {
	switch c.op {
	case opEq:
		v, err := toValue(c.v)
		if err != nil {
			return idxSet{}, fmt.Errorf("shardconf: table %s, column %s: %w", tr.name, c.column, err)
		}
		return tr.one(s, v)
	case opIn:
		out := idxSet{list: sc.take()}
		for _, x := range c.values() {
			v, err := toValue(x)
			if err != nil {
				return idxSet{}, fmt.Errorf("shardconf: table %s, column %s: %w", tr.name, c.column, err)
			}
			one, err := tr.one(s, v)
			if err != nil {
				return idxSet{}, err
			}
			out.list = append(out.list, one.one)
		}
		out.list = sortUnique(out.list)
		return out, nil
	default:
		sp, err := c.span()
		if err != nil {
			return idxSet{}, fmt.Errorf("shardconf: table %s, column %s: %w", tr.name, c.column, err)
		}
		return tr.evalSpan(s, c.column, sp, sc)
	}
}

// evalSpan computes the targets a range allows.
func (tr *tableRoute) evalSpan(s *compiledStrategy, column string, sp span, sc *scratch) (idxSet, error) {
	if spanEmpty(sp) {
		return idxSet{list: sc.take()}, nil
	}
	idx, err := s.std.within(sp, sc.take())
	if err != nil {
		return idxSet{}, fmt.Errorf("shardconf: table %s, column %s: %w", tr.name, column, err)
	}
	out := idxSet{list: sortUnique(idx)}
	if len(out.list) == len(s.targets) {
		return idxSet{all: true}, nil
	}
	return out, nil
}

func (tr *tableRoute) one(s *compiledStrategy, v value) (idxSet, error) {
	i, err := s.std.one(v)
	if err != nil {
		return idxSet{}, fmt.Errorf("shardconf: table %s, column %s, value %s: %w", tr.name, s.columns[0], v, err)
	}
	if i < 0 {
		return idxSet{}, &RouteError{Table: tr.name, Column: s.columns[0], Value: v.String(), Err: ErrNoRoute}
	}
	return idxSet{one: i}, nil
}

// maxComplexCombinations bounds the value combinations a complex strategy
// evaluates for IN lists.
const maxComplexCombinations = 4096

// chooseComplex is the targets complex strategy s chooses for conds: the
// algorithm runs on every combination of the sharding columns' values.
func (tr *tableRoute) chooseComplex(s *compiledStrategy, conds []Cond, scatter bool) (idxSet, error) {
	lists := make([][]value, len(s.columns))
	for ci, col := range s.columns {
		vs, all, err := tr.complexValues(s, col, conds, scatter)
		if err != nil || all {
			return idxSet{all: all}, err
		}
		lists[ci] = vs
	}
	total := 1
	for _, l := range lists {
		total *= len(l)
		if total > maxComplexCombinations {
			return idxSet{}, fmt.Errorf("shardconf: table %s: more than %d value combinations for a complex strategy", tr.name, maxComplexCombinations)
		}
	}
	list, err := tr.complexIndexes(s, lists)
	if err != nil {
		return idxSet{}, err
	}
	if len(list) == 1 {
		return idxSet{one: list[0]}, nil
	}
	return idxSet{list: list}, nil
}

// complexValues is the values conds give complex sharding column col:
// one for =, the list for IN. all is true when the strategy must take
// every target: a range it allows, or, with scatter, a range or no
// condition at all.
func (tr *tableRoute) complexValues(s *compiledStrategy, col string, conds []Cond, scatter bool) (vals []value, all bool, err error) {
	found := false
	for i := range conds {
		c := &conds[i]
		if !strings.EqualFold(c.column, col) {
			continue
		}
		if found {
			return nil, false, fmt.Errorf("shardconf: table %s: several conditions on complex sharding column %s", tr.name, col)
		}
		found = true
		var raw []any
		switch c.op {
		case opEq:
			raw = []any{c.v}
		case opIn:
			raw = c.values()
		default:
			if ar, ok := s.cpx.(interface{ allowsRange() bool }); scatter || (ok && ar.allowsRange()) {
				return nil, true, nil
			}
			// A Go algorithm names its own prop and wraps ErrRangeNotSupported.
			if re, ok := s.cpx.(interface {
				rangeError(table, column string) error
			}); ok {
				return nil, false, re.rangeError(tr.name, col)
			}
			return nil, false, fmt.Errorf("shardconf: table %s: a range on complex sharding column %s cannot be routed; "+
				"set allow-range-query-with-inline-sharding: true or use Scatter", tr.name, col)
		}
		for _, x := range raw {
			v, err := toValue(x)
			if err != nil {
				return nil, false, fmt.Errorf("shardconf: table %s, column %s: %w", tr.name, col, err)
			}
			vals = append(vals, v)
		}
	}
	if !found {
		if scatter {
			return nil, true, nil
		}
		return nil, false, &RouteError{Table: tr.name, Column: col, Err: ErrMissingShardingKey}
	}
	return vals, false, nil
}

// complexIndexes runs the complex algorithm on every combination of one
// value from each of lists and returns the targets, sorted, each once.
func (tr *tableRoute) complexIndexes(s *compiledStrategy, lists [][]value) ([]int, error) {
	list := []int{}
	vs := make([]value, len(lists))
	var walk func(int) error
	walk = func(d int) error {
		if d == len(lists) {
			i, err := s.cpx.one(vs)
			if err != nil {
				return fmt.Errorf("shardconf: table %s: %w", tr.name, err)
			}
			if i < 0 {
				return &RouteError{Table: tr.name, Column: strings.Join(s.columns, ","), Err: ErrNoRoute}
			}
			list = append(list, i)
			return nil
		}
		for _, v := range lists[d] {
			vs[d] = v
			if err := walk(d + 1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(0); err != nil {
		return nil, err
	}
	return sortUnique(list), nil
}

func intersect(a, b idxSet, sc *scratch) idxSet {
	switch {
	case a.all:
		return b
	case b.all:
		return a
	}
	la, lb := a.list, b.list
	if la == nil {
		la = append(sc.take(), a.one)
	}
	if lb == nil {
		lb = append(sc.take(), b.one)
	}
	out := sc.take()
	for _, x := range la {
		for _, y := range lb {
			if x == y {
				out = append(out, x)
				break
			}
		}
	}
	if len(out) == 1 {
		return idxSet{one: out[0]}
	}
	return idxSet{list: out}
}

func sortUnique(xs []int) []int {
	sort.Ints(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// sortTargets sorts by data source, then table, comparing runs of digits
// as numbers (ds_2 before ds_10).
func sortTargets(ts []Target) {
	sort.SliceStable(ts, func(i, j int) bool {
		if c := naturalCompare(ts[i].DataSource, ts[j].DataSource); c != 0 {
			return c < 0
		}
		return naturalCompare(ts[i].Table, ts[j].Table) < 0
	})
}

func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			if da != db {
				return da - db
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
