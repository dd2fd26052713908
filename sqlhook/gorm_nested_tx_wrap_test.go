package sqlhook_test

// GORM's nested Transaction opened first sends SAVEPOINT as the
// transaction's very first statement. Through sqlhook.Wrap, with rules
// sharding a table these statements never name, it must behave exactly as
// on the bare driver: the nested transaction's ROLLBACK TO undoes only its
// own rows, with and without PrepareStmt. (gorm.io/driver/postgres and the
// SQLite dialectors ignore SAVEPOINT's error, so a refused savepoint shows
// only later, as rows the nested transaction rolled back being committed.)
// GORM's own test suite, run through Wrap, differed from the bare driver
// in exactly this shape (TestTransactionWithHooks, TestTransaction).

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// wgRules shards a table the statements below never name: everything they
// send must behave exactly as on the bare driver.
const wgRules = `
rules:
- !SHARDING
  tables:
    t_probe:
      actualDataNodes: ds.t_probe_${0..1}
      tableStrategy:
        standard: {shardingColumn: id, shardingAlgorithmName: probe_mod}
  shardingAlgorithms:
    probe_mod: {type: INLINE, props: {algorithm-expression: 't_probe_${id % 2}'}}
`

type wgNote struct {
	ID int64 `gorm:"primaryKey;autoIncrement:false"`
	V  string
}

func (wgNote) TableName() string { return "wg_note" }

// wgBackend is one database, reachable bare and through sqlhook.Wrap.
type wgBackend struct {
	name      string
	bare      *sql.DB
	connector driver.Connector
	dialector func(*sql.DB) gorm.Dialector
}

// wgDSNConnector opens connections as sql.Open(driver, dsn) does.
type wgDSNConnector struct {
	drv driver.Driver
	dsn string
}

func (c wgDSNConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c wgDSNConnector) Driver() driver.Driver                        { return c.drv }

func wgBackends(t *testing.T) []wgBackend {
	t.Helper()
	open := func(drv, dsn string) *sql.DB {
		db, err := sql.Open(drv, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	pgDSN := dbtest.Postgres(t, "sqlhook_gorm_nested_wrap")
	pgCfg, err := pgx.ParseConfig(pgDSN)
	if err != nil {
		t.Fatal(err)
	}
	myDSN := dbtest.MySQL(t, "sqlhook_gorm_nested_wrap")
	myCfg, err := gomysql.ParseDSN(myDSN)
	if err != nil {
		t.Fatal(err)
	}
	myConn, err := gomysql.NewConnector(myCfg)
	if err != nil {
		t.Fatal(err)
	}
	liteDSN := filepath.Join(t.TempDir(), "nested.db")
	lite := open("sqlite", liteDSN)
	return []wgBackend{
		{name: "postgres", bare: open("pgx", pgDSN), connector: stdlib.GetConnector(*pgCfg),
			dialector: func(db *sql.DB) gorm.Dialector { return postgres.New(postgres.Config{Conn: db}) }},
		{name: "mariadb", bare: open("mysql", myDSN), connector: myConn,
			dialector: func(db *sql.DB) gorm.Dialector { return mysql.New(mysql.Config{Conn: db}) }},
		{name: "sqlite", bare: lite, connector: wgDSNConnector{drv: lite.Driver(), dsn: liteDSN},
			dialector: func(db *sql.DB) gorm.Dialector { return sqlite.Dialector{Conn: db} }},
	}
}

// gorm opens GORM on the wrapped pool of b, with wg_note created bare.
func (b wgBackend) gorm(t *testing.T) *gorm.DB {
	t.Helper()
	if _, err := b.bare.Exec(`CREATE TABLE wg_note (id BIGINT PRIMARY KEY, v VARCHAR(40))`); err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Parse([]byte(wgRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(sqlhook.Wrap(b.connector, r))
	t.Cleanup(func() { db.Close() })
	g, err := gorm.Open(b.dialector(db), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// notes lists the ids in wg_note, read bare.
func (b wgBackend) notes(t *testing.T) []int64 {
	t.Helper()
	rows, err := b.bare.Query(`SELECT id FROM wg_note ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

var errWgUndo = errors.New("undo the nested transaction")

// A nested GORM Transaction opened first (SAVEPOINT is the transaction's
// first statement) rolls back only its own work, and a read-only one
// succeeds, through Wrap as on the bare driver; with PrepareStmt too (the
// savepoint runs on the raw transaction, the reads as prepared statements).
func TestWrapGormNestedTransactionFirstRollsBackOnlyItsWork(t *testing.T) {
	for _, b := range wgBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			g := b.gorm(t)
			if err := g.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&wgNote{}).Limit(1).Transaction(func(tx2 *gorm.DB) error {
					return tx2.Scan(&[]wgNote{}).Error
				})
			}); err != nil {
				t.Errorf("read-only nested transaction: %v", err)
			}
			for _, s := range []struct {
				name         string
				db           *gorm.DB
				undone, kept int64
			}{
				{"plain", g, 1, 2},
				{"PrepareStmt", g.Session(&gorm.Session{PrepareStmt: true}), 3, 4},
			} {
				err := s.db.Transaction(func(tx *gorm.DB) error {
					err := tx.Transaction(func(tx2 *gorm.DB) error {
						if err := tx2.Create(&wgNote{ID: s.undone, V: "undone"}).Error; err != nil {
							return err
						}
						return errWgUndo
					})
					if !errors.Is(err, errWgUndo) {
						t.Errorf("%s: nested transaction returned %v, want errWgUndo", s.name, err)
					}
					if err := tx.Create(&wgNote{ID: s.kept, V: "kept"}).Error; err != nil {
						return err
					}
					return tx.Transaction(func(tx2 *gorm.DB) error {
						return tx2.First(&wgNote{}, "v = ?", "kept").Error
					})
				})
				if err != nil {
					t.Errorf("%s: outer transaction: %v", s.name, err)
				}
			}
			if got := b.notes(t); !slices.Equal(got, []int64{2, 4}) {
				t.Errorf("wg_note holds %v, want [2 4]: a rolled-back nested transaction's row was committed, or a kept one lost", got)
			}
		})
	}
}
