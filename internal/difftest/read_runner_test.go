package difftest

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/sqlhook"
)

// readCase is one generated read: run through shardkey and on the oracle.
type readCase struct {
	family string // for the summary: sql.select, sql.group, gorm.find...
	desc   string // the SQL and its arguments, or the GORM call
	kinds  []colKind
	shard  func() (*readResult, error)
	oracle func() (*readResult, error) // the same statement on the oracle
	// full is the oracle's rows without LIMIT/OFFSET, the ORDER BY keys
	// appended to the payload; nil: the oracle's result is compared as
	// a multiset.
	full    func() (*readResult, error)
	ordered bool
	win     window
	// untyped: the Go types of the values depend on which row comes first
	// (GORM types a map scan's column by the first row's value, and SQLite's
	// driver answers by that row's storage class, NULL included), which SQL
	// leaves free; values are compared, their types not.
	untyped bool
	// shrink returns smaller variants of the case, for a divergence.
	shrink func() []readCase
}

// verdict of one case.
type verdict uint8

const (
	agreed verdict = iota
	refused
	divergent
	skipped
)

// readStats counts verdicts of one database and layer.
type readStats struct {
	n       [4]int
	reasons map[string]int
	sample  map[string]string
	skips   map[string]int
	byFam   map[string]*[4]int
}

func newReadStats() *readStats {
	return &readStats{reasons: map[string]int{}, sample: map[string]string{}, skips: map[string]int{}, byFam: map[string]*[4]int{}}
}

// outcome is one case's verdict and, for a divergence, what differed.
type outcome struct {
	v      verdict
	reason string // refusal reason, skip reason or the divergence
}

// judge runs a case and compares.
func (rc readCase) judge(db string) outcome {
	ores, oerr := guardRead(rc.oracle)
	if oerr != nil {
		return outcome{skipped, oerr.Error()}
	}
	sres, serr := guardRead(rc.shard)
	if serr != nil {
		if errors.Is(serr, sqlhook.ErrUnsupported) || errors.Is(serr, gormplugin.ErrUnsupported) {
			return outcome{refused, serr.Error()}
		}
		return outcome{divergent, fmt.Sprintf("shardkey failed where the oracle answered:\n    error: %v\n    oracle:\n%s",
			serr, canon{db: db}.show(ores.rows, len(ores.cols)))}
	}
	c := canon{db: db, kinds: rc.kinds, untyped: rc.untyped}
	for _, t := range ores.types {
		c.float = append(c.float, floatType(t))
	}
	if !slices.Equal(sres.cols, ores.cols) {
		return outcome{divergent, fmt.Sprintf("column names: shardkey %q, oracle %q", sres.cols, ores.cols)}
	}
	if p := sameTypes(sres, ores); p != "" {
		return outcome{divergent, p}
	}
	full := ores
	if rc.full != nil {
		var err error
		if full, err = guardRead(rc.full); err != nil {
			return outcome{skipped, "full oracle read: " + err.Error()}
		}
	}
	w := rc.win
	if rc.full == nil {
		w = window{0, -1}
	}
	if p := c.compareRows(full.rows, len(ores.cols), rc.ordered, w, sres.rows); p != "" {
		from := 0 // show the rows from just before the first difference
		if _, err := fmt.Sscanf(p, "rows %d..", &from); err == nil {
			from = max(0, from-2)
		}
		return outcome{divergent, fmt.Sprintf("%s\n    shardkey (from row %d):\n%s    oracle (from row %d):\n%s", p,
			from, c.show(tail(sres.rows, from), len(sres.cols)), from, c.show(tail(ores.rows, from), len(ores.cols)))}
	}
	return outcome{agreed, ""}
}

// sameTypes checks that shardkey reports each column's database type as
// the database does, where the driver reports one. (The Go type of each
// value is compared with the value, see canon.rowKey.)
func sameTypes(sres, ores *readResult) string {
	if len(sres.types) == len(ores.types) && !slices.Equal(sres.types, ores.types) {
		return fmt.Sprintf("column types: shardkey %q, oracle %q", sres.types, ores.types)
	}
	return ""
}

var errReadPanic = errors.New("difftest: panic")

func guardRead(f func() (*readResult, error)) (res *readResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errReadPanic, r)
		}
	}()
	return f()
}

// minimise shrinks a divergent case while it still diverges (cheap: a
// few dozen statements at most).
func (rc readCase) minimise(db string, budget time.Duration) (readCase, outcome) {
	deadline := time.Now().Add(budget)
	best, bo := rc, rc.judge(db)
	for improved := true; improved && time.Now().Before(deadline); {
		improved = false
		if best.shrink == nil {
			break
		}
		for _, cand := range best.shrink() {
			if o := cand.judge(db); o.v == divergent {
				best, bo, improved = cand, o, true
				break
			}
		}
	}
	return best, bo
}

