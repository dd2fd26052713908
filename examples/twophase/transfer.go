package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/sqlhook"
)

// transfer moves amount from one account to another in one database/sql
// transaction. When the accounts are in different data sources the
// transaction has a branch in each, and with WithTwoPhaseCommit Commit
// prepares both, logs the decision, then commits both.
func (b *bank) transfer(ctx context.Context, from, to, amount int64) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit or Rollback: sql.ErrTxDone, nothing done
	if _, err := tx.ExecContext(ctx, b.q("UPDATE account SET balance = balance - ? WHERE id = ?"), amount, from); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, b.q("UPDATE account SET balance = balance + ? WHERE id = ?"), amount, to); err != nil {
		return err
	}
	// The check runs after both writes, so a refused transfer has written
	// on both data sources: its Rollback must undo both.
	var left int64
	if err := tx.QueryRowContext(ctx, b.q("SELECT balance FROM account WHERE id = ?"), from).Scan(&left); err != nil {
		return err
	}
	if left < 0 {
		refused := &overdraftError{Owner: owner(from), Balance: left}
		return errors.Join(refused, tx.Rollback())
	}
	return tx.Commit()
}

// gormTransfer is transfer through GORM: gormplugin sends each statement
// to its data source's branch of the transaction, and with its
// WithTwoPhaseCommit db.Transaction commits the branches in two phases.
func gormTransfer(ctx context.Context, db *gorm.DB, from, to, amount int64) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&Account{}).Where("id = ?", from).Update("balance", gorm.Expr("balance - ?", amount)).Error; err != nil {
			return err
		}
		if err := tx.Model(&Account{}).Where("id = ?", to).Update("balance", gorm.Expr("balance + ?", amount)).Error; err != nil {
			return err
		}
		var a Account
		if err := tx.Where("id = ?", from).Take(&a).Error; err != nil {
			return err
		}
		if a.Balance < 0 {
			return &overdraftError{Owner: a.Owner, Balance: a.Balance} // db.Transaction rolls back
		}
		return nil
	})
}

// settle prints what became of a transfer, reading its error as a caller
// of a two-phase commit must; it returns the errors that stop the run.
func settle(out io.Writer, what string, err error) error {
	var refused *overdraftError
	switch {
	case err == nil:
		fmt.Fprintf(out, "%s: committed\n", what)
	case errors.As(err, &refused):
		fmt.Fprintf(out, "%s: refused (%v), rolled back\n", what, refused)
	case errors.Is(err, sqlhook.ErrTxInDoubt):
		// Neither committed nor rolled back yet: the decision to commit
		// may be logged and a data source may already show the transfer.
		// Do not retry it (the money could move twice) and do not report
		// it failed. Recovery (this process's, every 30 s, or that of any
		// process sharing the decision log) ends every branch the same
		// way: commit if the decision was logged, else roll back once the
		// transaction is older than the recovery timeout. Keep the GTRID
		// to reconcile the transfer later.
		detail := ""
		var doubt *sqlhook.TxInDoubtError
		if errors.As(err, &doubt) {
			detail = fmt.Sprintf(" (transaction %s, decision logged: %t, committed on %v, pending on %v)",
				doubt.GTRID, doubt.Decided, doubt.Committed, doubt.Pending)
		}
		fmt.Fprintf(out, "%s: IN DOUBT%s; recovery will settle it, not retried\n", what, detail)
		return fmt.Errorf("%s: %w", what, err)
	default:
		// Any other error: every data source rolled back (or nothing was
		// sent), so retrying the whole transfer is safe.
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
