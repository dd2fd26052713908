package difftest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/xa"
)

// Divergences the two-phase-commit tester found, each in its smallest
// form, named for the property.

// TestTwoPhaseStatementsAfterAPartlyFailedWriteSeeNoneOfIt: in a
// WithTwoPhaseCommit transaction, a batch Create (sqlhook: a multi-row
// INSERT) whose row for
// ds_0 is written and whose row for ds_1 fails (a duplicate key) is a
// failed statement; no later statement of the transaction may see the row
// it wrote on ds_0 (a database's own statement is atomic, and sqlhook
// fails every later statement). Found by the tester (seed 6, tx
// 189 on PostgreSQL: an UPDATE counted 41 rows where the oracle counted
// 40; Commit then refused, so nothing was committed).
func TestTwoPhaseStatementsAfterAPartlyFailedWriteSeeNoneOfIt(t *testing.T) {
	for _, name := range tpDBs() {
		t.Run(name+"/gorm", func(t *testing.T) {
			w := newWorld(t, openBackendNamed(t, name, "d2pc_case1"))
			c := newTPGormClient(t, w, -1).(*tpGormClient)
			// order 3 (user 3, ds_1) exists; order 10 (user 0, ds_0) does not
			if _, err := w.ds[1].Exec("INSERT INTO t_order_0 (order_id, user_id, note) VALUES (3, 3, 'old')"); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			tx := c.db.WithContext(ctx).Begin()
			if tx.Error != nil {
				t.Fatal(tx.Error)
			}
			defer tx.Rollback()
			batch := []Order{{OrderID: 10, UserID: 0, Note: "new"}, {OrderID: 3, UserID: 3, Note: "dup"}}
			if err := tx.Session(&gorm.Session{}).Create(&batch).Error; err == nil {
				t.Fatal("Create of a duplicate key succeeded")
			}
			var n int64
			err := tx.Session(&gorm.Session{}).Model(&Order{}).Where("order_id = ? AND user_id = ?", 10, 0).Count(&n).Error
			if err == nil && n != 0 {
				t.Errorf("after the failed Create, the transaction still sees the row it wrote on ds_0 (count %d); want 0 or an error", n)
			}
			res := tx.Session(&gorm.Session{}).Model(&Order{}).Where("user_id = ?", 0).Update("note", "x")
			if res.Error == nil && res.RowsAffected != 0 {
				t.Errorf("after the failed Create, an UPDATE of user 0 changed %d rows (only the failed Create's row is there); want 0 or an error", res.RowsAffected)
			}
			if err := tx.Commit().Error; err == nil {
				t.Error("Commit after a write that failed in part returned nil")
			}
		})
		t.Run(name+"/sqlhook", func(t *testing.T) {
			w := newWorld(t, openBackendNamed(t, name, "d2pc_case1s"))
			c := newTPSQLClient(t, w, -1)
			if _, err := w.ds[1].Exec("INSERT INTO t_order_0 (order_id, user_id, note) VALUES (3, 3, 'old')"); err != nil {
				t.Fatal(err)
			}
			g := &sqlGen{b: w.b}
			ctx := context.Background()
			tx, err := c.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, g.final("INSERT INTO t_order (order_id, user_id, note) VALUES (?, ?, 'new'), (?, ?, 'dup')"), 10, 0, 3, 3); err == nil {
				t.Fatal("INSERT of a duplicate key succeeded")
			}
			var n int64
			err = tx.QueryRowContext(ctx, g.final("SELECT count(*) FROM t_order WHERE order_id = ? AND user_id = ?"), 10, 0).Scan(&n)
			if err == nil && n != 0 {
				t.Errorf("after the failed INSERT, the transaction still sees the row it wrote on ds_0 (count %d); want 0 or an error", n)
			}
			if err := tx.Commit(); err == nil {
				t.Error("Commit after a write that failed in part returned nil")
			}
		})
	}
}

