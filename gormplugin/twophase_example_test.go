package gormplugin_test

import (
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// Account is a user's balance; user_id picks its database.
type Account struct {
	ID      int64
	UserID  int64
	Balance int64
}

// Accounts live in two PostgreSQL databases (max_prepared_transactions
// above 0). A transfer between users of different databases commits in
// both or in neither.
func ExampleWithTwoPhaseCommit() {
	cfg, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables:
    accounts:
      actualDataNodes: ds_${0..1}.accounts
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	router, err := shardconf.NewRouter(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	pool0, _ := sql.Open("pgx", "postgres://localhost/accounts_0")
	pool1, _ := sql.Open("pgx", "postgres://localhost/accounts_1")
	defer pool0.Close()
	defer pool1.Close()
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: pool0}), &gorm.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	plugin := gormplugin.New(nil, gormplugin.WithRules(router),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": pool1}),
		gormplugin.WithTwoPhaseCommit())
	if err := db.Use(plugin); err != nil { // recovery of earlier transactions runs here
		fmt.Println(err)
		return
	}
	defer plugin.Close() // before the pools close

	const from, to, amount = 2, 3, 10 // user 2 in ds_0, user 3 in ds_1
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&Account{}).Where("user_id = ?", from).Update("balance", gorm.Expr("balance - ?", amount)).Error; err != nil {
			return err
		}
		return tx.Model(&Account{}).Where("user_id = ?", to).Update("balance", gorm.Expr("balance + ?", amount)).Error
	})
	var doubt *gormplugin.TxInDoubtError
	switch {
	case errors.As(err, &doubt):
		// Not known yet: some data sources may have committed. Recovery
		// ends every branch the same way; read the balances again later.
		fmt.Println("in doubt:", doubt.GTRID, "pending on", doubt.Pending)
	case err != nil:
		fmt.Println("nothing transferred:", err)
	default:
		fmt.Println("transferred")
	}
}
