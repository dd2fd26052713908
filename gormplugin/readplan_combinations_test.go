package gormplugin_test

import (
	"errors"
	"math/rand"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/gormplugin"
)

// Random combinations of the GORM calls the other read tests try one by
// one (select forms, conditions, grouping, ordering, limits, finishers)
// agree with one table or are refused (fixed seed).

type comboPart struct {
	text  string
	apply func(*gorm.DB) *gorm.DB
}

func part(text string, f func(*gorm.DB) *gorm.DB) comboPart { return comboPart{text, f} }

var (
	comboSelects = []comboPart{
		part("", func(db *gorm.DB) *gorm.DB { return db }),
		part("id, amount as qty", func(db *gorm.DB) *gorm.DB { return db.Select("id, amount as qty") }),
		part("id, -amount as amount, big", func(db *gorm.DB) *gorm.DB { return db.Select("id, -amount as amount, big") }),
		part("Distinct(amount, user_id)", func(db *gorm.DB) *gorm.DB { return db.Distinct("amount", "user_id") }),
		part("*, amount % 3 as m", func(db *gorm.DB) *gorm.DB { return db.Select("*, amount % 3 as m") }),
		part("id, qty, amount + ? as a", func(db *gorm.DB) *gorm.DB { return db.Select("id, qty, amount + ? as a", 2) }),
	}
	comboGroups = []comboPart{
		part("user_id aggregates", func(db *gorm.DB) *gorm.DB {
			return db.Select("user_id, count(*) as n, sum(amount) as amount, max(qty) as qty, avg(big % 1000) as a").Group("user_id")
		}),
		part("amount % 4 aggregates", func(db *gorm.DB) *gorm.DB {
			return db.Select("amount % 4 as k, count(distinct user_id) as n, min(qty) as lo, sum(qty) as s").Group("amount % 4")
		}),
		part("qty with HAVING", func(db *gorm.DB) *gorm.DB {
			return db.Select("qty, count(*) as n, sum(amount) - min(amount) as d").Group("qty").Having("count(*) > ? OR qty IS NULL", 3)
		}),
		part("no GROUP BY", func(db *gorm.DB) *gorm.DB { return db.Select("count(*) as n, max(amount) as m, avg(qty) as a") }),
	}
	comboWheres = []comboPart{
		part("", func(db *gorm.DB) *gorm.DB { return db }),
		part("amount > 4", func(db *gorm.DB) *gorm.DB { return db.Where("amount > ?", 4) }),
		part("user_id IN (1,3) OR qty IS NULL", func(db *gorm.DB) *gorm.DB { return db.Where("user_id IN ? OR qty IS NULL", []int{1, 3}) }),
		part("NOT amount = 5", func(db *gorm.DB) *gorm.DB { return db.Not("amount = ?", 5) }),
	}
	comboOrders = []comboPart{
		part("", func(db *gorm.DB) *gorm.DB { return db }),
		part("1 desc", func(db *gorm.DB) *gorm.DB { return db.Order("1 desc") }),
		part("2, 1", func(db *gorm.DB) *gorm.DB { return db.Order("2, 1") }),
		part("qty desc", func(db *gorm.DB) *gorm.DB { return db.Order("qty desc") }),
		part("amount", func(db *gorm.DB) *gorm.DB {
			return db.Order(clause.OrderByColumn{Column: clause.Column{Name: "amount"}})
		}),
		part("n desc", func(db *gorm.DB) *gorm.DB { return db.Order("n desc") }),
		part("read_orders.amount desc", func(db *gorm.DB) *gorm.DB { return db.Order("read_orders.amount desc") }),
		part("amount % 5", func(db *gorm.DB) *gorm.DB { return db.Order("amount % 5") }),
	}
	comboLimits = []comboPart{
		part("", func(db *gorm.DB) *gorm.DB { return db }),
		part("Limit(3)", func(db *gorm.DB) *gorm.DB { return db.Limit(3) }),
		part("Offset(2).Limit(4)", func(db *gorm.DB) *gorm.DB { return db.Offset(2).Limit(4) }),
		part("Limit(0)", func(db *gorm.DB) *gorm.DB { return db.Limit(0) }),
	}
)

func TestRandomReadCombinationsAgreeOrAreRefused(t *testing.T) {
	eachReadBackendIn(t, "gormatk_combo_", func(t *testing.T, e *readEnv) {
		rnd := rand.New(rand.NewSource(20261126))
		agreed, refused := 0, 0
		for i := 0; i < comboCount; i++ {
			sel := comboSelects[rnd.Intn(len(comboSelects))]
			if rnd.Intn(3) == 0 {
				sel = comboGroups[rnd.Intn(len(comboGroups))]
			}
			parts := []comboPart{sel, comboWheres[rnd.Intn(len(comboWheres))], comboOrders[rnd.Intn(len(comboOrders))],
				comboOrders[rnd.Intn(len(comboOrders))], comboLimits[rnd.Intn(len(comboLimits))]}
			name := ""
			for _, p := range parts {
				name += p.text + " | "
			}
			finisher := rnd.Intn(3)
			run := func(db *gorm.DB) (any, error) {
				q := model(db)
				for _, p := range parts {
					q = p.apply(q)
				}
				switch finisher {
				case 0:
					var n int64
					err := q.Count(&n).Error
					return n, err
				default:
					var out []map[string]any
					err := q.Find(&out).Error
					return out, err
				}
			}
			got, err := run(e.db)
			if errors.Is(err, gormplugin.ErrUnsupported) {
				refused++
				continue
			}
			want, werr := run(e.oracle)
			if err != nil || werr != nil {
				if (err == nil) != (werr == nil) {
					t.Errorf("%s(finisher %d): error %v; the oracle's %v", name, finisher, err, werr)
				}
				continue
			}
			// ORDER BY keys here may tie, and LIMIT may then take any of
			// the tied rows: compare the rows as a multiset without LIMIT,
			// their number with it (the ordering tests check orders).
			switch {
			case finisher == 0 && got != want:
				t.Errorf("%s(Count): %v; the oracle's %v", name, got, want)
			case finisher != 0 && parts[4].text == "" && show(sortedText(got)) != show(sortedText(want)):
				t.Errorf("%s(Find):\n got  %.600s\n want %.600s", name, show(sortedText(got)), show(sortedText(want)))
			case finisher != 0 && reflectLen(got) != reflectLen(want):
				t.Errorf("%s(Find): %d rows; the oracle's %d", name, reflectLen(got), reflectLen(want))
			}
			agreed++
		}
		t.Logf("%d agreed or ran on both sides, %d refused", agreed, refused)
	})
}

func reflectLen(v any) int {
	if m, ok := v.([]map[string]any); ok {
		return len(m)
	}
	return -1
}

// comboCount is how many combinations each backend runs.
var comboCount = 400
