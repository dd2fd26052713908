package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// rulesFlags are the flags of commands that read a rule file.
type rulesFlags struct {
	rules       *string
	keygenProps *string
	out         *choice
	// standIns: register stand-ins for Go algorithms (validate only).
	standIns bool
	goTypes  *string
}

func addRulesFlags(fs *flag.FlagSet) rulesFlags {
	return rulesFlags{
		rules:       fs.String("rules", "", "sharding rule `file` (YAML); or give it as the first argument"),
		keygenProps: fs.String("keygen-props", "", "props added to every key generator of the rules, as `k=v,k=v` (e.g. worker-id=1)"),
		out:         outputFlag(fs),
	}
}

// file returns the rule file, from -rules or else the first argument, and
// the other arguments.
func (f rulesFlags) file(args []string) (string, []string, error) {
	if *f.rules != "" {
		return *f.rules, args, nil
	}
	if len(args) == 0 || args[0] == "" {
		return "", nil, usageErrorf("want a rule file: -rules FILE or the first argument")
	}
	return args[0], args[1:], nil
}

// load reads and compiles a rule file, with -keygen-props added to its
// key generators. No command here issues keys from the rules, so a key
// generator with no worker-id at all (a file shared by processes that each
// supply their own) gets a placeholder one; load names those generators.
// A worker-id that is given but wrong is still an error.
//
// With standIns (validate), Go algorithms the rules need are stood in for
// (registerStandIns) and each is returned as a note in placeholders' place:
// see loadResult.
func (f rulesFlags) load(path string) (r *shardconf.Router, placeholders []string, err error) {
	res, err := f.loadAll(path)
	return res.router, res.placeholders, err
}

// loadResult is what loadAll found besides the router.
type loadResult struct {
	router       *shardconf.Router
	placeholders []string // key generators given a placeholder worker-id
	standIns     []string // warnings: Go algorithms stood in for
}

func (f rulesFlags) loadAll(path string) (res loadResult, err error) {
	props, err := keygen.ParseProps(*f.keygenProps)
	if err != nil {
		return res, usageErrorf("-keygen-props: %v", err)
	}
	cfg, err := shardconf.Load(path)
	if err != nil {
		return res, err
	}
	if f.standIns {
		if res.standIns, err = registerStandIns(cfg, commaList(*f.goTypes)); err != nil {
			return res, usageErrorf("%v", err)
		}
	}
	if !hasWorkerID(props) {
		res.placeholders = placeholderWorkers(cfg)
	}
	res.router, err = shardconf.NewRouter(cfg, shardconf.WithKeyGenProps(props))
	return res, err
}

func hasWorkerID(p keygen.Props) bool {
	for k := range p {
		if keygen.CanonicalPropKey(k) == "worker-id" {
			return true
		}
	}
	return false
}

// placeholderWorkers gives worker-id 0 to the key generators of cfg whose
// type requires a worker id and that have none, so that rules written for
// processes that each pass their own can be read, and returns their names.
func placeholderWorkers(cfg *shardconf.Config) []string {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(cfg.KeyGenerators)) {
		kg := cfg.KeyGenerators[name]
		if hasWorkerID(kg.Props) {
			continue
		}
		// Only the types that require one: try without.
		g, err := keygen.New(kg.Type, kg.Props)
		if c, ok := g.(io.Closer); ok {
			c.Close()
		}
		var pe *keygen.PropError
		if !errors.As(err, &pe) || keygen.CanonicalPropKey(pe.Key) != "worker-id" {
			continue
		}
		patched := *kg
		patched.Props = maps.Clone(kg.Props)
		if patched.Props == nil {
			patched.Props = keygen.Props{}
		}
		patched.Props["worker-id"] = "0"
		cfg.KeyGenerators[name] = &patched
		names = append(names, name)
	}
	return names
}

