package sqlhook_test

import (
	"context"
	"errors"
	"log"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// WithTwoPhaseCommit moves money between accounts on two PostgreSQL data
// sources atomically. An error matching ErrTxInDoubt leaves the outcome
// to recovery; any other error means nothing was committed.
func ExampleWithTwoPhaseCommit() {
	cfg, err := shardconf.Load("sharding.yaml") // accounts sharded by account_id over ds_0, ds_1 (pgx)
	if err != nil {
		log.Fatal(err)
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithTwoPhaseCommit())
	if err != nil {
		log.Fatal(err) // e.g. ErrTwoPhaseUnavailable: max_prepared_transactions is 0
	}
	defer db.Close()

	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE account SET balance = balance - 10 WHERE account_id = $1`, 1); err != nil {
		log.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE account SET balance = balance + 10 WHERE account_id = $1`, 2); err != nil {
		log.Fatal(err)
	}
	switch err := tx.Commit(); {
	case errors.Is(err, sqlhook.ErrTxInDoubt):
		var ide *sqlhook.TxInDoubtError
		errors.As(err, &ide)
		log.Printf("transfer %s in doubt (decided: %v); recovery settles it", ide.GTRID, ide.Decided)
	case err != nil:
		log.Printf("transfer rolled back: %v", err)
	}
}
