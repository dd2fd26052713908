package gormplugin_test

import (
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
)

// TestRouteExactSQL checks the statements the plugin sends: the physical
// table in every statement, one INSERT per table for a batch, all in one
// transaction.
func TestRouteExactSQL(t *testing.T) {
	sqlDB, mock, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB, PreferSimpleProtocol: true}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	cfg, err := shardconf.Parse([]byte(tableRules))
	if err != nil {
		t.Fatal(err)
	}
	clk := keygentest.NewClock(t0)
	r, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenOptions(keygen.WithClock(clk)))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(r))); err != nil {
		t.Fatal(err)
	}
	layout, _ := keygen.LayoutFor("SNOWFLAKE", nil)
	key := func(seq int64) int64 {
		id, err := layout.Compose(keygen.Parts{Time: t0, Worker: 3, Sequence: seq})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// One row: the generated key (sequence 0: a new generator's first key,
	// as ShardingSphere's) picks the table.
	k1 := key(0)
	mock.ExpectBegin()
	mock.ExpectExec(`INSERT INTO "sharded_orders_`+itoa(k1%4)+`" ("id","user_id","amount") VALUES ($1,$2,$3)`).
		WithArgs(k1, int64(7), 10).WillReturnResult(sqlmock.NewResult(0, 1))
	mock.ExpectCommit()
	o := ShardedOrder{UserID: 7, Amount: 10}
	if err := db.Create(&o).Error; err != nil {
		t.Fatal(err)
	}
	if o.ID != k1 {
		t.Fatalf("key %d, want %d", o.ID, k1)
	}
	// A batch of four keys (sequences 1..4) spans four tables: four
	// INSERTs in one transaction, in the order the tables first appear.
	mock.ExpectBegin()
	for s := int64(2); s <= 5; s++ {
		k := key(s - 1)
		mock.ExpectExec(`INSERT INTO "sharded_orders_`+itoa(k%4)+`" ("id","user_id","amount") VALUES ($1,$2,$3)`).
			WithArgs(k, s, 0).WillReturnResult(sqlmock.NewResult(0, 1))
	}
	mock.ExpectCommit()
	batch := []ShardedOrder{{UserID: 2}, {UserID: 3}, {UserID: 4}, {UserID: 5}}
	if err := db.Create(&batch).Error; err != nil {
		t.Fatal(err)
	}
	// A query by key reads one table, named with its logic name as alias.
	mock.ExpectQuery(`SELECT * FROM "sharded_orders_`+itoa(k1%4)+`" AS "sharded_orders" WHERE "sharded_orders"."id" = $1 ORDER BY "sharded_orders"."id" LIMIT $2`).
		WithArgs(k1, 1).WillReturnRows(sqlmock.NewRows([]string{"id", "user_id", "amount"}).AddRow(k1, 7, 10))
	var got ShardedOrder
	if err := db.First(&got, k1).Error; err != nil || got.UserID != 7 {
		t.Fatalf("First: %+v, %v", got, err)
	}
	if err := mock.ExpectationsWereMet(); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string {
	return string(rune('0' + n))
}
