package gormplugin_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// Two-phase transactions that meet a failure, and the transaction options
// GORM passes on.

// takeKey stores a row under id in ds_1 (user 1) behind the plugin's back,
// so that creating another row with that key there fails.
func (e *tpEnv) takeKey(t *testing.T, id int64) {
	t.Helper()
	taken := ShardedOrder{ID: id, UserID: 1, Amount: -1}
	if err := e.chk[1].Table(e.targetOf(t, 1, id).Table).Create(&taken).Error; err != nil {
		t.Fatal(err)
	}
}

func TestTwoPhaseTransactionIgnoringAWriteThatFailedPartWayCannotCommit(t *testing.T) {
	eachTwoPhase(t, "partway", func(t *testing.T, e *tpEnv) {
		e.takeKey(t, 2001)
		before := e.snapshot(t)
		var createErr error
		err := e.db.Transaction(func(tx *gorm.DB) error {
			// ds_0's rows are inserted first, then ds_1's fail.
			createErr = tx.Create(&[]ShardedOrder{{ID: 2000, UserID: 0}, {ID: 2002, UserID: 2}, {ID: 2001, UserID: 1}}).Error
			return nil // the error ignored
		})
		if createErr == nil {
			t.Fatal("the Create with a duplicate key in ds_1 succeeded")
		}
		if err == nil {
			t.Fatal("a transaction that ignored a write failing part-way committed")
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("half of a failed Create committed:\nbefore %s\nafter  %s", before, after)
		}
	})
}

func TestTwoPhaseTransactionAfterAFailedStatementOnPostgreSQLCannotCommitUnlessUndoneBySavepoint(t *testing.T) {
	e := newTwoPhase(t, "postgres", "pgabort", nil)
	e.takeKey(t, 3001)
	before := e.snapshot(t)
	err := e.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&ShardedOrder{ID: 3000, UserID: 0}).Error; err != nil {
			return err
		}
		_ = tx.Create(&ShardedOrder{ID: 3001, UserID: 1}).Error // fails; PostgreSQL aborts ds_1's branch
		return nil
	})
	if err == nil {
		t.Fatal("committed after a statement failed on PostgreSQL")
	}
	if after := e.snapshot(t); after != before {
		t.Fatalf("committed in part:\nbefore %s\nafter  %s", before, after)
	}
	// The same failure inside a nested transaction is undone by its
	// savepoint: the transaction commits what is left.
	var kept ShardedOrder
	err = e.db.Transaction(func(tx *gorm.DB) error {
		kept = ShardedOrder{ID: 3002, UserID: 0}
		if err := tx.Create(&kept).Error; err != nil {
			return err
		}
		if err := tx.Transaction(func(tx2 *gorm.DB) error { return tx2.Create(&ShardedOrder{ID: 3001, UserID: 1}).Error }); err == nil {
			return errors.New("the duplicate key was accepted")
		}
		return tx.Create(&ShardedOrder{ID: 3003, UserID: 1}).Error // ds_1's branch works again
	})
	if err != nil {
		t.Fatalf("transaction whose failure a savepoint undid: %v", err)
	}
	if p := e.placement(t); len(p) != 3 || p[3002].at.DataSource != "ds_0" || p[3003].at.DataSource != "ds_1" {
		t.Fatalf("after the savepoint: %v", p)
	}
}

