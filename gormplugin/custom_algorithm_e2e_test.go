package gormplugin_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// Go sharding algorithms (shardconf.RegisterAlgorithm) routing GORM's
// writes and reads on real databases: sharded_orders' data source by
// user_id's hundred (a registered type, no ranges), its table by id's
// decade (registered under a Java class name, named by CLASS_BASED,
// answering ranges itself). The expected placement is computed here, not
// asked of the router.
const customAlgoRules = `
rules:
- !SHARDING
  tables:
    sharded_orders:
      actualDataNodes: ds_${0..1}.sharded_orders_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_hundred}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_decade}}
  shardingAlgorithms:
    by_hundred: {type: %s}
    by_decade:
      type: CLASS_BASED
      props: {strategy: STANDARD, algorithmClassName: %s}
`

var customAlgoSeq atomic.Int64

type hundredAlgo struct{}

func (hundredAlgo) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("user_id %v is not an integer", v.Value)
	}
	return targets[(n/100)%2], nil
}

type decadeAlgo struct{}

func (decadeAlgo) DoSharding(_ []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("id %v is not an integer", v.Value)
	}
	return fmt.Sprintf("%s_%d", v.Table, (n/10)%2), nil
}

// DoRangeSharding returns the tables of the decades a bounded range
// touches, every table for an open one.
func (decadeAlgo) DoRangeSharding(targets []string, v shardconf.RangeShardingValue) ([]string, error) {
	lo, hi := v.Range.Lower, v.Range.Upper
	if lo.Unbounded() || hi.Unbounded() {
		return targets, nil
	}
	a, b := lo.Value.(int64), hi.Value.(int64)
	if !lo.Inclusive {
		a++
	}
	if !hi.Inclusive {
		b--
	}
	var out []string
	for d := a / 10; d <= b/10 && d < a/10+2; d++ {
		out = append(out, fmt.Sprintf("%s_%d", v.Table, d%2))
	}
	return out, nil
}

func registerCustomAlgos(t *testing.T) string {
	t.Helper()
	n := customAlgoSeq.Add(1)
	hundred, decade := fmt.Sprintf("GORM_HUNDRED_%d", n), fmt.Sprintf("com.example.gorm.Decade%d", n)
	if err := shardconf.RegisterAlgorithm(hundred, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return hundredAlgo{}, nil }); err != nil {
		t.Fatal(err)
	}
	if err := shardconf.RegisterAlgorithm(decade, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return decadeAlgo{}, nil }); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(customAlgoRules, hundred, decade)
}

func TestCustomAlgorithmPlacesGormWritesAndRoutesReads(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDS(t, be, "custom_algo_"+be, registerCustomAlgos(t), nil, []any{&ShardedOrder{}})
			customAlgorithmGorm(t, e)
		})
	}
}

func customAlgorithmGorm(t *testing.T, e *twoDS) {
	rows := []ShardedOrder{{ID: 1, UserID: 1}, {ID: 15, UserID: 1}, {ID: 3, UserID: 150}, {ID: 27, UserID: 150},
		{ID: 31, UserID: 250}, {ID: 40, UserID: 99}, {ID: 12, UserID: 101}, {ID: 22, UserID: 1}}
	for i := range rows {
		rows[i].Amount = 10
		if err := e.db.Create(&rows[i]).Error; err != nil {
			t.Fatalf("Create %+v: %v", rows[i], err)
		}
	}
	// Each row is in exactly the table the algorithms' rules compute.
	where := e.placement(t)
	for _, r := range rows {
		want := fmt.Sprintf("ds_%d.sharded_orders_%d", (r.UserID/100)%2, (r.ID/10)%2)
		if got := where[r.ID].at.String(); got != want {
			t.Errorf("row %+v is in %s, want %s", r, got, want)
		}
	}
	for _, r := range rows {
		var got ShardedOrder
		if err := e.db.Where("user_id = ? AND id = ?", r.UserID, r.ID).Take(&got).Error; err != nil || got.ID != r.ID {
			t.Errorf("Take(user %d, id %d) = %+v, %v", r.UserID, r.ID, got, err)
		}
	}
	// gormplugin reads BETWEEN as no condition on the column (the
	// statement would be ErrMissingShardingKey): the range is spelt out.
	var ids []int64
	if err := e.db.Model(&ShardedOrder{}).Where("user_id = ? AND id >= ? AND id <= ?", 1, 0, 20).Order("id").Pluck("id", &ids).Error; err != nil || fmt.Sprint(ids) != "[1 15]" {
		t.Errorf("user 1, 0 <= id <= 20: %v, %v; want [1 15]", ids, err)
	}
	ids = nil
	if err := e.db.Model(&ShardedOrder{}).Where("user_id IN ? AND id >= ?", []int64{150, 250}, 20).Order("id").Pluck("id", &ids).Error; err != nil || fmt.Sprint(ids) != "[27 31]" {
		t.Errorf("users 150, 250, id >= 20: %v, %v; want [27 31]", ids, err)
	}
	res := e.db.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 150, 27).Update("amount", 99)
	if res.Error != nil || res.RowsAffected != 1 {
		t.Errorf("Update: %d rows, %v; want 1", res.RowsAffected, res.Error)
	}
	var amount int
	if err := e.chk[1].Table("sharded_orders_0").Where("id = ?", 27).Pluck("amount", &amount).Error; err != nil || amount != 99 {
		t.Errorf("amount of row 27 in ds_1.sharded_orders_0: %d, %v; want 99", amount, err)
	}
	// A range on user_id, whose algorithm neither answers ranges nor
	// allows them everywhere, is refused before anything runs.
	before := e.snapshot(t)
	err := e.db.Where("user_id > ?", 0).Delete(&ShardedOrder{}).Error
	if !errors.Is(err, shardconf.ErrRangeNotSupported) {
		t.Errorf("Delete with a range on user_id: err = %v, want ErrRangeNotSupported", err)
	}
	if after := e.snapshot(t); after != before {
		t.Errorf("rows changed by the refused Delete:\nbefore %s\nafter  %s", before, after)
	}
}