// reasonOf groups a refusal message: quoted parts, numbers and
// placeholders dropped, so that one cause counts once.
var (
	quotedRe = regexp.MustCompile("\"[^\"]*\"|'[^']*'|`[^`]*`|\\$\\d+|\\b\\d+\\b")
)

func reasonOf(msg string) string {
	msg = strings.TrimPrefix(msg, "sqlhook: unsupported statement: ")
	msg = strings.TrimPrefix(msg, "gormplugin: statement cannot be routed: ")
	if i := strings.Index(msg, " (statement "); i >= 0 {
		msg = msg[:i]
	}
	msg = quotedRe.ReplaceAllString(msg, "_")
	if len(msg) > 110 {
		msg = msg[:110] + "…"
	}
	return msg
}

func (st *readStats) add(fam, desc string, o outcome) {
	st.n[o.v]++
	f := st.byFam[fam]
	if f == nil {
		f = &[4]int{}
		st.byFam[fam] = f
	}
	f[o.v]++
	switch o.v {
	case refused:
		r := reasonOf(o.reason)
		st.reasons[r]++
		if _, ok := st.sample[r]; !ok {
			st.sample[r] = o.reason + "\n      " + desc
		}
	case skipped:
		r := reasonOf(o.reason)
		st.skips[r]++
	}
}

// refusedShare is the share of the statements the oracle answered that
// shardkey refused, counting every family or only the forms
// (leaving out sql.tricky: window functions, subqueries on the logic
// table, UNION, self-joins... which no merge of per-shard rows answers).
func (st *readStats) refusedShare(all bool) float64 {
	var n [4]int
	for f, c := range st.byFam {
		if all || (f != trickyFamily && f != gormTrickyFamily) {
			for i := range n {
				n[i] += c[i]
			}
		}
	}
	d := n[agreed] + n[refused] + n[divergent]
	if d == 0 {
		return 0
	}
	return float64(n[refused]) / float64(d)
}

func (st *readStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agreed %d, refused %d (%.1f%% of answered; %.1f%% without %s), divergent %d, skipped %d\n",
		st.n[agreed], st.n[refused], 100*st.refusedShare(true), 100*st.refusedShare(false), "*.tricky",
		st.n[divergent], st.n[skipped])
	fmt.Fprintf(&b, "  %-16s %6s %6s %6s %6s\n", "family", "agree", "refuse", "diverg", "skip")
	for _, f := range slices.Sorted(maps.Keys(st.byFam)) {
		c := st.byFam[f]
		fmt.Fprintf(&b, "  %-16s %6d %6d %6d %6d\n", f, c[0], c[1], c[2], c[3])
	}
	b.WriteString("  refusals by reason:\n")
	byCount := slices.SortedFunc(maps.Keys(st.reasons), func(a, b string) int { return st.reasons[b] - st.reasons[a] })
	for _, r := range byCount {
		fmt.Fprintf(&b, "    %5d  %s\n", st.reasons[r], r)
	}
	if len(st.skips) > 0 {
		b.WriteString("  skipped (the oracle failed) by reason:\n")
		for _, r := range slices.SortedFunc(maps.Keys(st.skips), func(a, b string) int { return st.skips[b] - st.skips[a] }) {
			fmt.Fprintf(&b, "    %5d  %s\n", st.skips[r], r)
		}
	}
	return b.String()
}

// readConf is a run's settings, from SHARDKEY_DIFFREAD_STEPS, _SEED, _DB,
// _LAYER, _MAXREFUSED (a share, 0..1), _ROWS and _ONLY.
type readConf struct {
	steps, rows int
	only        int // run this step alone (-1: all)
	seed        uint64
	dbs, layers []string
	maxRefused  float64
}

// readMaxRefused is the refusal share (sql.tricky and gorm.tricky aside)
// above which the CI run fails. The goal is 15%; measured with the
// fixed seed at 600 statements: 7.0-11.2% on PostgreSQL and MariaDB,
// 12.7-14.9% on SQLite (also at 20,000: up to 15.5%), where timestamps are
// refused since SQLite compares them as the stored text, which its driver
// hands on parsed. What is left is text under a locale collation, SQLite
// timestamps, functions and casts over aggregates, PostgreSQL interval
// and money, MySQL's SUM of a division, SQLite's AVG over a sum that
// overflows.
const readMaxRefused = 0.20

