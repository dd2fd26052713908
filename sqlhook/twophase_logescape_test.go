package sqlhook_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// PostgreSQL spells an identifier many ways: U&"..." with Unicode escapes
// names the same table as the plain word. A transaction must not be able
// to lock the decision log under any spelling (the prepared branch would
// hold the lock that every commit decision, its own included, waits on).
func TestTwoPhaseTransactionCannotLockTheDecisionLogUnderAnEscapedName(t *testing.T) {
	b := tpBackends(t, "logescape")[0] // PostgreSQL
	db := tpOpen(t, b)
	ctx := context.Background()
	for _, q := range []string{
		`LOCK TABLE U&"shardkey\005fxa\005flog" IN EXCLUSIVE MODE`,
		`LOCK TABLE U&"!0073hardkey_xa_log" UESCAPE '!' IN EXCLUSIVE MODE`,
	} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.insertOrder(t, tx, 1, 1)
		if _, err := tx.ExecContext(ctx, q); !errors.Is(err, sqlhook.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", q, err)
		}
		_ = tx.Rollback()
	}
}
