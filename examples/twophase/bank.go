package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
)

// Account is a row of the logic table account, placed by its ID.
type Account struct {
	ID      int64 `gorm:"primaryKey;autoIncrement:false"`
	Owner   string
	Balance int64
}

// TableName is the logic table of the rules.
func (Account) TableName() string { return "account" }

// initial are the accounts every run starts from: two in each data source.
var initial = []Account{{1, "alice", 100}, {2, "bob", 100}, {3, "carol", 100}, {4, "dave", 100}}

// overdraftError refuses a transfer that would leave an account below
// zero.
type overdraftError struct {
	Owner   string
	Balance int64
}

func (e *overdraftError) Error() string {
	return fmt.Sprintf("overdraft: %s would have %d", e.Owner, e.Balance)
}

// bank runs the example's statements through sqlhook's *sql.DB, which
// routes each to the data source of its account.
type bank struct {
	db     *sql.DB
	router *shardconf.Router
	pg     bool // pgx wants $1 placeholders, MySQL and SQLite ?
}

// q is query with its ? placeholders in the driver's style.
func (b *bank) q(query string) string {
	if !b.pg {
		return query
	}
	var sb strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			sb.WriteString("$" + strconv.Itoa(n))
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// setup creates the account table in both data sources (DDL on a logic
// table runs on each of its tables) and resets the accounts, so that every
// run starts from the same balances. Each statement reaches one data
// source and commits on its own.
func (b *bank) setup(ctx context.Context) error {
	if _, err := b.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS account (
		id      BIGINT PRIMARY KEY,
		owner   VARCHAR(32) NOT NULL,
		balance BIGINT NOT NULL
	)`); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	for _, a := range initial {
		if _, err := b.db.ExecContext(ctx, b.q("DELETE FROM account WHERE id = ?"), a.ID); err != nil {
			return err
		}
		if _, err := b.db.ExecContext(ctx, b.q("INSERT INTO account (id, owner, balance) VALUES (?, ?, ?)"), a.ID, a.Owner, a.Balance); err != nil {
			return err
		}
	}
	return nil
}

// balances reads the accounts, from both data sources, merged in id order.
func (b *bank) balances(ctx context.Context) ([]Account, error) {
	rows, err := b.db.QueryContext(ctx, b.q("SELECT id, owner, balance FROM account WHERE id IN (?, ?, ?, ?) ORDER BY id"), 1, 2, 3, 4)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		var a Account
		if err := rows.Scan(&a.ID, &a.Owner, &a.Balance); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// printBalances prints every account with its data source, and returns
// the total.
func (b *bank) printBalances(ctx context.Context, out io.Writer, label string) (int64, error) {
	accts, err := b.balances(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	parts := make([]string, 0, len(accts))
	for _, a := range accts {
		total += a.Balance
		parts = append(parts, fmt.Sprintf("%s %d (%s)", a.Owner, a.Balance, b.where(a.ID)))
	}
	fmt.Fprintf(out, "balances %s: %s; total %d\n", label, strings.Join(parts, ", "), total)
	return total, nil
}

// where is the data source of an account, as the rules place it.
func (b *bank) where(id int64) string {
	ts, err := b.router.Route("account", shardconf.Eq("id", id))
	if err != nil || len(ts) != 1 {
		return "?"
	}
	return ts[0].DataSource
}

// owner is the name of an account.
func owner(id int64) string {
	for _, a := range initial {
		if a.ID == id {
			return a.Owner
		}
	}
	return strconv.FormatInt(id, 10)
}
