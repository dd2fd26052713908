package sqlhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/sqlhook"
)

// The decision log is a table in the application's own database (ds_0),
// reachable by the application's statements like any unsharded table. A
// transaction across data sources that locks it (LOCK TABLE, or on
// MySQL a locking read or a scan-and-delete of old rows) must not wedge
// two-phase commit: once prepared, a branch holds its locks until it is
// finished, and finishing it needs a row in that very table. Whatever
// the first Commit says, no branch may be left prepared and the next
// transaction across data sources must commit.
//
// The log table may be named schema-qualified (WithTwoPhaseLog); the
// transaction's statement may name it either way.
func TestTwoPhaseTransactionTouchingTheDecisionLogDoesNotWedgeCommits(t *testing.T) {
	for _, b := range tpBackends(t, "logtouch") {
		schema := "public"
		if b.driver == "mysql" {
			schema = mysqlDatabase(t, b)
		}
		for i, c := range []struct{ name, log, lock string }{
			{"default", "", "LOCK TABLE shardkey_xa_log IN EXCLUSIVE MODE"},
			{"qualified", schema + ".shardkey_xa_log", "LOCK TABLE shardkey_xa_log IN EXCLUSIVE MODE"},
			{"qualified-both", schema + ".shardkey_xa_log", "LOCK TABLE " + schema + ".shardkey_xa_log IN EXCLUSIVE MODE"},
		} {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				logTouchRun(t, b, c.log, c.lock, int64(10*i))
			})
		}
	}
}

// mysqlDatabase is ds_0's database name.
func mysqlDatabase(t *testing.T, b txBackend) string {
	t.Helper()
	var name string
	if err := b.direct(t, 0).QueryRow("SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

func logTouchRun(t *testing.T, b txBackend, logTable, lock string, id int64) {
	{
		{
			db := tpOpen(t, b, sqlhook.WithTwoPhaseRecovery(2*time.Second, 500*time.Millisecond), sqlhook.WithTwoPhaseLog("", logTable))
			if b.driver == "mysql" {
				lock = strings.Replace(strings.TrimSuffix(lock, " IN EXCLUSIVE MODE"), "LOCK TABLE ", "DELETE FROM ", 1) + " WHERE created_at < '2000-01-01'"
			}
			ctx := context.Background()
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, id+1, 1) // ds_1
			if _, err := tx.ExecContext(ctx, lock); err != nil {
				t.Logf("%s: refused: %v", lock, err)
				_ = tx.Rollback()
			} else {
				b.insertOrder(t, tx, id+2, 2) // ds_0
				t.Logf("first Commit: %v", tx.Commit())
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				b.insertOrder(t, tx, id+3, 1)
				b.insertOrder(t, tx, id+4, 2)
				err = tx.Commit()
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the next transaction across data sources still fails 20s later: %v", err)
				}
				t.Logf("next Commit: %v", err)
			}
		}
	}
}