func TestTwoPhaseTransactionOnlyReadingTheOtherDataSourceCommits(t *testing.T) {
	eachTwoPhase(t, "readother", func(t *testing.T, e *tpEnv) {
		seeded := e.seed(t)
		var w ShardedOrder
		err := e.db.Transaction(func(tx *gorm.DB) error {
			w = ShardedOrder{UserID: 0, Amount: 5}
			if err := tx.Create(&w).Error; err != nil {
				return err
			}
			var got ShardedOrder // user 1 lives in ds_1, which this transaction only reads
			if err := tx.Where("user_id = ? AND id = ?", 1, seeded[1].ID).Take(&got).Error; err != nil {
				return err
			}
			if got.Amount != seeded[1].Amount {
				return fmt.Errorf("read %+v", got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if p := e.placement(t); len(p) != 5 || p[w.ID].Amount != 5 {
			t.Fatalf("after commit: %v", p)
		}
	})
}

func TestTwoPhaseTransactionOptionsReachTheBranches(t *testing.T) {
	eachTwoPhase(t, "txopts", func(t *testing.T, e *tpEnv) {
		var a, b ShardedOrder
		err := e.db.Transaction(func(tx *gorm.DB) error {
			a, b = ShardedOrder{UserID: 0}, ShardedOrder{UserID: 1}
			if err := tx.Create(&a).Error; err != nil {
				return err
			}
			if err := tx.Create(&b).Error; err != nil {
				return err
			}
			// The branch of the *gorm.DB's own data source (where raw SQL
			// runs) is at the level asked.
			var level string
			q := "SHOW transaction_isolation"
			if e.be == "mariadb" {
				q = "SELECT trx_isolation_level FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()"
			}
			if err := tx.Raw(q).Scan(&level).Error; err != nil {
				return err
			}
			if !strings.EqualFold(strings.ReplaceAll(level, "-", " "), "serializable") {
				return fmt.Errorf("isolation level %q", level)
			}
			return nil
		}, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			t.Fatalf("serializable transaction over both data sources: %v", err)
		}
		if len(e.placement(t)) != 2 {
			t.Fatal("serializable transaction did not store both rows")
		}
		err = e.db.Transaction(func(tx *gorm.DB) error {
			var n int64
			if err := tx.Model(&ShardedOrder{}).Where("user_id IN ?", []int64{0, 1}).Count(&n).Error; err != nil {
				return err
			}
			if n != 2 {
				return fmt.Errorf("read-only count %d", n)
			}
			return tx.Create(&ShardedOrder{UserID: 1}).Error // on ds_1's branch, read-only too
		}, &sql.TxOptions{ReadOnly: true})
		if err == nil {
			t.Fatal("a write in a read-only transaction succeeded")
		}
		if len(e.placement(t)) != 2 {
			t.Fatal("a read-only transaction stored a row")
		}
	}, gormplugin.WithScatter())
}

func TestTwoPhaseWithPrepareStmtCommitsBatchesAndTransactions(t *testing.T) {
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			e := newTwoPhase(t, be, "prep_"+be, func() *gorm.Config { return &gorm.Config{PrepareStmt: true} })
			rows := batch()
			if err := e.db.Create(&rows).Error; err != nil {
				t.Fatal(err)
			}
			err := e.db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&ShardedOrder{UserID: 0}).Error; err != nil {
					return err
				}
				return tx.Create(&ShardedOrder{UserID: 1}).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := sources(e.placement(t)); n["ds_0"] != 5 || n["ds_1"] != 5 {
				t.Fatalf("rows per data source: %v", n)
			}
		})
	}
}

// A session with PrepareStmt wraps the plugin's pool in GORM's
// PreparedStmtDB, and one made from a transaction wraps the transaction in
// a PreparedStmtTX: either way the session's transactions are two-phase
// ones, and a transaction's session stays in it (its writes roll back
// with it, its reads see the transaction's writes).
func TestTwoPhasePrepareStmtSessionsStayInTwoPhaseTransactions(t *testing.T) {
	failPrepared := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StagePrepared {
			return errors.New("injected failure after every branch prepared")
		}
		return nil
	})
	eachTwoPhase(t, "prepsession", func(t *testing.T, e *tpEnv) {
		s := e.db.Session(&gorm.Session{PrepareStmt: true})
		err := s.Transaction(func(tx *gorm.DB) error {
			return tx.Create(&[]ShardedOrder{{UserID: 0}, {UserID: 1}}).Error
		})
		if err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("Transaction in a PrepareStmt session = %v, want the injected failure", err)
		}
		rows := batch()
		if err := s.Create(&rows).Error; err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("Create in a PrepareStmt session = %v, want the injected failure", err)
		}
		var seen int64
		err = e.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&ShardedOrder{UserID: 0, Amount: 1}).Error; err != nil {
				return err
			}
			ps := tx.Session(&gorm.Session{PrepareStmt: true})
			if err := ps.Create(&ShardedOrder{UserID: 1, Amount: 2}).Error; err != nil {
				return err
			}
			if err := ps.Model(&ShardedOrder{}).Where("user_id IN ?", []int64{0, 1}).Count(&seen).Error; err != nil {
				return err
			}
			return errors.New("the caller rolls back")
		})
		if !strings.Contains(fmt.Sprint(err), "the caller rolls back") || seen != 2 {
			t.Fatalf("transaction with a PrepareStmt session = %v, counted %d of its 2 rows", err, seen)
		}
		if snap := e.snapshot(t); snap != "" {
			t.Fatalf("stored: %s", snap)
		}
	}, failPrepared, gormplugin.WithScatter())
}

// TPNote is an unsharded table; its hook records whether the create runs
// in a transaction.
type TPNote struct {
	ID   int64
	Note string
	inTx *bool `gorm:"-"`
}

