package gormplugin_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// Go algorithms serving hint strategies under GORM: custom_notes' data
// source by an integer hint through a registered type, its table by a
// region hint through CLASS_BASED with strategy HINT.
const customHintGormRules = `
rules:
- !SHARDING
  tables:
    custom_notes:
      actualDataNodes: ds_0.custom_notes_eu, ds_0.custom_notes_us, ds_1.custom_notes_eu, ds_1.custom_notes_us
      databaseStrategy: {hint: {shardingAlgorithmName: ds_by_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: region_by_hint}}
  shardingAlgorithms:
    ds_by_hint: {type: %s}
    region_by_hint:
      type: CLASS_BASED
      props: {strategy: HINT, algorithmClassName: %s}
`

type CustomNote struct {
	ID   int64  `gorm:"primaryKey;autoIncrement:false"`
	Body string `gorm:"size:16"`
}

type parityHint struct{}

func (parityHint) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok || v.Column != "" {
		return "", fmt.Errorf("want an integer hint value without a column, got %T in column %q", v.Value, v.Column)
	}
	return targets[n%2], nil
}

type regionHint struct{}

func (regionHint) DoSharding(_ []string, v shardconf.ShardingValue) (string, error) {
	switch r, _ := v.Value.(string); r {
	case "eu", "us":
		return v.Table + "_" + r, nil
	default:
		return "", fmt.Errorf("%w: no region %v", shardconf.ErrNoRoute, v.Value)
	}
}

func TestCustomAlgorithmRoutesHintedGormStatements(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			n := customAlgoSeq.Add(1)
			parity, region := fmt.Sprintf("GORM_PARITY_%d", n), fmt.Sprintf("com.example.gorm.RegionHint%d", n)
			if err := shardconf.RegisterAlgorithm(parity, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return parityHint{}, nil }); err != nil {
				t.Fatal(err)
			}
			if err := shardconf.RegisterAlgorithm(region, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return regionHint{}, nil }); err != nil {
				t.Fatal(err)
			}
			e := openTwoDS(t, be, "custom_hint_"+be, fmt.Sprintf(customHintGormRules, parity, region), nil, []any{&CustomNote{}})
			customHintGorm(t, e)
		})
	}
}

func customHintGorm(t *testing.T, e *twoDS) {
	at := func(ds int, r string) context.Context {
		return shardconf.WithHint(context.Background(), "custom_notes", shardconf.Hint{Database: []any{ds}, Table: []any{r}})
	}
	for i, h := range []struct {
		ds int
		r  string
	}{{0, "eu"}, {1, "us"}, {3, "eu"}} {
		if err := e.db.WithContext(at(h.ds, h.r)).Create(&CustomNote{ID: int64(i + 1), Body: "x"}).Error; err != nil {
			t.Fatalf("Create hinted %d/%s: %v", h.ds, h.r, err)
		}
	}
	for _, w := range []struct {
		ds    int
		table string
		ids   []int64
	}{{0, "custom_notes_eu", []int64{1}}, {0, "custom_notes_us", nil}, {1, "custom_notes_eu", []int64{3}}, {1, "custom_notes_us", []int64{2}}} {
		var got []int64
		if err := e.chk[w.ds].Table(w.table).Order("id").Pluck("id", &got).Error; err != nil || fmt.Sprint(got) != fmt.Sprint(w.ids) {
			t.Errorf("ds_%d.%s holds %v (%v), want %v", w.ds, w.table, got, err, w.ids)
		}
	}
	var notes []CustomNote
	if err := e.db.WithContext(at(1, "us")).Find(&notes).Error; err != nil || len(notes) != 1 || notes[0].ID != 2 {
		t.Errorf("Find hinted at ds_1.custom_notes_us = %+v, %v; want note 2", notes, err)
	}
	res := e.db.WithContext(at(3, "eu")).Model(&CustomNote{}).Where("id = ?", 3).Update("body", "y")
	if res.Error != nil || res.RowsAffected != 1 {
		t.Errorf("hinted Update: %d rows, %v; want 1", res.RowsAffected, res.Error)
	}
	// An unknown region is the algorithm's ErrNoRoute; no hint is
	// ErrMissingShardingKey; nothing is written either way.
	if err := e.db.WithContext(at(0, "jp")).Create(&CustomNote{ID: 9}).Error; !errors.Is(err, shardconf.ErrNoRoute) {
		t.Errorf("Create hinted at region jp: err = %v, want ErrNoRoute", err)
	}
	if err := e.db.Create(&CustomNote{ID: 10}).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("Create without a hint: err = %v, want ErrMissingShardingKey", err)
	}
	total := 0
	for ds := range e.chk {
		for _, tb := range []string{"custom_notes_eu", "custom_notes_us"} {
			var n int64
			if err := e.chk[ds].Table(tb).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			total += int(n)
		}
	}
	if total != 3 {
		t.Errorf("%d rows in all, want the 3 hinted creates", total)
	}
}
