// Command twophase shows shardkey's two-phase commit: money moves between
// accounts in two databases, each transfer one transaction that commits on
// both databases or on neither.
//
//	go run ./examples/twophase                       # PostgreSQL on 127.0.0.1:5432, databases twophase_ds_0/1
//	go run ./examples/twophase -dsn 'postgres://postgres@127.0.0.1:5432/twophase_{ds}?sslmode=disable'
//	go run ./examples/twophase -dsn 'root@tcp(127.0.0.1:3306)/twophase_{ds}'   # MariaDB 10.5+ / MySQL 5.7.7+
//	go run ./examples/twophase -dsn '/tmp/twophase_{ds}.db'                    # SQLite: refused, exits 1
//
// The rules (rules.yaml, built in) shard account over ds_0 and ds_1 by id
// (ds_${id % 2}). -dsn replaces both data sources' DSNs, {ds} standing for
// the data source's name; its form selects the driver (postgres:// is
// PostgreSQL, a name ending in .db or starting with file: is SQLite,
// anything else a MySQL DSN). A PostgreSQL or MySQL database that does not
// exist is created. PostgreSQL needs max_prepared_transactions > 0
// (a server restart applies it).
//
// The program opens the data sources with sqlhook.WithTwoPhaseCommit,
// resets four accounts (two per database) and prints the balances. It then
// runs transfers, each in one database/sql transaction: two across the
// databases, one within one database (committed in one phase), one across
// them that fails its overdraft check after writing on both and is rolled
// back on both, and one across them through GORM with
// gormplugin.WithTwoPhaseCommit. The total before and after is the same.
// Every run starts from the same balances.
//
// SQLite cannot prepare a transaction: the first transfer reaching a
// second SQLite database is refused before it runs (sqlhook.ErrCrossSourceTx
// and sqlhook.ErrTwoPhaseUnavailable), and the program says that two-phase
// commit needs PostgreSQL or MariaDB/MySQL and exits with status 1.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
	// sqlhook parses the SQL of the dialects a program imports.
	_ "github.com/shardkey/shardkey/sqlhook/mysql"
	_ "github.com/shardkey/shardkey/sqlhook/postgres"
	_ "github.com/shardkey/shardkey/sqlhook/sqlite"
)

//go:embed rules.yaml
var defaultRules []byte

func main() {
	dsn := flag.String("dsn", "", "`DSN` template of both data sources, {ds} replaced by ds_0 and ds_1 (default: the rules' PostgreSQL databases)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "twophase: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), *dsn, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "twophase:", err)
		os.Exit(1)
	}
}

// run is the whole example on the data sources of the DSN template tmpl
// ("" for the rules' own); out receives the report.
func run(ctx context.Context, tmpl string, out io.Writer) error {
	cfg, err := loadRules(tmpl)
	if err != nil {
		return err
	}
	b, closeAll, err := openBank(ctx, cfg, out)
	if err != nil {
		return needsTwoPhase(err)
	}
	defer closeAll()
	if err := b.setup(ctx); err != nil {
		return err
	}
	before, err := b.printBalances(ctx, out, "before")
	if err != nil {
		return err
	}
	if err := b.transfers(ctx, out); err != nil {
		return needsTwoPhase(err)
	}
	if err := b.gormTransfer(ctx, cfg, out); err != nil {
		return err
	}
	after, err := b.printBalances(ctx, out, "after")
	if err != nil {
		return err
	}
	if after != before {
		return fmt.Errorf("the total changed from %d to %d", before, after)
	}
	fmt.Fprintf(out, "total unchanged: %d\n", after)
	return nil
}

// needsTwoPhase says what err means when a data source cannot take part
// in a two-phase commit.
func needsTwoPhase(err error) error {
	if errors.Is(err, sqlhook.ErrTwoPhaseUnavailable) {
		return fmt.Errorf("two-phase commit needs PostgreSQL (max_prepared_transactions > 0) or MariaDB/MySQL: %w", err)
	}
	return err
}

// openBank makes sure the databases exist, then opens them as one
// *sql.DB with two-phase commit. That connects: it creates the decision
// log table (shardkey_xa_log in ds_0), checks that every data source can
// prepare transactions and recovers what an earlier run left prepared.
func openBank(ctx context.Context, cfg *shardconf.Config, out io.Writer) (*bank, func(), error) {
	for _, ds := range cfg.DataSources {
		what, err := ensureDatabase(ctx, ds)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(out, "data source %s: %s\n", ds.Name, what)
	}
	router, err := shardconf.NewRouter(cfg)
	if err != nil {
		return nil, nil, err
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithTwoPhaseCommit())
	if err != nil {
		router.Close()
		return nil, nil, err
	}
	if cfg.DataSources[0].Driver != "sqlite" { // SQLite has no log: it cannot prepare
		// Every process sharing these data sources must use the same log:
		// this one's default, or what sqlhook.WithTwoPhaseLog names.
		fmt.Fprintf(out, "two-phase commit on; decision log: table shardkey_xa_log in %s\n", cfg.DataSources[0].Name)
	}
	b := &bank{db: db, router: router, pg: cfg.DataSources[0].Driver == "pgx"}
	return b, func() { db.Close(); router.Close() }, nil
}

// transfers runs the database/sql transfers and prints what became of
// each.
func (b *bank) transfers(ctx context.Context, out io.Writer) error {
	for _, t := range []struct{ from, to, amount int64 }{
		{1, 2, 30},  // alice (ds_1) -> bob (ds_0): two data sources, two phases
		{2, 3, 50},  // bob (ds_0) -> carol (ds_1)
		{2, 4, 10},  // bob -> dave, both in ds_0: one data source, one phase
		{3, 4, 500}, // carol (ds_1) -> dave (ds_0): overdraft, rolled back on both
	} {
		what := fmt.Sprintf("transfer %d %s (%s) -> %s (%s)", t.amount, owner(t.from), b.where(t.from), owner(t.to), b.where(t.to))
		if err := settle(out, what, b.transfer(ctx, t.from, t.to, t.amount)); err != nil {
			return err
		}
	}
	return nil
}
