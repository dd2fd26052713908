package difftest

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

var (
	flagSteps      = flag.Int("difftest.steps", 400, "steps per database and client")
	flagSeed       = flag.Uint64("difftest.seed", 20261126, "seed of the step sequence")
	flagDB         = flag.String("difftest.db", "postgres,mariadb,sqlite", "databases to run on")
	flagClient     = flag.String("difftest.client", "sqlhook,gorm", "clients to run through")
	flagSkip       = flag.String("difftest.skip", "", "regexp of operation kinds to leave out")
	flagKeepGoing  = flag.Bool("difftest.keepgoing", false, "after a divergence, reset the tables and go on")
	flagShrink     = flag.Bool("difftest.shrink", true, "shrink a divergence to a short list of steps")
	flagShrinkTime = flag.Duration("difftest.shrinktime", 15*time.Second, "time given to shrinking")
	flagName       = flag.String("difftest.name", "", "a word in the test databases' names, so that runs at the same time do not share them")
)

// op is one step: what it runs through shardkey, and the same on the
// oracle (called only when shardkey accepted it).
type op struct {
	kind string
	desc string
	// placementOnly: the step's right effect is not the logic table's
	// (a statement naming a physical table); the oracle copies the
	// shards instead, and only placement and keys are checked.
	placementOnly bool
	shard         func() ([]int64, error) // rows affected per statement
	oracle        func() ([]int64, error)
}

// errRolledBack: the step rolled its transaction back on purpose.
var errRolledBack = errors.New("difftest: rolled back on purpose")

// client builds the steps of one client (sqlhook or GORM).
type client interface {
	build(h *harness, rng *rand.Rand, step int) op
	// buildExtra builds a step on t_hint (hints) or t_algo (Go algorithms).
	buildExtra(h *harness, rng *rand.Rand, step int) op
}

// harness is one run: a world, a client, the state after the last step.
type harness struct {
	t      testing.TB
	w      *world
	c      client
	seed   uint64
	skip   *regexp.Regexp
	last   *snapshot // after the previous step
	mid    *snapshot // after shardkey ran the current step, before the oracle
	stats  map[string]*kindStats
	quiet  bool // replaying while shrinking: no stats
	lost   int64
	shown  map[string]int // divergences printed per kind
	broken []divergence
}

type kindStats struct {
	total, accepted, rolledBack, dbErr int
	refused                            map[string]int
	sample                             map[string]string // an error message per refusal reason
}

// divergence is a step whose effect differs from the oracle's.
type divergence struct {
	step     int
	kind     string
	desc     string
	problems []string
}

func (d divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d, %s:\n    %s\n", d.step, d.kind, strings.ReplaceAll(d.desc, "\n", "\n    "))
	for i, p := range d.problems {
		if i == 12 {
			fmt.Fprintf(&b, "  ... %d more\n", len(d.problems)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return b.String()
}

// rng is step's own random source: any subset of steps replays exactly.
func (h *harness) rng(step int) *rand.Rand {
	return rand.New(rand.NewPCG(h.seed, uint64(step)*0x9e3779b97f4a7c15+1))
}

// skipped reports whether -difftest.skip leaves out an operation kind
// (also inside transactions).
func (h *harness) skipped(kind string) bool { return h.skip != nil && h.skip.MatchString(kind) }

// buildStep builds step's operation, drawing again while its kind is
// skipped.
//
// One step in four is of a hint-routed or Go-algorithm table, drawn from
// a random source of its own, so that the other steps draw what they drew
// before those tables were added (and replay old seeds' steps).
func (h *harness) buildStep(step int) op {
	rng := h.rng(step)
	xr := rand.New(rand.NewPCG(h.seed^0x5ca1ab1e, uint64(step)))
	extra := xr.IntN(4) == 0
	for tries := 0; ; tries++ {
		var o op
		if extra && tries < 100 { // -difftest.skip may leave out every such kind
			o = h.c.buildExtra(h, xr, step)
		} else {
			o = h.c.build(h, rng, step)
		}
		if !h.skipped(o.kind) {
			return o
		}
	}
}

func (h *harness) snap() *snapshot {
	s, err := h.w.snapshot()
	if err != nil {
		h.t.Fatalf("reading the tables: %v", err)
	}
	return s
}

// runStep runs one step and checks every table; it returns the
// divergence, if any.
func (h *harness) runStep(step int) *divergence {
	o := h.buildStep(step)
	st := h.stat(o.kind)
	rows, err := guard(o.shard)
	after := h.snap()
	div := func(problems ...string) *divergence {
		h.last = after
		return &divergence{step: step, kind: o.kind, desc: o.desc, problems: problems}
	}
	if errors.Is(err, errPanic) {
		h.count(st, err)
		return div(err.Error())
	}
	if err != nil {
		h.count(st, err)
		changed := !after.equal(h.last)
		before := h.last
		h.last = after
		if changed {
			return div(append([]string{fmt.Sprintf("shardkey returned an error (%v), yet the step changed:", err)},
				diffSnapshots(before, after)...)...)
		}
		return nil
	}
	if st != nil {
		st.accepted++
	}
	h.mid = after
	orows, oerr := guard(o.oracle)
	after = h.snap()
	if oerr != nil {
		return div(append([]string{fmt.Sprintf("shardkey accepted the step (rows %v); the oracle failed: %v", rows, oerr)},
			h.w.check(after)...)...)
	}
	var problems []string
	if !o.placementOnly && !slices.Equal(rows, orows) {
		problems = append(problems, fmt.Sprintf("rows affected: shardkey %v, oracle %v", rows, orows))
	}
	problems = append(problems, h.w.check(after)...)
	h.last = after
	if len(problems) > 0 {
		return div(problems...)
	}
	return nil
}

// errPanic: the step panicked (inside shardkey or GORM).
var errPanic = errors.New("difftest: panic")

// guard runs f, turning a panic into an error (a panic is a bug too).
func guard(f func() ([]int64, error)) (rows []int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errPanic, r)
		}
	}()
	return f()
}

