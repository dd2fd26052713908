package gormplugin_test

import (
	"errors"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// A parent and its has-many children, each table sharded by its own
// user_id over ds_0 and ds_1: a parent's children may live in the other
// data source, and GORM saves them in the parent's transaction.
const tpAssocRules = `
rules:
- !SHARDING
  tables:
    tp_parents:
      actualDataNodes: ds_${0..1}.tp_parents
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
    tp_items:
      actualDataNodes: ds_${0..1}.tp_items
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 6}}
`

type TPParent struct {
	ID     int64
	UserID int64
	Items  []TPItem `gorm:"foreignKey:ParentID"`
}

type TPItem struct {
	ID       int64
	ParentID int64
	UserID   int64
	Name     string
}

// counts is how many rows each data source's table holds.
func (e *tpEnv) counts(t *testing.T, table string) [2]int64 {
	t.Helper()
	var out [2]int64
	for i, chk := range e.chk {
		if err := chk.Table(table).Count(&out[i]).Error; err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestTwoPhaseCreateWithChildrenInTheOtherDataSource(t *testing.T) {
	failNext := false
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StagePrepared && failNext {
			return errors.New("injected failure after every branch prepared")
		}
		return nil
	})
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			e := newTwoPhaseOf(t, be, "assoc_"+be, tpAssocRules, []any{&TPParent{}, &TPItem{}}, nil, hook)
			parent := TPParent{UserID: 0, Items: []TPItem{{UserID: 0, Name: "near"}, {UserID: 1, Name: "far"}}}
			if err := e.db.Create(&parent).Error; err != nil {
				t.Fatalf("Create of a parent with a child in the other data source: %v", err)
			}
			if p, i := e.counts(t, "tp_parents"), e.counts(t, "tp_items"); p != [2]int64{1, 0} || i != [2]int64{1, 1} {
				t.Fatalf("parents %v, items %v per data source", p, i)
			}
			failNext = true
			defer func() { failNext = false }()
			err := e.db.Create(&TPParent{UserID: 1, Items: []TPItem{{UserID: 0, Name: "x"}}}).Error
			if err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Create = %v, want the injected failure", err)
			}
			if p, i := e.counts(t, "tp_parents"), e.counts(t, "tp_items"); p != [2]int64{1, 0} || i != [2]int64{1, 1} {
				t.Fatalf("after the failed create: parents %v, items %v per data source", p, i)
			}
		})
	}
}

// TPLogEntry is an unsharded table (in both databases, as after the same
// migrations): its rows belong to the *gorm.DB's own data source, ds_0.
type TPLogEntry struct {
	ID   int64
	Note string
}

// TPLoggedItem is tp_items whose AfterCreate hook writes a TPLogEntry in
// the create's transaction.
type TPLoggedItem struct {
	ID       int64
	ParentID int64
	UserID   int64
	Name     string
}

func (TPLoggedItem) TableName() string { return "tp_items" }

func (i *TPLoggedItem) AfterCreate(tx *gorm.DB) error {
	return tx.Create(&TPLogEntry{Note: i.Name}).Error
}

// A statement the plugin does not route runs on the *gorm.DB's own data
// source in a two-phase transaction, also when a hook of a row routed to
// the other data source issues it.
func TestTwoPhaseUnroutedStatementOfAHookRunsOnTheGormDBsDataSource(t *testing.T) {
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			testUnroutedHome(t, newTwoPhaseOf(t, be, "unrouted_"+be, tpAssocRules, []any{&TPParent{}, &TPItem{}}, nil))
		})
	}
}

func testUnroutedHome(t *testing.T, e *tpEnv) {
	for _, chk := range e.chk {
		if err := chk.AutoMigrate(&TPLogEntry{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.Create(&TPLoggedItem{UserID: 1, Name: "default transaction"}).Error; err != nil {
		t.Fatal(err)
	}
	err := e.db.Transaction(func(tx *gorm.DB) error {
		return tx.Create(&[]TPLoggedItem{{UserID: 1, Name: "a"}, {UserID: 0, Name: "b"}}).Error
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.counts(t, "tp_log_entries"); got != [2]int64{3, 0} {
		t.Fatalf("log entries per data source %v, want all three in ds_0", got)
	}
}
