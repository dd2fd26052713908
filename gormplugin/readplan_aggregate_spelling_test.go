package gormplugin_test

import (
	"testing"

	"gorm.io/gorm"
)

// An aggregate is recognised however it is spelled — a quoted function
// name, an ordered-set or hypothetical-set aggregate (WITHIN GROUP) — and
// merged or refused: never passed through as a per-row expression, which
// would give one row per table.

var aggregateSpellingCases = []readCase{
	{name: `a quoted "count"(*)`, refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select(`"count"(*) as n`)
	})},
	{name: `a quoted "sum"(amount) per group`, refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select(`user_id, "sum"(amount) as s`).Group("user_id").Order("user_id")
	})},
	{name: "a backquoted `max`(amount)", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("`max`(amount) as m")
	})},
	{name: "rank(...) WITHIN GROUP", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("rank(5) within group (order by amount) as r")
	})},
	{name: "an aggregate with FILTER", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(*) filter (where amount > 5) as n")
	})},
	{name: "an aggregate qualified by its schema", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("pg_catalog.count(*) as n")
	})},
	{name: "COUNT with a space before the parenthesis", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("COUNT (*) as n, SUM (amount) as s")
	})},
	{name: "an aggregate in ORDER BY of an ungrouped read", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id").Order(`"max"(amount)`)
	})},
}

func TestAggregatesAreRecognisedHoweverSpelled(t *testing.T) {
	eachReadBackendIn(t, "gormatk_agg_", func(t *testing.T, e *readEnv) {
		for _, c := range aggregateSpellingCases {
			e.check(t, c)
		}
	})
}
