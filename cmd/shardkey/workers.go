package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/shardkey/shardkey/keygen/workerlease"
	"github.com/shardkey/shardkey/shardconf"
)

var workersCmd = &command{
	name:     "workers",
	synopsis: "list|release [-backend " + strings.Join(workerBackendNames(), "|") + "] [flags] [worker-id]",
	summary:  "show worker ids held in a database or coordination server; free SQL lease slots",
	details: `Shows the worker ids a fleet holds, where its worker-id source keeps them (-backend):

  sql        the lease table of keygen/workerlease in PostgreSQL or MySQL/MariaDB
             (-dsn, -driver, -namespace, -table; the table is created if missing)
` + workerBackendDetails() + `
"list" prints one row per worker id: HELD (held now), OWNER (the holder), EXPIRES (when its
lease runs out unless renewed), LAST USED (the last issued time the holder stored) and, for the
coordination servers, KEY (the node or key holding it); "-" where there is none. An id released
or expired is listed not held, with its last holder. list only reads: it claims and renews
nothing, and an id it shows free may be taken the moment after. With -all, a NAMESPACE column
comes first.

"release WORKER" (-backend sql only) revokes a lease-table slot: its holder, if still running,
loses the lease at its next renewal and stops issuing keys; the slot becomes claimable once the
last lease has expired plus the safe-guard period, never while two processes could both use it.
ZooKeeper, etcd and Redis free an id when its holder closes or its lease runs out; the CLI never
frees one there.

With -o json, list prints the rows (with each backend's extra fields: ttl_ms, lease_id, fence,
valid_until, holder, leaf, closed, error) and release what it released. Passwords (in a DSN, a
Redis URL, SHARDKEY_REDIS_PASSWORD or SHARDKEY_ETCD_PASSWORD) are never printed; errors name
the backend and address. -timeout bounds the whole command, connecting included.
`,
	examples: `  shardkey workers list -dsn postgres://app@127.0.0.1:5432/app
  shardkey workers list -driver mysql -dsn 'app@tcp(127.0.0.1:3306)/app' -namespace orders -o json
  shardkey workers release -dsn postgres://app@127.0.0.1:5432/app 3
` + workerBackendExamples(),
	setup: func(fs *flag.FlagSet) action {
		f := addWorkersFlags(fs)
		return func(args []string, stdout io.Writer) error {
			if len(args) == 0 {
				return usageErrorf("want a subcommand: list or release")
			}
			sub := args[0]
			// Flags may follow the subcommand: shardkey workers list -dsn ...
			if err := fs.Parse(args[1:]); err != nil {
				return usageErrorf("%v", err)
			}
			rest := fs.Args()
			switch {
			case sub != "list" && sub != "release":
				return usageErrorf("unknown subcommand %q (list or release)", sub)
			case sub == "list" && len(rest) != 0:
				return usageErrorf("workers list takes no arguments")
			case sub == "release" && f.backend.value != "sql":
				return usageErrorf("workers release is for -backend sql only: %s frees a worker id when its holder closes or its lease runs out", workerBackendTitle(f.backend.value))
			case sub == "release" && len(rest) != 1:
				return usageErrorf("workers release takes one worker id")
			case *f.timeout <= 0:
				return usageErrorf("-timeout must be positive")
			}
			if err := f.checkSet(fs); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), *f.timeout)
			defer cancel()
			if f.backend.value == "sql" {
				return runSQLWorkers(ctx, f, sub, rest, stdout)
			}
			b := workerBackendNamed(f.backend.value)
			if err := b.check(f); err != nil {
				return err
			}
			rows, err := b.list(ctx, f)
			if err != nil && ctx.Err() != nil {
				err = fmt.Errorf("no answer within -timeout %v: %w", *f.timeout, err)
			}
			if err != nil {
				return fmt.Errorf("workers list: %s at %s: %w", b.title, b.addr(f), b.scrub(f, err))
			}
			return printWorkerRows(stdout, f.out.value, rows, workerColumns{key: true, namespace: *f.all})
		}
	},
}

// workersFlags are the flags of `shardkey workers`; each backend reads
// its own and checkSet refuses another backend's.
type workersFlags struct {
	backend *choice
	timeout *time.Duration
	out     *choice

	// -backend sql
	dsn       *string
	driver    *choice
	namespace *string
	table     *string

	// the coordination servers' flags, keyed by flag name
	server map[string]*string
	all    *bool // every id space the backend finds
}

// sqlWorkerFlags are the flags only -backend sql reads.
var sqlWorkerFlags = []string{"dsn", "driver", "namespace", "table"}

