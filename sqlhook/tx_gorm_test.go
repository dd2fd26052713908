package sqlhook_test

import (
	"database/sql"
	"errors"
	"slices"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/sqlhook"
)

type gormOrder struct {
	OrderID int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID  int64
	Status  string
}

func (gormOrder) TableName() string { return "t_order" }

type gormNote struct {
	ID int64 `gorm:"primaryKey;autoIncrement:false"`
	V  string
}

func (gormNote) TableName() string { return "t_note" }

// gormOver opens GORM on a sqlhook *sql.DB, as users do.
func gormOver(t *testing.T, b txBackend, db *sql.DB) *gorm.DB {
	t.Helper()
	var d gorm.Dialector
	switch b.name {
	case "postgres":
		d = postgres.New(postgres.Config{Conn: db})
	case "mariadb":
		d = mysql.New(mysql.Config{Conn: db})
	case "sqlite":
		d = sqlite.Dialector{Conn: db}
	}
	g, err := gorm.Open(d, &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var errUndo = errors.New("undo the nested transaction")

// GORM's nested Transaction opened first sends SAVEPOINT as the
// transaction's first statement. The nested transaction's work is rolled
// back when it fails and kept when it succeeds, on a sharded table (on
// ds_1, never reaching the default data source) and on an unsharded
// table, as without sqlhook.
func TestGormNestedTransactionThroughSqlhook(t *testing.T) {
	for _, b := range txBackends(t, "gormnest") {
		t.Run(b.name, func(t *testing.T) {
			g := gormOver(t, b, b.open(t))
			err := g.Transaction(func(tx *gorm.DB) error {
				err := tx.Transaction(func(tx2 *gorm.DB) error {
					if err := tx2.Create(&gormOrder{OrderID: 31, UserID: 1, Status: "undone"}).Error; err != nil {
						return err
					}
					return errUndo
				})
				if !errors.Is(err, errUndo) {
					t.Errorf("nested transaction: %v, want errUndo", err)
				}
				if err := tx.Transaction(func(tx2 *gorm.DB) error {
					return tx2.Create(&gormOrder{OrderID: 33, UserID: 1, Status: "nested, kept"}).Error
				}); err != nil {
					return err
				}
				return tx.Create(&gormOrder{OrderID: 35, UserID: 1, Status: "kept"}).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{}, []int64{33, 35})

			err = g.Transaction(func(tx *gorm.DB) error {
				_ = tx.Transaction(func(tx2 *gorm.DB) error {
					if err := tx2.Create(&gormNote{ID: 1, V: "undone"}).Error; err != nil {
						return err
					}
					return errUndo
				})
				return tx.Create(&gormNote{ID: 2, V: "kept"}).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := int64s(t, b.direct(t, 0), `SELECT id FROM t_note ORDER BY id`); !slices.Equal(got, []int64{2}) {
				t.Errorf("t_note has %v, want [2]", got)
			}
		})
	}
}

// In a transaction across data sources (WithMultiSourceTx), a nested
// GORM transaction whose work reaches a data source for the first time
// inside it rolls that work back there too: the data source was given
// the savepoint when it joined. Nothing rolled back is committed
// anywhere.
func TestGormNestedTransactionAcrossDataSources(t *testing.T) {
	for _, b := range txBackends(t, "gormmulti") {
		t.Run(b.name, func(t *testing.T) {
			g := gormOver(t, b, b.open(t, sqlhook.WithMultiSourceTx()))
			err := g.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&gormOrder{OrderID: 40, UserID: 0, Status: "kept"}).Error; err != nil {
					return err
				}
				_ = tx.Transaction(func(tx2 *gorm.DB) error {
					for _, o := range []gormOrder{{OrderID: 41, UserID: 1}, {OrderID: 42, UserID: 0}} {
						if err := tx2.Create(&o).Error; err != nil {
							return err
						}
					}
					return errUndo
				})
				return tx.Create(&gormOrder{OrderID: 43, UserID: 1, Status: "kept"}).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{40}, []int64{43})
		})
	}
}

// The shapes of GORM's own TestTransactionWithHooks: a nested
// transaction opened from a statement chain (its first statement is the
// SAVEPOINT), and one opened from a fresh session after a query inside
// the outer transaction.
func TestGormTransactionOpenedFromStatementChain(t *testing.T) {
	for _, b := range txBackends(t, "gormhooks") {
		t.Run(b.name, func(t *testing.T) {
			g := gormOver(t, b, b.open(t))
			if err := g.Create(&gormNote{ID: 7, V: "seed"}).Error; err != nil {
				t.Fatal(err)
			}
			err := g.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&gormNote{}).Limit(1).Transaction(func(tx2 *gorm.DB) error {
					var n []gormNote
					return tx2.Scan(&n).Error
				})
			})
			if err != nil {
				t.Errorf("nested transaction as the first statement: %v", err)
			}
			err = g.Transaction(func(tx1 *gorm.DB) error {
				tx2 := tx1.Find(&[]gormNote{}).Session(&gorm.Session{NewDB: true})
				return tx2.Transaction(func(tx3 *gorm.DB) error {
					return tx3.Where("id = ?", 7).Delete(&gormNote{}).Error
				})
			})
			if err != nil {
				t.Errorf("nested transaction after a query: %v", err)
			}
			if got := int64s(t, b.direct(t, 0), `SELECT id FROM t_note`); len(got) != 0 {
				t.Errorf("t_note has %v after the nested delete committed", got)
			}
		})
	}
}