// TestTwoPhaseCommitAfterABranchWasKilledLeavesNothingPrepared: a
// transaction over both data sources whose ds_0 (or ds_1) session was
// killed before Commit must fail to commit, and leave no branch prepared (nothing to
// recover: the outcome is known). Found by the tester (seed 12, tx 570 on
// PostgreSQL through sqlhook: Commit said "two-phase commit rolled back:
// PREPARE TRANSACTION on data source ds_0: FATAL: terminating connection",
// yet both branches were left prepared, with no decision).
func TestTwoPhaseCommitAfterABranchWasKilledLeavesNothingPrepared(t *testing.T) {
	dbtest.SkipShort(t, "two-phase commit")
	for _, name := range tpDBs() {
		for _, client := range []string{"sqlhook", "gorm"} {
			t.Run(name+"/"+client, func(t *testing.T) {
				r := newTPRunWith(t, name, client, "d2pc_case2", -1)
				ctx := context.Background()
				for _, k := range []int64{2, 3} { // ds_0 and ds_1
					r.w.exec(t, r.w.dsOf(r.target(k)), fmt.Sprintf("INSERT INTO %s (order_id, user_id, amount) VALUES (%d, %d, 100)", r.target(k).Table, k, tpUser(k)))
				}
				g := &tpGen{}
				g.addAmount("debit", -1, 2)
				g.addAmount("credit", 1, 3)
				d := &sqlGen{b: r.w.b}
				// (a Commit whose branch lost its session takes up to 2s: xa
				// watches whether the PREPARE still lands)
				for i := range 4 {
					tx, err := r.client.begin(ctx, sql.LevelDefault)
					if err != nil {
						t.Fatal(err)
					}
					for _, it := range g.items {
						if _, err := tx.exec(ctx, it, d.final(it.sql.text)); err != nil {
							t.Fatal(err)
						}
					}
					killed := r.kill(i % 2)
					err = tx.commit()
					if killed > 0 && err == nil {
						t.Errorf("try %d: Commit returned nil after the ds_%d branch's session was killed", i, i%2)
					}
					if left, lerr := r.prepared(ctx); lerr != nil || len(left) > 0 {
						t.Errorf("try %d (killed %d sessions of ds_%d; Commit: %v): prepared branches left: %v %v", i, killed, i%2, err, left, lerr)
						time.Sleep(tpTimeout)
						r.rec.Recover(ctx)
					}
				}
			})
		}
	}
}

// TestTwoPhaseCommitRolledBackAtTheDeadlineLeavesNothingPrepared: a
// transaction over both data sources that reaches Commit just before
// recovery's timeout has its PREPAREs cut by xa's phase-1 deadline; when
// Commit then says it rolled back (an error that is not ErrInDoubt), no
// branch may stay prepared (unless the error says the rollback failed and
// recovery rolls back what is left). On MariaDB (whose transaction's age starts at
// XA START, so it can be brought near the timeout) each try waits until
// the timeout minus a few milliseconds. Found by the tester (seed 12,
// tx 570 on PostgreSQL: both branches left prepared after Commit said
// "two-phase commit rolled back"); xa 5d911c7 bounds phase 1 by the
// timeout and watches a branch whose PREPARE lost its connection.
func TestTwoPhaseCommitRolledBackAtTheDeadlineLeavesNothingPrepared(t *testing.T) {
	dbtest.SkipShort(t, "two-phase commit")
	for _, client := range []string{"sqlhook", "gorm"} {
		t.Run("mariadb/"+client, func(t *testing.T) {
			r := newTPRunWith(t, "mariadb", client, "d2pc_case3", -1)
			ctx := context.Background()
			for _, k := range []int64{2, 3} { // ds_0 and ds_1
				r.w.exec(t, r.w.dsOf(r.target(k)), fmt.Sprintf("INSERT INTO %s (order_id, user_id, amount) VALUES (%d, %d, 100)", r.target(k).Table, k, tpUser(k)))
			}
			g := &tpGen{}
			g.addAmount("debit", -1, 2)
			g.addAmount("credit", 1, 3)
			d := &sqlGen{b: r.w.b}
			for i := range 6 {
				start := time.Now()
				tx, err := r.client.begin(ctx, sql.LevelDefault)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range g.items {
					if _, err := tx.exec(ctx, it, d.final(it.sql.text)); err != nil {
						t.Fatal(err)
					}
				}
				margin := time.Duration(2+2*i) * time.Millisecond
				time.Sleep(tpTimeout - margin - time.Since(start))
				err = tx.commit()
				if err == nil || errors.Is(err, xa.ErrInDoubt) {
					continue
				}
				time.Sleep(300 * time.Millisecond) // a PREPARE the client gave up on may land late
				// an error saying the rollback failed and recovery ends what
				// is left is honest; a clean "rolled back" is not
				honest := strings.Contains(err.Error(), "left prepared")
				if left, lerr := r.prepared(ctx); lerr != nil || len(left) > 0 && !honest {
					t.Errorf("Commit %v before the timeout returned %q, yet these branches are prepared: %v %v", margin, err, left, lerr)
					time.Sleep(tpTimeout)
					r.rec.Recover(ctx)
				}
			}
		})
	}
}