// placeholderNote says which key generators got a placeholder worker-id.
func placeholderNote(names []string) string {
	return fmt.Sprintf("key generator %s has no worker-id: each process must supply its own "+
		"(shardconf.WithKeyGenProps, or worker-id: auto with a lease)", strings.Join(names, ", "))
}

// problems splits a joined error into lines.
func problems(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		out = append(out, e.Error())
	}
	walk(err)
	return out
}

// unreachableLines renders the partitions no data node serves, one a line
// with the file, line and column of the algorithm that computes them.
func unreachableLines(file string, us []shardconf.Unreachable) []string {
	out := make([]string, 0, len(us))
	for _, u := range us {
		loc := file
		if u.Pos.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", file, u.Pos.Line, u.Pos.Column)
		}
		if u.Pos.Path != "" {
			loc += ": " + u.Pos.Path
		}
		out = append(out, fmt.Sprintf("%s: %s (a value there fails with no route)", loc, u))
	}
	return out
}

var validateCmd = &command{
	name:     "validate",
	synopsis: "[-strict] [-go-algorithms NAME,...] [-keygen-props k=v,...] [-o text|json] [-rules] RULES.yaml",
	summary:  "check a sharding rule file",
	details: `Validate loads a ShardingSphere-style rule file (5.x rules: or 4.x
shardingRule:), compiles every table, algorithm and key generator, and
prints every problem to stderr with its file, line, column and YAML path.
It exits 1 when there is any. With -o json the result, problems included,
goes to stdout.

A partition an algorithm computes but no data node serves (MOD with a
sharding-count above the tables, an INTERVAL whose datetime-upper runs
past the last table, an INLINE "% 4" over two tables) loads, as in
ShardingSphere: a value landing there fails with no route at the
statement. Validate lists each as a warning (exit 0); with -strict they
are problems (exit 1).

Go sharding algorithms are registered by the service that loads the file
(shardconf.RegisterAlgorithm), not by this command. Validate stands in for
the class of every CLASS_BASED algorithm, and for each type named with
-go-algorithms, and warns that the service must register it (a problem
with -strict); the rest of the file is checked as usual. A type neither
built in nor named with -go-algorithms stays a problem, so a misspelled
type is caught.
`,
	examples: `  shardkey validate rules.yaml
  shardkey validate -rules rules.yaml
  shardkey validate -keygen-props worker-id=1 rules.yaml
  shardkey validate -o json rules.yaml
  shardkey validate -strict rules.yaml
  shardkey validate -go-algorithms REGION,TENANT rules.yaml
`,
	setup: func(fs *flag.FlagSet) action {
		rf := addRulesFlags(fs)
		rf.standIns = true
		rf.goTypes = fs.String("go-algorithms", "", "algorithm types the service registers in Go, as `NAME,NAME`")
		strict := fs.Bool("strict", false, "treat partitions no data node serves and Go algorithms as problems (exit 1)")
		return func(args []string, stdout io.Writer) error {
			file, rest, err := rf.file(args)
			if err != nil {
				return err
			}
			if len(rest) != 0 {
				return usageErrorf("want one rule file, got also %q", rest[0])
			}
			res, err := rf.loadAll(file)
			r, placeholders := res.router, res.placeholders
			var ue *usageError
			if errors.As(err, &ue) {
				return err
			}
			var ps, warnings []string
			if err != nil {
				ps = problems(err)
			} else {
				warnings = append(res.standIns, unreachableLines(file, r.Unreachable())...)
				if *strict {
					ps, warnings = warnings, nil
				}
			}
			if rf.out.value == "json" {
				res := struct {
					OK          bool     `json:"ok"`
					Problems    []string `json:"problems"`
					Warnings    []string `json:"warnings,omitempty"`
					Notes       []string `json:"notes,omitempty"`
					Tables      []string `json:"tables,omitempty"`
					DataSources []string `json:"dataSources,omitempty"`
				}{OK: len(ps) == 0, Problems: append([]string{}, ps...), Warnings: warnings}
				if len(placeholders) > 0 {
					res.Notes = []string{placeholderNote(placeholders)}
				}
				if err == nil {
					res.Tables, res.DataSources = r.Tables(), r.DataSources()
				}
				if werr := writeJSON(stdout, res); werr != nil {
					return werr
				}
				if len(ps) > 0 {
					return errSilent
				}
				return nil
			}
			if len(ps) > 0 {
				// Problems are diagnostics: stderr, one a line, like a compiler's.
				return fmt.Errorf("%s: %d problem(s):\n%s", file, len(ps), strings.Join(ps, "\n"))
			}
			fmt.Fprintf(stdout, "%s: ok (%d tables, %d data sources)\n", file, len(r.Tables()), len(r.DataSources()))
			for _, w := range warnings {
				fmt.Fprintf(stdout, "warning: %s\n", w)
			}
			if len(placeholders) > 0 {
				fmt.Fprintf(stdout, "note: %s\n", placeholderNote(placeholders))
			}
			return nil
		}
	},
}

