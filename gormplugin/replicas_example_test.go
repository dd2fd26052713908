package gormplugin_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// Read replicas come from the rule file: data source ds is a
// readwrite-splitting group of the write database w and its replica r.
// WithDataSources gives a pool per database, by name; the *gorm.DB is
// opened on the write database.
func Example_readReplicas() {
	rules, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables:
    accounts:
      actualDataNodes: ds.accounts_${0..1}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
  shardingAlgorithms:
    by_id: {type: MOD, props: {sharding-count: 2}}
- !READWRITE_SPLITTING
  dataSourceGroups:
    ds: {writeDataSourceName: w, readDataSourceNames: [r]}
`))
	if err != nil {
		panic(err)
	}
	router, err := shardconf.NewRouter(rules)
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "replicas")
	defer os.RemoveAll(dir)
	pools := map[string]gorm.ConnPool{}
	for _, name := range []string{"w", "r"} {
		c, _ := sql.Open("sqlite", filepath.Join(dir, name+".db"))
		defer c.Close()
		c.Exec("CREATE TABLE accounts_1 (id INTEGER PRIMARY KEY, owner TEXT)")
		pools[name] = c
	}
	// The replica has a row the write database has not: reading it shows
	// where a read went. (A real replica follows its write database.)
	pools["r"].(*sql.DB).Exec("INSERT INTO accounts_1 VALUES (1, 'on the replica')")

	db, _ := gorm.Open(&sqlite.Dialector{Conn: pools["w"]}, &gorm.Config{Logger: logger.Discard})
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(router), gormplugin.WithDataSources(pools))); err != nil {
		panic(err)
	}
	db.Table("accounts").Create(map[string]any{"id": 1, "owner": "on the write database"})

	var owner string
	db.Table("accounts").Where("id = ?", 1).Pluck("owner", &owner)
	fmt.Println("read:", owner)
	db.WithContext(gormplugin.ReadFromPrimary(context.Background())).Table("accounts").Where("id = ?", 1).Pluck("owner", &owner)
	fmt.Println("ReadFromPrimary:", owner)
	db.Transaction(func(tx *gorm.DB) error {
		return tx.Table("accounts").Where("id = ?", 1).Pluck("owner", &owner).Error
	})
	fmt.Println("in a transaction:", owner)
	// Output:
	// read: on the replica
	// ReadFromPrimary: on the write database
	// in a transaction: on the write database
}
