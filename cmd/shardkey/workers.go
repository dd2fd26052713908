package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/shardkey/shardkey/keygen/workerlease"
)

var workersCmd = &command{
	name:     "workers",
	synopsis: "list|release [flags] [worker-id]",
	summary:  "show or free worker-id lease slots in a database",
	details: `Reads the worker-id lease table of package keygen/workerlease (created if missing).
"list" shows every slot of the namespace: its owner, when its lease expires and the last time
a key was issued with it. "release WORKER" revokes a slot: its holder, if still running, loses
the lease at its next renewal and stops issuing keys; the slot becomes claimable once the last
lease has expired plus the safe-guard period, never while two processes could both use it.
With -o json, list prints the slots and release what it released as JSON.
`,
	examples: `  shardkey workers list -dsn postgres://app@127.0.0.1:5432/app
  shardkey workers list -driver mysql -dsn 'app@tcp(127.0.0.1:3306)/app' -namespace orders -o json
  shardkey workers release -dsn postgres://app@127.0.0.1:5432/app 3
`,
	setup: func(fs *flag.FlagSet) action {
		dsn := fs.String("dsn", "", "database `DSN` (required; never printed)")
		drv := choiceFlag(fs, "driver", "database `driver`: auto (from the DSN), pgx or mysql", "auto", "pgx", "mysql")
		ns := fs.String("namespace", "default", "lease `namespace`")
		table := fs.String("table", "shardkey_worker", "lease `table`")
		out := outputFlag(fs)
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
			case *dsn == "":
				return usageErrorf("-dsn is required")
			case sub == "list" && len(rest) != 0:
				return usageErrorf("workers list takes no arguments")
			case sub == "release" && len(rest) != 1:
				return usageErrorf("workers release takes one worker id")
			}
			driver := drv.value
			if driver == "auto" {
				driver = "mysql"
				if strings.HasPrefix(*dsn, "postgres://") || strings.HasPrefix(*dsn, "postgresql://") || strings.Contains(*dsn, "host=") {
					driver = "pgx"
				}
			}
			db, err := sql.Open(driver, *dsn)
			if err != nil {
				return fmt.Errorf("open %s database: %v", driver, redactErr(err, *dsn))
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			src, err := workerlease.New(ctx, workerlease.Config{DB: db, Table: *table, Namespace: *ns})
			if err != nil {
				return redactErr(err, *dsn)
			}
			if sub == "release" {
				w, err := strconv.ParseInt(rest[0], 10, 64)
				if err != nil || w < 0 {
					return usageErrorf("workers release: %q is not a worker id", rest[0])
				}
				if err := src.Release(ctx, w); err != nil {
					return redactErr(err, *dsn)
				}
				if out.value == "json" {
					return writeJSON(stdout, struct {
						Released  int64  `json:"released"`
						Namespace string `json:"namespace"`
					}{w, *ns})
				}
				fmt.Fprintf(stdout, "released worker %d of namespace %s\n", w, *ns)
				return nil
			}
			slots, err := src.List(ctx)
			if err != nil {
				return redactErr(err, *dsn)
			}
			return printSlots(stdout, out.value, slots)
		}
	},
}

func printSlots(w io.Writer, form string, slots []workerlease.Slot) error {
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	if form == "json" {
		type row struct {
			Worker    int64  `json:"worker"`
			Owner     string `json:"owner"`
			Held      bool   `json:"held"`
			ExpiresAt string `json:"expires_at"`
			LastUsed  string `json:"last_used"`
		}
		rows := make([]row, 0, len(slots))
		for _, s := range slots {
			rows = append(rows, row{s.Worker, s.Owner, s.Held, stamp(s.ExpiresAt), stamp(s.LastUsed)})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tHELD\tOWNER\tEXPIRES\tLAST USED")
	for _, s := range slots {
		owner := s.Owner
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(tw, "%d\t%v\t%s\t%s\t%s\n", s.Worker, s.Held, owner, stamp(s.ExpiresAt), stamp(s.LastUsed))
	}
	return tw.Flush()
}

// redactErr keeps a DSN (and so its password) out of an error message.
func redactErr(err error, dsn string) error {
	if err == nil || dsn == "" || !strings.Contains(err.Error(), dsn) {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), dsn, "<dsn>"))
}