// errSilent exits 1 without a message: the command already printed it.
var errSilent = errors.New("")

var routeCmd = &command{
	name:     "route",
	synopsis: "[-scatter] [-hint-database v,...] [-hint-table v,...] [-keygen-props k=v,...] [-o text|json] [-rules] RULES.yaml TABLE [COND...]",
	summary:  "show where a statement on a table goes",
	details: `Route prints the data source and table each matching row lives in, for
a logic table and conditions on its columns (ANDed):

  column=v          equality          column=v1,v2,v3   IN list
  column=lo..hi     BETWEEN (inclusive)
  column<v  column<=v  column>v  column>=v

Values that parse as integers are integers; anything else is a string.
Quote the conditions with < and > for your shell. Without a condition on
every sharding column it fails (exit 1), as shardkey's router does;
-scatter expands the unconstrained strategies to all their targets.

A table with a hint strategy routes by hint values only, as a service
gives them with shardconf.WithHint: -hint-database and -hint-table give
them here (integers or strings, comma separated).
`,
	examples: `  shardkey route rules.yaml t_order order_id=123 user_id=7
  shardkey route rules.yaml t_order user_id=7 order_id=1,2,3
  shardkey route rules.yaml t_order user_id=7 'order_id>=100' 'order_id<200'
  shardkey route -scatter -o json rules.yaml t_order user_id=7
  shardkey route -rules rules.yaml -keygen-props worker-id=1 t_order order_id=123 user_id=7
  shardkey route -hint-database 1 -hint-table 3 rules.yaml t_hinted
`,
	setup: func(fs *flag.FlagSet) action {
		rf := addRulesFlags(fs)
		scatter := fs.Bool("scatter", false, "route statements lacking a sharding key to every target")
		hintDB := fs.String("hint-database", "", "hint values for the table's database strategy, as `v,v`")
		hintTable := fs.String("hint-table", "", "hint values for the table's table strategy, as `v,v`")
		return func(args []string, stdout io.Writer) error {
			file, args, err := rf.file(args)
			if err != nil {
				return err
			}
			if len(args) < 1 {
				return usageErrorf("want a rule file and a table")
			}
			conds := make([]shardconf.Cond, 0, len(args)-1)
			for _, a := range args[1:] {
				c, err := parseCond(a)
				if err != nil {
					return err
				}
				conds = append(conds, c)
			}
			r, _, err := rf.load(file)
			if err != nil {
				return err
			}
			ctx := context.Background()
			if h := (shardconf.Hint{Database: hintValues(*hintDB), Table: hintValues(*hintTable)}); h.Database != nil || h.Table != nil {
				ctx = shardconf.WithHint(ctx, args[0], h)
			}
			route := r.RouteContext
			if *scatter {
				route = r.ScatterContext
			}
			ts, err := route(ctx, args[0], conds...)
			if err != nil {
				return err
			}
			return writeTargets(stdout, ts, rf.out.value)
		}
	},
}

