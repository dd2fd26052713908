package sqlhook_test

import (
	"context"
	"database/sql"
	"testing"
)

// An isolation level the default data source's driver does not support
// fails BeginTx, as it does without sqlhook, not the first statement.
func TestBeginTxRefusesUnsupportedIsolation(t *testing.T) {
	ctx := context.Background()
	unsupported := map[string]sql.IsolationLevel{
		"postgres": sql.LevelLinearizable, // pgx: unsupported isolation
		"mariadb":  sql.LevelSnapshot,     // go-sql-driver: unsupported isolation level
	}
	for _, b := range txBackends(t, "txiso") {
		if b.name == "sqlite" {
			continue // modernc.org/sqlite accepts every level
		}
		t.Run(b.name, func(t *testing.T) {
			level := unsupported[b.name]
			plain := b.direct(t, 0)
			if tx, err := plain.BeginTx(ctx, &sql.TxOptions{Isolation: level}); err == nil {
				tx.Rollback()
				t.Fatalf("the driver itself accepts %v; the test needs a level it refuses", level)
			}
			db := b.open(t)
			if tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level}); err == nil {
				tx.Rollback()
				t.Errorf("BeginTx(%v) through sqlhook succeeded; the driver refuses it", level)
			}
		})
	}
}

// A supported level begins on the default data source at once, yet a
// transaction that then works on another data source alone is not taken
// for one across data sources, and its work commits there.
func TestBeginTxWithOptionsKeepsOneDataSourceTransaction(t *testing.T) {
	ctx := context.Background()
	for _, b := range txBackends(t, "txisook") {
		if b.name == "sqlite" {
			continue // its driver supports no level but the default
		}
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
			if err != nil {
				t.Fatal(err)
			}
			mustTx(t, tx, `SAVEPOINT sp`)
			b.insertOrder(t, tx, 21, 1) // ds_1 only
			b.insertOrder(t, tx, 23, 1)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{}, []int64{21, 23})

			// Read-only reaches the driver: a write fails.
			tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(b.q(`INSERT INTO t_note (id, v) VALUES (?, 'ro')`), 1); err == nil {
				t.Error("a write in a read-only transaction succeeded")
			}
			tx.Rollback()
		})
	}
}

// Prepare of a statement that names no logic table is prepared on the
// default data source at once, so its syntax error comes from Prepare as
// with the driver; a statement naming one that cannot be parsed fails
// at Prepare too.
func TestPrepareReportsErrorsOfUnroutedStatements(t *testing.T) {
	for _, b := range txBackends(t, "txprep") {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			// The driver's answer at Prepare, with sqlhook and without.
			for _, bad := range []string{`SELEC 1`, `SELECT 1 FROM nowhere_table`} {
				stPlain, errPlain := b.direct(t, 0).Prepare(bad)
				if errPlain == nil {
					stPlain.Close()
				}
				if errPlain == nil {
					t.Fatalf("the driver prepares %s; the test needs a statement it refuses", bad)
				}
				st, err := db.Prepare(bad)
				if err == nil {
					st.Close()
				}
				if (err == nil) != (errPlain == nil) {
					t.Errorf("Prepare(%s): %v through sqlhook, %v without", bad, err, errPlain)
				}
			}
			if st, err := db.Prepare(`SELECT * FROM t_order WHERE user_id = = 1`); err == nil {
				st.Close()
				t.Error("Prepare of an unparsable statement on a logic table succeeded")
			}
			st, err := db.Prepare(b.q(`INSERT INTO t_note (id, v) VALUES (?, ?)`))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for id := range int64(3) {
				if _, err := st.Exec(id, "p"); err != nil {
					t.Fatal(err)
				}
			}
			if got := int64s(t, b.direct(t, 0), `SELECT id FROM t_note ORDER BY id`); len(got) != 3 {
				t.Errorf("t_note has %v after three executions", got)
			}
		})
	}
}