func addWorkersFlags(fs *flag.FlagSet) *workersFlags {
	names := workerBackendNames()
	var namespaced, alls []string
	for _, b := range workerBackends {
		if b.namespace {
			namespaced = append(namespaced, b.name)
		}
		if b.all {
			alls = append(alls, b.name)
		}
	}
	f := &workersFlags{
		backend:   choiceFlag(fs, "backend", "`backend` holding the worker ids: "+strings.Join(names, ", "), names...),
		timeout:   fs.Duration("timeout", 30*time.Second, "give up after `duration` (connecting included)"),
		dsn:       fs.String("dsn", "", "-backend sql: database `DSN` (required; never printed)"),
		driver:    choiceFlag(fs, "driver", "-backend sql: database `driver`: auto (from the DSN), pgx or mysql", "auto", "pgx", "mysql"),
		namespace: fs.String("namespace", "default", "-backend sql, "+strings.Join(namespaced, ", ")+": worker-id `namespace`"),
		table:     fs.String("table", "shardkey_worker", "-backend sql: lease `table`"),
		server:    map[string]*string{},
	}
	// A flag several backends read (-prefix) is defined once, its usage
	// naming them all; its first backend's usage and default stand.
	var order []string
	users := map[string][]string{}
	first := map[string]workerBackendFlag{}
	for _, b := range workerBackends {
		for _, bf := range b.flags {
			if _, ok := first[bf.name]; !ok {
				order = append(order, bf.name)
				first[bf.name] = bf
			}
			users[bf.name] = append(users[bf.name], b.name)
		}
	}
	for _, name := range order {
		bf := first[name]
		f.server[name] = fs.String(name, bf.def, "-backend "+strings.Join(users[name], ", ")+": "+bf.usage)
	}
	f.all = fs.Bool("all", false, "-backend "+strings.Join(alls, ", ")+": list every Leaf name (zookeeper) or namespace (redis) found, instead of -name or -namespace")
	f.out = outputFlag(fs)
	return f
}

// checkSet refuses a flag the chosen backend does not read: a -dsn given
// with -backend redis is a mistake, not something to ignore.
func (f *workersFlags) checkSet(fs *flag.FlagSet) error {
	own := sqlWorkerFlags
	if b := workerBackendNamed(f.backend.value); b != nil {
		own = nil
		if b.namespace {
			own = append(own, "namespace")
		}
		if b.all {
			own = append(own, "all")
		}
		for _, bf := range b.flags {
			own = append(own, bf.name)
		}
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		switch {
		case err != nil:
		case *f.all && (fl.Name == "name" || fl.Name == "namespace") && slices.Contains(own, fl.Name):
			err = usageErrorf("-all lists every id space: it takes no -%s", fl.Name)
		case slices.Contains([]string{"backend", "timeout", "o"}, fl.Name) || slices.Contains(own, fl.Name):
		default:
			err = usageErrorf("-%s is not a flag of -backend %s", fl.Name, f.backend.value)
		}
	})
	return err
}

// runSQLWorkers is `workers list|release` on the lease table of package
// workerlease.
func runSQLWorkers(ctx context.Context, f *workersFlags, sub string, rest []string, stdout io.Writer) error {
	dsn := *f.dsn
	if dsn == "" {
		return usageErrorf("-dsn is required")
	}
	var w int64
	if sub == "release" {
		var err error
		if w, err = strconv.ParseInt(rest[0], 10, 64); err != nil || w < 0 {
			return usageErrorf("workers release: %q is not a worker id", rest[0])
		}
	}
	driver := f.driver.value
	if driver == "auto" {
		driver = "mysql"
		if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || strings.Contains(dsn, "host=") {
			driver = "pgx"
		}
	}
	ds := shardconf.DataSource{Driver: driver, DSN: dsn}
	// Errors say which database failed, without its password.
	fail := func(err error) error {
		return fmt.Errorf("workers %s: sql (%s) database %s: %w", sub, driver, redactedDSN(ds), scrubDSNs(err, slices.Values([]shardconf.DataSource{ds})))
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	src, err := workerlease.New(ctx, workerlease.Config{DB: db, Table: *f.table, Namespace: *f.namespace})
	if err != nil {
		return fail(err)
	}
	if sub == "release" {
		if err := src.Release(ctx, w); err != nil {
			return fail(err)
		}
		if f.out.value == "json" {
			return writeJSON(stdout, struct {
				Released  int64  `json:"released"`
				Namespace string `json:"namespace"`
			}{w, *f.namespace})
		}
		fmt.Fprintf(stdout, "released worker %d of namespace %s\n", w, *f.namespace)
		return nil
	}
	slots, err := src.List(ctx)
	if err != nil {
		return fail(err)
	}
	rows := make([]workerRow, 0, len(slots))
	for _, s := range slots {
		rows = append(rows, workerRow{Worker: s.Worker, Owner: s.Owner, Held: s.Held, ExpiresAt: s.ExpiresAt, LastUsed: s.LastUsed})
	}
	return printWorkerRows(stdout, f.out.value, rows, workerColumns{})
}
