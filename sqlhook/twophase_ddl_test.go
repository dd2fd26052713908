package sqlhook_test

import (
	"context"
	"testing"
)

// DDL inside a transaction across data sources: MySQL commits the open
// transaction implicitly before (and after) most DDL, which would commit
// an XA branch's work outside the two-phase commit; inside XA ACTIVE
// MariaDB refuses it instead (XAER_RMFAIL). PostgreSQL's DDL is
// transactional and prepares with the rest. Either way the transaction
// stays whole: a rollback leaves neither the rows nor the table, a commit
// keeps the rows (and, on PostgreSQL, the table).
func TestTwoPhaseDDLInsideATransactionStaysAtomic(t *testing.T) {
	for _, b := range tpBackends(t, "ddl") {
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			ctx := context.Background()
			for i, commit := range []bool{false, true} {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				id := int64(10 * (i + 1))
				b.insertOrder(t, tx, id+1, 1) // ds_1
				b.insertOrder(t, tx, id+2, 2) // ds_0
				table := []string{"t_ddl_rolled_back", "t_ddl_committed"}[i]
				_, ddlErr := tx.ExecContext(ctx, "CREATE TABLE "+table+" (id int)") // the default data source, ds_0
				t.Logf("CREATE TABLE in the transaction: %v", ddlErr)
				if ddlErr != nil && b.driver == "pgx" {
					t.Fatalf("PostgreSQL refused transactional DDL: %v", ddlErr)
				}
				b.insertOrder(t, tx, id+3, 1)
				if commit {
					if err := tx.Commit(); err != nil {
						t.Fatalf("commit: %v", err)
					}
				} else if err := tx.Rollback(); err != nil {
					t.Fatalf("rollback: %v", err)
				}
				var exists int
				err = b.direct(t, 0).QueryRowContext(ctx, b.q(`SELECT count(*) FROM information_schema.tables WHERE table_name = ?`), table).Scan(&exists)
				if err != nil {
					t.Fatal(err)
				}
				if want := commit && ddlErr == nil; (exists == 1) != want {
					t.Errorf("%s exists: %v, want %v", table, exists == 1, want)
				}
			}
			wantOrders(t, b, []int64{22}, []int64{21, 23})
		})
	}
}