func readConfFromEnv(t *testing.T) readConf {
	c := readConf{steps: 600, rows: 300, seed: 20261126, dbs: []string{"postgres", "mariadb", "sqlite"},
		layers: []string{"sqlhook", "gorm", "gorm+sqlhook"}, maxRefused: readMaxRefused}
	num := func(k string, dst *int) {
		if v := os.Getenv(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			*dst = n
		}
	}
	num("SHARDKEY_DIFFREAD_STEPS", &c.steps)
	num("SHARDKEY_DIFFREAD_ROWS", &c.rows)
	c.only = -1
	num("SHARDKEY_DIFFREAD_ONLY", &c.only)
	if c.only >= c.steps {
		c.steps = c.only + 1
	}
	if v := os.Getenv("SHARDKEY_DIFFREAD_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SHARDKEY_DIFFREAD_SEED: %v", err)
		}
		c.seed = n
	}
	if v := os.Getenv("SHARDKEY_DIFFREAD_DB"); v != "" {
		c.dbs = list(v)
	}
	if v := os.Getenv("SHARDKEY_DIFFREAD_LAYER"); v != "" {
		c.layers = list(v)
	}
	if v := os.Getenv("SHARDKEY_DIFFREAD_MAXREFUSED"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("SHARDKEY_DIFFREAD_MAXREFUSED: %v", err)
		}
		c.maxRefused = f
	}
	return c
}

// readGen builds the case of one step.
type readGen interface {
	build(rng *rand.Rand) readCase
}

// TestReadsAgreeWithOracle runs seeded random SELECTs through sqlhook and
// GORM calls through gormplugin over a table sharded across two data
// sources, and the same reads on one unsharded table with the same rows:
// every read either returns what the oracle returns (as SQL allows: in
// any order without ORDER BY, tied rows in any order, any of the tied
// rows where LIMIT cuts a run of ties) or is refused with ErrUnsupported.
func TestReadsAgreeWithOracle(t *testing.T) {
	dbtest.SkipShort(t, "long randomized read run")
	conf := readConfFromEnv(t)
	for _, db := range conf.dbs {
		t.Run(db, func(t *testing.T) {
			w := newReadWorld(t, db, conf.seed, conf.rows)
			for _, layer := range conf.layers {
				t.Run(layer, func(t *testing.T) {
					var g readGen
					switch layer {
					case "sqlhook":
						g = &sqlReadGen{w: w}
					case "gorm":
						g = newGormReadGen(t, w)
					case "gorm+sqlhook":
						g = newGormOverHookGen(t, w)
					default:
						t.Fatalf("unknown layer %q", layer)
					}
					runReads(t, w, g, conf, db, layer)
				})
			}
		})
	}
}

func runReads(t *testing.T, w *readWorld, g readGen, conf readConf, db, layer string) {
	st := newReadStats()
	start := time.Now()
	shown := 0
	for step := 0; step < conf.steps; step++ {
		if conf.only >= 0 && step != conf.only {
			continue
		}
		rng := rand.New(rand.NewPCG(conf.seed, uint64(step)*0x9e3779b97f4a7c15+7))
		rc := g.build(rng)
		o := rc.judge(db)
		st.add(rc.family, rc.desc, o)
		if o.v != divergent {
			continue
		}
		if shown < 25 {
			shown++
			m, mo := rc.minimise(db, 5*time.Second)
			min := ""
			if m.desc != rc.desc {
				min = fmt.Sprintf("\n  minimised: %s\n  %s", m.desc, mo.reason)
			}
			t.Errorf("DIVERGENCE %s/%s seed %d step %d (%s; replay: SHARDKEY_DIFFREAD_SEED=%d SHARDKEY_DIFFREAD_ONLY=%d):\n  %s\n  %s%s",
				db, layer, conf.seed, step, rc.family, conf.seed, step, rc.desc, o.reason, min)
		} else {
			t.Fail()
		}
	}
	t.Logf("%s/%s, seed %d, %d statements in %v: %s", db, layer, conf.seed, conf.steps,
		time.Since(start).Round(time.Millisecond), st)
	if testing.Verbose() {
		for _, r := range slices.Sorted(maps.Keys(st.sample)) {
			t.Logf("refusal sample [%s]: %s", r, st.sample[r])
		}
	}
	if share := st.refusedShare(false); share > conf.maxRefused {
		t.Errorf("%s/%s refused %.1f%% of the statements the oracle answered (*.tricky aside), above %.0f%%",
			db, layer, 100*share, 100*conf.maxRefused)
	}
}

func tail(rows [][]any, from int) [][]any { return rows[min(from, len(rows)):] }