func (h *harness) stat(kind string) *kindStats {
	if h.quiet {
		return nil
	}
	st := h.stats[kind]
	if st == nil {
		st = &kindStats{refused: map[string]int{}, sample: map[string]string{}}
		h.stats[kind] = st
	}
	st.total++
	return st
}

func (h *harness) count(st *kindStats, err error) {
	if st == nil {
		return
	}
	r := refusal(err)
	if _, ok := st.sample[r]; !ok {
		st.sample[r] = err.Error()
	}
	switch r {
	case "":
		st.dbErr++
	case "rolled back":
		st.rolledBack++
	default:
		st.refused[r]++
	}
}

// refusal names the shardkey sentinel an error matches, "" for an error
// of the database.
func refusal(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{
		{errRolledBack, "rolled back"},
		{errPanic, "panic"},
		{shardconf.ErrShardingKeyChange, "key change"},
		{shardconf.ErrMissingShardingKey, "missing key"},
		{shardconf.ErrUnusedHint, "unused hint"},
		{shardconf.ErrRangeNotSupported, "range unsupported"},
		{shardconf.ErrAlgorithmResult, "algorithm result"},
		{shardconf.ErrAlgorithmPanic, "algorithm panic"},
		{shardconf.ErrNoRoute, "no route"},
		{shardconf.ErrUnknownTable, "unknown table"},
		{sqlhook.ErrCrossSourceTx, "cross-source tx"},
		{sqlhook.ErrUnsupported, "unsupported"},
		{sqlhook.ErrParse, "parse"},
		{gormplugin.ErrUnsupported, "unsupported"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	var se *sqlhook.StatementError
	if errors.As(err, &se) {
		return "statement error"
	}
	if strings.Contains(err.Error(), "shardkey") || strings.Contains(err.Error(), "sqlhook") ||
		strings.Contains(err.Error(), "gormplugin") || strings.Contains(err.Error(), "shardconf") {
		return "other shardkey error"
	}
	return ""
}

// run runs steps 0..n-1 and returns the divergences (the first one only,
// unless -difftest.keepgoing).
func (h *harness) run(n int) {
	h.last = h.snap()
	start := time.Now()
	for step := 0; step < n; step++ {
		if step > 0 && step%10000 == 0 {
			h.t.Logf("step %d, %v, %d divergences", step, time.Since(start).Round(time.Second), len(h.broken))
		}
		d := h.runStep(step)
		if d == nil {
			continue
		}
		h.broken = append(h.broken, *d)
		if h.shown[d.kind] < 3 { // the rest are counted in the summary
			h.t.Errorf("divergence, seed %d, %s", h.seed, d)
		} else {
			h.t.Fail()
		}
		h.shown[d.kind]++
		if !*flagKeepGoing {
			if *flagShrink {
				h.shrink(step)
			}
			return
		}
		h.w.reset(h.t)
		h.last = h.snap()
		if testing.Verbose() && len(h.broken)%50 == 0 {
			h.t.Logf("%d divergences so far, step %d", len(h.broken), step)
		}
	}
	h.t.Logf("%d steps in %v (%.0f steps/s)", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
}

// replay runs the steps on empty tables and reports whether the last one
// diverges.
func (h *harness) replay(steps []int) (*divergence, bool) {
	h.w.reset(h.t)
	h.last = h.snap()
	for i, s := range steps {
		d := h.runStep(s)
		if d != nil {
			return d, i == len(steps)-1
		}
	}
	return nil, false
}

// shrink finds a short list of steps, ending with the failing one, that
// still diverges there, by dropping chunks of the prefix.
func (h *harness) shrink(failed int) {
	h.quiet = true
	defer func() { h.quiet = false }()
	deadline := time.Now().Add(*flagShrinkTime)
	steps := make([]int, failed+1)
	for i := range steps {
		steps[i] = i
	}
	if d, ok := h.replay([]int{failed}); ok {
		h.t.Errorf("shrunk to the failing step alone (seed %d, steps [%d]):\n%s", h.seed, failed, d)
		return
	}
	for size := len(steps) / 2; size >= 1 && time.Now().Before(deadline); size /= 2 {
		for i := 0; i+size < len(steps) && time.Now().Before(deadline); {
			try := slices.Concat(steps[:i], steps[i+size:])
			if _, ok := h.replay(try); ok {
				steps = try
			} else {
				i += size
			}
		}
	}
	d, ok := h.replay(steps)
	if !ok {
		h.t.Errorf("the divergence did not replay (it depends on timing or generated keys)")
		return
	}
	h.t.Errorf("shrunk to %d steps (seed %d, steps %v):\n%s", len(steps), h.seed, steps, d)
	for _, s := range steps[:len(steps)-1] {
		o := h.buildStep(s)
		h.t.Logf("  step %d %s: %s", s, o.kind, o.desc)
	}
}

// summary logs, per operation family (and per kind with -v), how many
// steps were accepted, refused by shardkey (and why), failed in the
// database, or rolled back on purpose.
func (h *harness) summary() {
	families := map[string]*kindStats{}
	for k, st := range h.stats {
		f := k
		if parts := strings.SplitN(k, ".", 3); len(parts) == 3 {
			f = parts[0] + "." + parts[1]
		}
		fs := families[f]
		if fs == nil {
			fs = &kindStats{refused: map[string]int{}}
			families[f] = fs
		}
		fs.total += st.total
		fs.accepted += st.accepted
		fs.dbErr += st.dbErr
		fs.rolledBack += st.rolledBack
		for r, n := range st.refused {
			fs.refused[r] += n
		}
	}
	table := statsTable(families)
	if testing.Verbose() {
		table += "\nper kind:\n" + statsTable(h.stats) + "\nan error of each kind and reason:\n"
		for _, k := range slices.Sorted(maps.Keys(h.stats)) {
			for _, r := range slices.Sorted(maps.Keys(h.stats[k].sample)) {
				msg := h.stats[k].sample[r]
				if len(msg) > 300 {
					msg = msg[:300] + "..."
				}
				table += fmt.Sprintf("  %s [%s]: %s\n", k, r, msg)
			}
		}
	}
	var b strings.Builder
	b.WriteString(table)
	if len(h.broken) > 0 {
		byKind := map[string]int{}
		for _, d := range h.broken {
			byKind[d.kind]++
		}
		fmt.Fprintf(&b, "divergences by kind: %v\n", byKind)
	}
	h.t.Logf("seed %d\n%s", h.seed, b.String())
}

func statsTable(stats map[string]*kindStats) string {
	kinds := make([]string, 0, len(stats))
	for k := range stats {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %7s %7s %7s %7s %7s  refusals\n", "kind", "steps", "accept", "refuse", "dberr", "rollbk")
	for _, k := range kinds {
		st := stats[k]
		ref := 0
		var reasons []string
		for r, n := range st.refused {
			ref += n
			reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
		}
		sort.Strings(reasons)
		fmt.Fprintf(&b, "%-44s %7d %7d %6.1f%% %6.1f%% %6.1f%%  %s\n", k, st.total, st.accepted,
			pct(ref, st.total), pct(st.dbErr, st.total), pct(st.rolledBack, st.total), strings.Join(reasons, ", "))
	}
	return b.String()
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// TestWritesAgreeWithOracle runs the seeded write sequence through sqlhook
// and through GORM with gormplugin on each database, checking after every
// step that every row is where its sharding values route, that no key is
// stored twice, and that the shards together equal the unsharded oracle.
func TestWritesAgreeWithOracle(t *testing.T) {
	dbtest.SkipShort(t, "long randomized write run")
	var skip *regexp.Regexp
	if *flagSkip != "" {
		skip = regexp.MustCompile(*flagSkip)
	}
	for _, db := range list(*flagDB) {
		t.Run(db, func(t *testing.T) {
			for _, cl := range list(*flagClient) {
				t.Run(cl, func(t *testing.T) {
					b := openBackend(t, db, cl)
					w := newWorld(t, b)
					h := &harness{t: t, w: w, seed: *flagSeed, skip: skip, stats: map[string]*kindStats{}, shown: map[string]int{}}
					switch cl {
					case "sqlhook":
						h.c = newSQLClient(t, w)
					case "gorm":
						w.withItems = true
						h.c = newGormClient(t, w)
					default:
						t.Fatalf("unknown client %q", cl)
					}
					h.run(*flagSteps)
					h.summary()
				})
			}
		})
	}
}