func (n *TPNote) BeforeCreate(tx *gorm.DB) error {
	if n.inTx != nil {
		_, *n.inTx = tx.Statement.ConnPool.(gorm.TxCommitter)
	}
	return nil
}

// GORM skips its default transaction when the pool cannot begin one
// (gorm.ErrInvalidTransaction), as a PrepareStmt session's wrapper of the
// plugin's pool cannot: the plugin begins it on its own pool instead.
func TestTwoPhaseInAPrepareStmtSessionAnUnroutedWriteStillRunsInATransaction(t *testing.T) {
	e := newTwoPhase(t, "postgres", "prepunrouted", nil)
	if err := e.db.AutoMigrate(&TPNote{}); err != nil {
		t.Fatal(err)
	}
	var inTx bool
	if err := e.db.Session(&gorm.Session{PrepareStmt: true}).Create(&TPNote{Note: "x", inTx: &inTx}).Error; err != nil {
		t.Fatal(err)
	}
	if !inTx {
		t.Fatal("the create ran without a transaction")
	}
}

// A batch over both data sources looks for its keys in the other tables
// of each row's own data source there, not in the first data source's.
func TestTwoPhaseBatchLooksForExplicitKeysInEachRowsDataSource(t *testing.T) {
	eachTwoPhase(t, "keyelsewhere", func(t *testing.T, e *tpEnv) {
		// Key 5000 sits (misplaced) in ds_1's other table than the one a
		// row of user 1 with that key routes to.
		other := "sharded_orders_1"
		if e.targetOf(t, 1, 5000).Table == other {
			other = "sharded_orders_0"
		}
		if err := e.chk[1].Table(other).Create(&ShardedOrder{ID: 5000, UserID: 1, Amount: -1}).Error; err != nil {
			t.Fatal(err)
		}
		err := e.db.Create(&[]ShardedOrder{{ID: 6001, UserID: 0}, {ID: 5000, UserID: 1}}).Error
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			t.Fatalf("Create of a key already in ds_1 = %v, want gorm.ErrDuplicatedKey", err)
		}
		var n [2]int64
		for i, chk := range e.chk {
			for _, table := range []string{"sharded_orders_0", "sharded_orders_1"} {
				var c int64
				if err := chk.Table(table).Count(&c).Error; err != nil {
					t.Fatal(err)
				}
				n[i] += c
			}
		}
		if n != [2]int64{0, 1} {
			t.Fatalf("rows per data source %v, want only the one stored before", n)
		}
	})
}

// A transaction still open when the plugin closes cannot commit: its
// branches would be prepared with no recovery left in the process to end
// them. It is rolled back everywhere, and the error says so (not in doubt).
func TestTwoPhaseCommitAfterCloseRollsBackEveryBranch(t *testing.T) {
	eachTwoPhase(t, "afterclose", func(t *testing.T, e *tpEnv) {
		tx := e.db.Begin()
		if err := tx.Create(&[]ShardedOrder{{UserID: 0}, {UserID: 1}}).Error; err != nil {
			t.Fatal(err)
		}
		if err := e.p.Close(); err != nil {
			t.Fatal(err)
		}
		err := tx.Commit().Error
		if err == nil || errors.Is(err, gormplugin.ErrTxInDoubt) {
			t.Fatalf("Commit after Close = %v, want an error that is not in doubt", err)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("committed after Close: %s", s)
		}
		if err := e.db.Transaction(func(tx *gorm.DB) error { return nil }); err == nil {
			t.Fatal("a transaction began after Close")
		}
	})
}

// Raw SQL that ends or reshapes a transaction would act on one branch
// (a raw COMMIT on PostgreSQL commits that data source's rows at once):
// refused before it runs, and the transaction still commits or rolls back
// whole.
func TestTwoPhaseRawTransactionControlIsRefusedAndTheTransactionStaysWhole(t *testing.T) {
	eachTwoPhase(t, "rawcontrol", func(t *testing.T, e *tpEnv) {
		for _, q := range []string{"COMMIT", "ROLLBACK", "END", "BEGIN", "START TRANSACTION", "SAVEPOINT x", "RELEASE SAVEPOINT x", "XA END 'x'", "SET autocommit = 1", "PREPARE TRANSACTION 'x'", "SELECT 1; COMMIT"} {
			var execErr error
			err := e.db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error; err != nil {
					return err
				}
				execErr = tx.Exec(q).Error
				return errors.New("changed my mind")
			})
			if !strings.Contains(fmt.Sprint(err), "changed my mind") {
				t.Fatalf("%s: transaction = %v", q, err)
			}
			if (q != "SET autocommit = 1" || e.be == "mariadb") && !errors.Is(execErr, gormplugin.ErrUnsupported) {
				t.Errorf("raw %q in a two-phase transaction = %v, want ErrUnsupported", q, execErr)
			}
			if s := e.snapshot(t); s != "" {
				t.Fatalf("after raw %q and a rollback, stored: %s", q, s)
			}
		}
	})
}

