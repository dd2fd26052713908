package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/shardconf"
)

var xaCmd = &command{
	name:     "xa",
	synopsis: "list|recover [-log-source DS] [-log-table TABLE] [-timeout D] [-o text|json] [-rules] RULES.yaml",
	summary:  "list or settle two-phase commit branches left prepared",
	details: `Works on the branches a two-phase commit (sqlhook or gormplugin WithTwoPhaseCommit)
left prepared on the data sources of the rule file: a process that crashed or lost a
connection between PREPARE and COMMIT leaves them holding their locks until recovery
ends them. Only shardkey's branches of the decision log named by -log-source and
-log-table are touched: other transactions prepared on the same servers, and
branches of another decision log, are neither listed nor ended. Give the same log
data source, table and timeout as the application (WithTwoPhaseLog and
WithTwoPhaseRecovery), or its branches are not found.

"list" prints each prepared branch: its data source, global transaction id, age
and the decision logged for it (commit, rollback, or none yet). It changes nothing.
A branch's age is its transaction's, from the start time written in its id.

"recover" runs recovery once, as the application's coordinator does: a branch
whose transaction is logged as committed is committed, one logged as rolled back
is rolled back, one without a decision older than -timeout is decided rolled back
(in the log first, so a coordinator still running cannot then commit it) and
rolled back; a younger one is left, and so is a MySQL branch, decided or not,
until its transaction is older than -timeout (MariaDB can lose an XA COMMIT sent
while the owning session disconnects). It prints what it did to each branch.

Every data source of the rules with driver pgx or mysql is connected to (its dsn);
sqlite data sources cannot hold branches and are skipped. A data source without a
driver and dsn is an error: a branch there could not be seen.

Exit status: 0 done (recover: every branch it acted on ended as the log says), 1 an
invalid rule file, a data source or the log that could not be read, or (recover) a
branch that could not be ended: the report names each error and what was done to
the other branches; 2 usage error. Passwords in DSNs are never printed.
`,
	examples: `  shardkey xa list rules.yaml
  shardkey xa list -o json -log-source ds_0 -log-table shardkey_xa_log rules.yaml
  shardkey xa recover -timeout 2m rules.yaml
`,
	setup: func(fs *flag.FlagSet) action {
		rf := rulesFlags{
			rules: fs.String("rules", "", "sharding rule `file` (YAML); or give it as the first argument after the subcommand"),
			out:   outputFlag(fs),
		}
		logSource := fs.String("log-source", "", "data `source` holding the decision log (default: the rules' first data source)")
		logTable := fs.String("log-table", xa.DefaultLogTable, "decision log `table`, optionally schema.table")
		timeout := fs.Duration("timeout", xa.DefaultTimeout,
			"`age` after which a branch without a decision is rolled back (at least "+xa.MinTimeout.String()+")")
		return func(args []string, stdout io.Writer) error {
			if len(args) == 0 {
				return usageErrorf("want a subcommand: list or recover")
			}
			sub := args[0]
			if sub != "list" && sub != "recover" {
				return usageErrorf("unknown subcommand %q (list or recover)", sub)
			}
			file, rest, err := rf.file(args[1:])
			if err != nil {
				return err
			}
			if len(rest) != 0 {
				return usageErrorf("xa %s takes one rule file, not %q", sub, rest)
			}
			if *timeout < xa.MinTimeout {
				return usageErrorf("-timeout %v: want at least %v", *timeout, xa.MinTimeout)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			j, err := openXA(ctx, file, xa.Config{LogSource: *logSource, LogTable: *logTable, Timeout: *timeout, Interval: -1})
			if err != nil {
				return err
			}
			defer j.close()
			if sub == "list" {
				return j.list(ctx, stdout, rf.out.value)
			}
			return j.recover(ctx, stdout, rf.out.value)
		}
	},
}

// xaJob is one run of `shardkey xa`: the rules' data sources, open, and a
// coordinator over them that is attached, never started (no table created,
// no timer, no recovery behind the command's back).
type xaJob struct {
	file  string
	dss   []shardconf.DataSource
	dbs   []*sql.DB
	coord *xa.Coordinator
}

// openXA loads the rule file and connects to each of its data sources
// that can hold a branch.
func openXA(ctx context.Context, file string, cfg xa.Config) (*xaJob, error) {
	rc, err := shardconf.Load(file)
	if err != nil {
		return nil, err
	}
	j := &xaJob{file: file, dss: rc.DataSources}
	if len(j.dss) == 0 {
		return nil, fmt.Errorf("%s: no dataSources", file)
	}
	dialects := make([]dialect.Name, len(j.dss))
	for i, ds := range j.dss { // every one checked before any is connected to
		d, err := dialect.Parse(ds.Driver)
		if err != nil || ds.DSN == "" {
			return nil, fmt.Errorf("%s: data source %s: xa needs its driver (pgx, mysql or sqlite) and dsn "+
				"to see the branches it may hold", file, ds.Name)
		}
		dialects[i] = d
	}
	var sources []xa.Source
	for i, ds := range j.dss {
		src, err := j.open(ctx, ds, dialects[i])
		if err != nil {
			j.close()
			return nil, err
		}
		sources = append(sources, src)
	}
	cfg.Logger = slog.New(slog.DiscardHandler) // the report says what happened
	if j.coord, err = xa.New(cfg, sources); err != nil {
		j.close()
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	// Attach reads the log's id, which every branch of the deployment
	// carries; it creates, checks and recovers nothing.
	if err := j.coord.Attach(ctx); err != nil {
		j.close()
		return nil, j.scrub(fmt.Errorf("%s: %w (-log-source and -log-table must name the application's decision log)", file, err))
	}
	return j, nil
}

// open connects to data source ds (and pings it) when its dialect can
// prepare branches; a SQLite data source is passed on without a pool.
func (j *xaJob) open(ctx context.Context, ds shardconf.DataSource, d dialect.Name) (xa.Source, error) {
	if d == dialect.SQLite {
		return xa.Source{Name: ds.Name, Dialect: d}, nil
	}
	db, err := sql.Open(map[dialect.Name]string{dialect.Postgres: "pgx", dialect.MySQL: "mysql"}[d], ds.DSN)
	if err != nil {
		return xa.Source{}, j.scrub(fmt.Errorf("%s: data source %s (%s): %w", j.file, ds.Name, redactedDSN(ds), err))
	}
	db.SetMaxOpenConns(4)
	j.dbs = append(j.dbs, db)
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		return xa.Source{}, j.scrub(fmt.Errorf("%s: data source %s (%s): %w", j.file, ds.Name, redactedDSN(ds), err))
	}
	return xa.Source{Name: ds.Name, Dialect: d, DB: db}, nil
}

func (j *xaJob) close() {
	if j.coord != nil {
		j.coord.Close()
	}
	for _, db := range j.dbs {
		db.Close()
	}
}

// scrub removes every data source's DSN and password from an error's text.
func (j *xaJob) scrub(err error) error { return scrubDSNs(err, slices.Values(j.dss)) }

// xaBranch is one branch as printed.
type xaBranch struct {
	Source   string `json:"dataSource"`
	GTRID    string `json:"gtrid"`
	Age      string `json:"age,omitempty"`
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

func inDoubtBranch(b xa.InDoubt) xaBranch {
	return xaBranch{Source: b.Source, GTRID: b.GTRID, Age: b.Age.Round(time.Second).String(), Decision: decisionText(b.Decision)}
}

func decisionText(d string) string {
	if d == "" {
		return "none"
	}
	return d
}

func (j *xaJob) list(ctx context.Context, w io.Writer, form string) error {
	bs, err := j.coord.List(ctx)
	if err != nil {
		return j.scrub(err)
	}
	rows := make([]xaBranch, 0, len(bs))
	for _, b := range bs {
		rows = append(rows, inDoubtBranch(b))
	}
	if form == "json" {
		return writeJSON(w, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no prepared two-phase commit branches")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DATA SOURCE\tGTRID\tAGE\tDECISION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Source, r.GTRID, r.Age, r.Decision)
	}
	return tw.Flush()
}

// xaRecovery is recover's report as printed.
type xaRecovery struct {
	Committed  []xaBranch `json:"committed"`
	RolledBack []xaBranch `json:"rolledBack"`
	Left       []xaBranch `json:"left"`
	Errors     []string   `json:"errors"`
}

func (j *xaJob) recover(ctx context.Context, w io.Writer, form string) error {
	rep, err := j.coord.Recover(ctx)
	out := xaRecovery{Committed: []xaBranch{}, RolledBack: []xaBranch{}, Left: []xaBranch{}, Errors: []string{}}
	for _, b := range rep.Committed {
		out.Committed = append(out.Committed, xaBranch{Source: b.Source, GTRID: b.GTRID, Decision: "commit"})
	}
	for _, b := range rep.RolledBack {
		out.RolledBack = append(out.RolledBack, xaBranch{Source: b.Source, GTRID: b.GTRID, Decision: "rollback"})
	}
	for _, b := range rep.Left {
		r := inDoubtBranch(b)
		r.Reason = j.leftReason(b)
		out.Left = append(out.Left, r)
	}
	for _, e := range append(rep.Errors, err) {
		if e != nil {
			out.Errors = append(out.Errors, j.scrub(e).Error())
		}
	}
	if form == "json" {
		err = writeJSON(w, out)
	} else {
		err = out.writeText(w)
	}
	if err != nil {
		return err
	}
	if len(out.Errors) > 0 {
		return errSilent // exit 1: the report names each error
	}
	return nil
}

// leftReason says why recovery left a branch prepared.
func (j *xaJob) leftReason(b xa.InDoubt) string {
	if b.Decision == "" {
		return "no decision logged and younger than -timeout: its coordinator may still commit it"
	}
	// xa finishes a MySQL branch only past Timeout: an XA COMMIT from
	// another session while the owner's disconnects can be lost.
	return "a MySQL branch is finished only once its transaction is older than -timeout"
}

func (r xaRecovery) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, b := range r.Committed {
		fmt.Fprintf(tw, "committed\t%s\t%s\tlogged commit\n", b.Source, b.GTRID)
	}
	for _, b := range r.RolledBack {
		fmt.Fprintf(tw, "rolled back\t%s\t%s\tlogged rollback\n", b.Source, b.GTRID)
	}
	for _, b := range r.Left {
		fmt.Fprintf(tw, "left\t%s\t%s\tage %s, decision %s: %s\n", b.Source, b.GTRID, b.Age, b.Decision, b.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	_, err := fmt.Fprintf(w, "recovery: %d committed, %d rolled back, %d left, %d errors\n",
		len(r.Committed), len(r.RolledBack), len(r.Left), len(r.Errors))
	return err
}
