package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// gormTransfer runs one transfer across the data sources through GORM and
// prints what became of it. gormplugin needs a plain *sql.DB per data
// source (a two-phase branch takes a connection of its own); its
// coordinator shares the decision log with sqlhook's (the default log in
// ds_0), as every process sharing the data sources must.
func (b *bank) gormTransfer(ctx context.Context, cfg *shardconf.Config, out io.Writer) error {
	pools := map[string]gorm.ConnPool{}
	var first *sql.DB
	for _, ds := range cfg.DataSources {
		pool, err := sql.Open(ds.Driver, ds.DSN)
		if err != nil {
			return err
		}
		defer pool.Close()
		pools[ds.Name] = pool
		if first == nil {
			first = pool
		}
	}
	db, err := gorm.Open(dialector(cfg.DataSources[0].Driver, first), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return err
	}
	plugin := gormplugin.New(nil, gormplugin.WithRules(b.router), gormplugin.WithDataSources(pools), gormplugin.WithTwoPhaseCommit())
	if err := db.Use(plugin); err != nil {
		return err
	}
	defer plugin.Close() // stops its recovery timer; before the pools close

	// gormplugin.ErrTxInDoubt is sqlhook.ErrTxInDoubt: settle reads both.
	const from, to, amount = 4, 1, 20 // dave (ds_0) -> alice (ds_1)
	what := fmt.Sprintf("GORM transfer %d %s (%s) -> %s (%s)", amount, owner(from), b.where(from), owner(to), b.where(to))
	return settle(out, what, gormTransfer(ctx, db, from, to, amount))
}

// dialector is GORM's dialect over an open pool.
func dialector(driver string, pool *sql.DB) gorm.Dialector {
	switch driver {
	case "pgx":
		return postgres.New(postgres.Config{Conn: pool})
	case "mysql":
		return mysql.New(mysql.Config{Conn: pool})
	}
	return unsupported{}
}

// unsupported is the dialector of a driver the GORM part does not run on
// (SQLite never gets there: its first transfer across data sources is
// refused).
type unsupported struct{ gorm.Dialector }

func (unsupported) Initialize(*gorm.DB) error {
	return errors.New("the GORM transfer runs on PostgreSQL or MySQL only")
}