// The decision log needs a connection beside the transaction's branch on
// the log's data source: with a pool of one, the commit is refused at
// once (rolled back) instead of waiting out the timeout.
func TestTwoPhaseCommitWithALogPoolOfOneConnectionIsRefusedAtOnce(t *testing.T) {
	eachTwoPhase(t, "logpool1", func(t *testing.T, e *tpEnv) {
		p0, _ := e.db.DB()
		p0.SetMaxOpenConns(1)
		defer p0.SetMaxOpenConns(0)
		rows := batch()
		err := e.db.Create(&rows).Error
		if !errors.Is(err, gormplugin.ErrTwoPhaseUnavailable) || errors.Is(err, gormplugin.ErrTxInDoubt) {
			t.Fatalf("Create over both data sources with ds_0's pool at one connection = %v, want ErrTwoPhaseUnavailable", err)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("stored: %s", s)
		}
		one := []ShardedOrder{{UserID: 0}, {UserID: 2}} // ds_0 only: one branch, no decision log
		if err := e.db.Create(&one).Error; err != nil {
			t.Fatalf("Create on ds_0 alone with a pool of one connection: %v", err)
		}
	})
}

// A statement its context cancels mid-way (here waiting for a row lock
// on ds_1): PostgreSQL aborts the branch, MySQL's driver drops the
// branch's connection. Either way a commit that ignores the error rolls
// every data source back.
func TestTwoPhaseStatementCancelledMidTransactionLeavesNothingCommitted(t *testing.T) {
	eachTwoPhase(t, "cancelled", func(t *testing.T, e *tpEnv) {
		seeded := e.seed(t)
		before := e.snapshot(t)
		lock := e.chk[1].Begin() // holds user 1's row in ds_1
		if err := lock.Table(e.targetOf(t, 1, seeded[1].ID).Table).Where("id = ?", seeded[1].ID).Update("amount", 999).Error; err != nil {
			t.Fatal(err)
		}
		var cancelled error
		err := e.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 0, seeded[0].ID).Update("amount", 7).Error; err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			cancelled = tx.WithContext(ctx).Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 1, seeded[1].ID).Update("amount", 8).Error
			return nil // the error ignored
		})
		if err := lock.Rollback().Error; err != nil {
			t.Fatal(err)
		}
		if cancelled == nil {
			t.Fatal("the update waiting for the lock was not cancelled")
		}
		if err == nil || errors.Is(err, gormplugin.ErrTxInDoubt) {
			t.Fatalf("commit after a cancelled statement = %v, want an error that is not in doubt", err)
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("committed in part:\nbefore %s\nafter  %s", before, after)
		}
	})
}

// One primary key given to rows of two data sources in one batch: no
// database sees both, so the plugin refuses it before anything runs.
func TestTwoPhaseBatchWithOneKeyInTwoDataSourcesIsRefused(t *testing.T) {
	eachTwoPhase(t, "dupkeybatch", func(t *testing.T, e *tpEnv) {
		err := e.db.Create(&[]ShardedOrder{{ID: 70, UserID: 0}, {ID: 70, UserID: 1}}).Error
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			t.Fatalf("Create of key 70 in ds_0 and ds_1 = %v, want gorm.ErrDuplicatedKey", err)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("stored: %s", s)
		}
	})
}

// LIMIT on a write over several tables would be taken by each table: the
// write is refused before anything runs.
func TestTwoPhaseWriteWithLimitOverSeveralTablesIsRefused(t *testing.T) {
	e := newTwoPhase(t, "mariadb", "limitwrite", nil, gormplugin.WithScatter())
	e.seed(t)
	before := e.snapshot(t)
	if err := e.db.Model(&ShardedOrder{}).Where("user_id IN ?", []int64{0, 1}).Limit(1).Update("amount", 5).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Fatalf("Update with Limit over both data sources = %v, want ErrUnsupported", err)
	}
	if err := e.db.Where("user_id IN ?", []int64{0, 1}).Limit(1).Delete(&ShardedOrder{}).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Fatalf("Delete with Limit over both data sources = %v, want ErrUnsupported", err)
	}
	if after := e.snapshot(t); after != before {
		t.Fatalf("changed:\nbefore %s\nafter  %s", before, after)
	}
}