// hintValues parses a -hint-* flag: nil when empty.
func hintValues(s string) []any {
	if s == "" {
		return nil
	}
	var out []any
	for _, x := range strings.Split(s, ",") {
		out = append(out, condValue(x))
	}
	return out
}

// parseCond parses column=v, column=a,b, column=lo..hi, column<v ...
func parseCond(s string) (shardconf.Cond, error) {
	for _, op := range []string{"<=", ">=", "<", ">", "="} {
		i := strings.Index(s, op)
		if i <= 0 {
			continue
		}
		col, v := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(op):])
		if v == "" {
			break
		}
		switch op {
		case "<":
			return shardconf.Lt(col, condValue(v)), nil
		case "<=":
			return shardconf.Le(col, condValue(v)), nil
		case ">":
			return shardconf.Gt(col, condValue(v)), nil
		case ">=":
			return shardconf.Ge(col, condValue(v)), nil
		}
		if lo, hi, ok := strings.Cut(v, ".."); ok {
			return shardconf.Between(col, condValue(lo), condValue(hi)), nil
		}
		if strings.Contains(v, ",") {
			var vs []any
			for _, x := range strings.Split(v, ",") {
				vs = append(vs, condValue(strings.TrimSpace(x)))
			}
			return shardconf.In(col, vs...), nil
		}
		return shardconf.Eq(col, condValue(v)), nil
	}
	return shardconf.Cond{}, usageErrorf("condition %q: want column=value, column=a,b, column=lo..hi or column<value", s)
}

func condValue(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n
	}
	return s
}

func writeTargets(w io.Writer, ts []shardconf.Target, out string) error {
	if out == "json" {
		type target struct {
			DataSource string `json:"dataSource"`
			Table      string `json:"table"`
		}
		list := make([]target, len(ts))
		for i, t := range ts {
			list[i] = target{t.DataSource, t.Table}
		}
		return writeJSON(w, list)
	}
	bw := bufio.NewWriter(w)
	for _, t := range ts {
		fmt.Fprintf(bw, "%s\t%s\n", t.DataSource, t.Table)
	}
	return bw.Flush()
}

var targetsCmd = &command{
	name:     "targets",
	synopsis: "[-keygen-props k=v,...] [-o text|json] [-rules] RULES.yaml [TABLE...]",
	summary:  "list every physical table of the rules",
	details: `Targets lists the physical tables of every logic table in the rules (or of
the tables named), one line each: data source, physical table, logic table.
Broadcast tables appear once per data source. Use it to create or migrate
the tables; ddl prints their CREATE TABLE statements.
`,
	examples: `  shardkey targets rules.yaml
  shardkey targets rules.yaml t_order
  shardkey targets -o json rules.yaml
  shardkey targets -rules rules.yaml t_order t_order_item
`,
	setup: func(fs *flag.FlagSet) action {
		rf := addRulesFlags(fs)
		return func(args []string, stdout io.Writer) error {
			file, tables, err := rf.file(args)
			if err != nil {
				return err
			}
			r, _, err := rf.load(file)
			if err != nil {
				return err
			}
			if len(tables) == 0 {
				tables = r.Tables()
			}
			type row struct {
				DataSource string `json:"dataSource"`
				Table      string `json:"table"`
				Logic      string `json:"logicTable"`
			}
			rows := []row{}
			for _, t := range tables {
				ts, err := r.Targets(t)
				if err != nil {
					return err
				}
				for _, x := range ts {
					rows = append(rows, row{x.DataSource, x.Table, t})
				}
			}
			if rf.out.value == "json" {
				return writeJSON(stdout, rows)
			}
			bw := bufio.NewWriter(stdout)
			for _, x := range rows {
				fmt.Fprintf(bw, "%s\t%s\t%s\n", x.DataSource, x.Table, x.Logic)
			}
			return bw.Flush()
		}
	},
}