// TestTwoPhaseStatementOutsideATransactionIsAtomicAcrossDataSources: with
// two-phase commit on, one INSERT outside a transaction whose rows belong
// to both data sources, one of them a duplicate key, stores none of its
// rows, as the statement does on one database (and as gormplugin's batch
// Create does: it wraps a write over several data sources in a two-phase
// transaction). Through sqlhook the ds_0 row stayed ("1 earlier unit(s)
// succeeded (on ds_0) and their changes stand") until sqlhook ran such a
// write in a two-phase transaction of its own.
func TestTwoPhaseStatementOutsideATransactionIsAtomicAcrossDataSources(t *testing.T) {
	dbtest.SkipShort(t, "two-phase commit")
	for _, name := range tpDBs() {
		for _, client := range []string{"sqlhook", "gorm"} {
			t.Run(name+"/"+client, func(t *testing.T) {
				w := newWorld(t, openBackendNamed(t, name, "d2pc_case4"+client))
				// order 3 (user 3) exists on ds_1; order 10 (user 0, ds_0) does not
				if _, err := w.ds[1].Exec("INSERT INTO t_order_0 (order_id, user_id, note) VALUES (3, 3, 'old')"); err != nil {
					t.Fatal(err)
				}
				var err error
				switch client {
				case "sqlhook":
					g := &sqlGen{b: w.b}
					_, err = newTPSQLClient(t, w, -1).db.ExecContext(context.Background(),
						g.final("INSERT INTO t_order (order_id, user_id, note) VALUES (?, ?, 'new'), (?, ?, 'dup')"), 10, 0, 3, 3)
				case "gorm":
					batch := []Order{{OrderID: 10, UserID: 0, Note: "new"}, {OrderID: 3, UserID: 3, Note: "dup"}}
					err = newTPGormClient(t, w, -1).(*tpGormClient).db.Create(&batch).Error
				}
				if err == nil {
					t.Fatal("an INSERT of a duplicate key succeeded")
				}
				var n int
				if qerr := w.ds[0].QueryRow("SELECT count(*) FROM t_order_1 WHERE order_id = 10").Scan(&n); qerr != nil {
					t.Fatal(qerr)
				}
				if n != 0 {
					t.Errorf("the statement failed (%v), yet its ds_0 row is stored", err)
				}
			})
		}
	}
}

// TestTwoPhaseCommitNeverKeepsWorkRolledBackToASavepoint: a two-phase
// transaction sets a savepoint, updates a ds_0 row, inserts a ds_0 row,
// then reaches ds_1 through a connection whose session was killed (the
// statement fails), and rolls back to the savepoint (which fails too).
// Commit must not keep the ds_0 work the transaction rolled back: it must
// fail (the transaction cannot commit whole), or commit without it. Found
// by the tester (seed 41, tx 71 on MariaDB through sqlhook: Commit
// returned nil and both ds_0 changes were committed).
func TestTwoPhaseCommitNeverKeepsWorkRolledBackToASavepoint(t *testing.T) {
	dbtest.SkipShort(t, "two-phase commit")
	for _, name := range tpDBs() {
		for _, client := range []string{"sqlhook", "gorm"} {
			t.Run(name+"/"+client, func(t *testing.T) {
				r := newTPRunWith(t, name, client, "d2pc_case5", -1)
				ctx := context.Background()
				// order 2 (user 2, ds_0) with amount 100; order 3 (user 3) on ds_1
				for _, k := range []int64{2, 3} {
					r.w.exec(t, r.w.dsOf(r.target(k)), fmt.Sprintf("INSERT INTO %s (order_id, user_id, amount) VALUES (%d, %d, 100)", r.target(k).Table, k, tpUser(k)))
				}
				if c, ok := r.client.(*tpSQLClient); ok {
					c.db.SetMaxOpenConns(1) // one sqlhook connection: its ds_1 session is the one killed
				}
				g := &tpGen{rng: rand.New(rand.NewPCG(1, 2)), added: map[int64]bool{}}
				g.items = append(g.items, tpItem{kind: "read", read: true, users: []int64{2, 3},
					sql: cell{text: "SELECT count(*), sum(amount) FROM t_order WHERE user_id IN (?, ?)", args: []any{2, 3}}})
				d := &sqlGen{b: r.w.b}
				// open the connection's sessions on both data sources
				if _, _, err := r.client.auto().read(ctx, g.items[0], d.final(g.items[0].sql.text)); err != nil {
					t.Fatal(err)
				}
				g.items = nil
				g.add("savepoint", "SAVEPOINT sp1")
				g.items[0].raw = true
				g.addAmount("update", -13, 2)
				g.insert(12) // order 12, user 2: ds_0
				tx, err := r.client.begin(ctx, sql.LevelDefault)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range g.items {
					if _, err := tx.exec(ctx, it, d.final(it.sql.text)); err != nil {
						t.Fatalf("%s: %v", it, err)
					}
				}
				r.killAll(1) // every ds_1 session: the connection's idle one among them
				g.items = nil
				g.insert(13) // order 13, user 3: ds_1, through the killed session
				_, ierr := tx.exec(ctx, g.items[0], d.final(g.items[0].sql.text))
				_, rerr := tx.exec(ctx, tpItem{kind: "savepoint", raw: true, sql: cell{text: "ROLLBACK TO SAVEPOINT sp1"}}, "ROLLBACK TO SAVEPOINT sp1")
				cerr := tx.commit()
				t.Logf("INSERT on ds_1: %v; ROLLBACK TO: %v; Commit: %v", ierr, rerr, cerr)
				var amount, n int64
				if err := r.w.ds[0].QueryRow("SELECT amount FROM " + r.target(2).Table + " WHERE order_id = 2").Scan(&amount); err != nil {
					t.Fatal(err)
				}
				if err := r.w.ds[0].QueryRow("SELECT count(*) FROM " + r.target(12).Table + " WHERE order_id = 12").Scan(&n); err != nil {
					t.Fatal(err)
				}
				if amount != 100 || n != 0 {
					t.Errorf("Commit returned %v and kept work rolled back to the savepoint: order 2's amount %d (want 100), order 12 stored %d times (want 0)", cerr, amount, n)
				}
			})
		}
	}
}

