package gormplugin_test

import (
	"strings"
	"testing"

	"gorm.io/gorm"
)

// Binary collations compare as the database does at the edges: MySQL's
// *_bin PAD SPACE ('a' = 'a ', 'a\t' < 'a'), PostgreSQL's "C" and
// SQLite's BINARY (every byte counts), control characters and non-ASCII.
func TestBinaryTextComparesAsTheDatabaseAtTheEdges(t *testing.T) {
	eachReadBackendIn(t, "gormatk_pad_", func(t *testing.T, e *readEnv) {
		codes := []string{"a ", "a\t", "a", "A", "a  ", "é", "e\u0301", "\u00a0a", "", " "}
		for _, db := range []*gorm.DB{e.db, e.oracle} {
			for i, c := range codes {
				if err := db.Create(&ReadOrder{UserID: int64(1 + i%4), Amount: 100 + i, Code: c}).Error; err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, c := range []readCase{
			{name: "ORDER BY code, id", binary: true, run: func(db *gorm.DB) (any, error) {
				var amounts []int
				err := model(db).Where("amount >= ?", 100).Order("code").Order("amount").Pluck("amount", &amounts).Error
				return amounts, err
			}},
			{name: "ORDER BY code desc, limited", binary: true, run: func(db *gorm.DB) (any, error) {
				var amounts []int
				err := model(db).Where("amount >= ?", 100).Order("code desc").Order("amount").Limit(4).Pluck("amount", &amounts).Error
				return amounts, err
			}},
			{name: "GROUP BY code counts", binary: true, run: func(db *gorm.DB) (any, error) {
				var out []struct{ N, Lo int }
				err := model(db).Select("count(*) as n, min(amount) as lo").Where("amount >= ?", 100).Group("code").Order("lo").Find(&out).Error
				return out, err
			}},
			{name: "COUNT(DISTINCT code), MIN, MAX", binary: true, run: func(db *gorm.DB) (any, error) {
				var out struct {
					N      int
					Lo, Hi string
				}
				err := model(db).Select("count(distinct code) as n, min(code) as lo, max(code) as hi").Where("amount >= ?", 100).Scan(&out).Error
				if e.be == "mariadb" { // '' and ' ' are one value under PAD SPACE: either may come back
					out.Lo, out.Hi = strings.TrimRight(out.Lo, " "), strings.TrimRight(out.Hi, " ")
				}
				return out, err
			}},
			{name: "HAVING on code", binary: true, run: func(db *gorm.DB) (any, error) {
				var out []struct{ N, Lo int }
				err := model(db).Select("count(*) as n, min(amount) as lo").Where("amount >= ?", 100).Group("code").Having("code > ? AND code <> ?", "a", "é").Order("lo").Find(&out).Error
				return out, err
			}},
		} {
			e.check(t, c)
		}
	})
}