// TestTwoPhasePostgreSQLTransactionWithAFailedStatementDoesNotCommit: on
// PostgreSQL a transaction with a failed statement cannot commit (COMMIT
// rolls it back), and sqlhook and gormplugin promise the same of a
// two-phase one. Here the failed statement is an INSERT whose ds_1
// branch cannot begin (the connection's ds_1 session was killed); the
// transaction had updated a ds_0 row. Commit must fail and the update
// must not be stored. Through sqlhook Commit returned nil and the update
// was committed (the same path as
// TestTwoPhaseCommitNeverKeepsWorkRolledBackToASavepoint on MariaDB).
func TestTwoPhasePostgreSQLTransactionWithAFailedStatementDoesNotCommit(t *testing.T) {
	dbtest.SkipShort(t, "two-phase commit")
	if !strings.Contains(*flagDB, "postgres") {
		t.Skip("-difftest.db leaves PostgreSQL out")
	}
	for _, client := range []string{"sqlhook", "gorm"} {
		t.Run("postgres/"+client, func(t *testing.T) {
			r := newTPRunWith(t, "postgres", client, "d2pc_case6", -1)
			ctx := context.Background()
			for _, k := range []int64{2, 3} { // ds_0 and ds_1
				r.w.exec(t, r.w.dsOf(r.target(k)), fmt.Sprintf("INSERT INTO %s (order_id, user_id, amount) VALUES (%d, %d, 100)", r.target(k).Table, k, tpUser(k)))
			}
			if c, ok := r.client.(*tpSQLClient); ok {
				c.db.SetMaxOpenConns(1) // one sqlhook connection: its ds_1 session is the one killed
			}
			d := &sqlGen{b: r.w.b}
			read := tpItem{kind: "read", read: true, users: []int64{2, 3},
				sql: cell{text: "SELECT count(*), sum(amount) FROM t_order WHERE user_id IN (?, ?)", args: []any{2, 3}}}
			if _, _, err := r.client.auto().read(ctx, read, d.final(read.sql.text)); err != nil {
				t.Fatal(err)
			}
			g := &tpGen{rng: rand.New(rand.NewPCG(1, 2)), added: map[int64]bool{}}
			g.addAmount("update", -13, 2) // order 2: ds_0
			g.insert(13)                  // order 13, user 3: ds_1
			tx, err := r.client.begin(ctx, sql.LevelDefault)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.exec(ctx, g.items[0], d.final(g.items[0].sql.text)); err != nil {
				t.Fatal(err)
			}
			r.killAll(1)
			_, ierr := tx.exec(ctx, g.items[1], d.final(g.items[1].sql.text))
			cerr := tx.commit()
			var amount int64
			if err := r.w.ds[0].QueryRow("SELECT amount FROM " + r.target(2).Table + " WHERE order_id = 2").Scan(&amount); err != nil {
				t.Fatal(err)
			}
			if ierr != nil && (cerr == nil || amount != 100) {
				t.Errorf("INSERT failed (%v), yet Commit returned %v and order 2's amount is %d (want an error and 100)", ierr, cerr, amount)
			}
		})
	}
}
