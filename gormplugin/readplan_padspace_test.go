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

// Latin1Row declares a latin1 binary collation: MariaDB's latin1 is
// cp1252, whose bytes (€ is 0x80) order differently from the UTF-8 the
// driver returns (€ is E2 82 AC, after é's C3 A9).
type Latin1Row struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	L      string `gorm:"type:varchar(10) CHARACTER SET latin1 COLLATE latin1_bin"`
}

func (Latin1Row) TableName() string { return "read_orders" }

func TestBinaryCollationOfAnotherCharsetIsRefusedOnMariaDB(t *testing.T) {
	e := newReadEnvIn(t, "mariadb", "gormatk_latin1_")
	for _, db := range append([]*gorm.DB{e.oracle}, e.plain[:]...) {
		for _, table := range []string{"read_orders", "read_orders_0", "read_orders_1"} {
			_ = db.Exec("ALTER TABLE " + table + " ADD COLUMN l varchar(10) CHARACTER SET latin1 COLLATE latin1_bin").Error
		}
	}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		for i, l := range []string{"é", "€", "a", "ÿ", "Z", "€€"} {
			if err := db.Model(&ReadOrder{}).Where("user_id = ? AND amount = ?", 1+i%4, i%13).Update("l", l).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	(&readEnv{be: "mariadb", db: e.db, oracle: e.oracle}).check(t, readCase{name: "ORDER BY a latin1_bin column",
		refused: []string{"mariadb"}, run: func(db *gorm.DB) (any, error) {
			var ls []string
			err := db.Model(&Latin1Row{}).Where("l IS NOT NULL").Order("l").Limit(4).Pluck("l", &ls).Error
			return ls, err
		}})
}

// SQLite's NOCASE folds ASCII letters only and RTRIM ignores trailing
// spaces: named in ORDER BY, DISTINCT and GROUP BY they merge as SQLite
// compares.
func TestSQLiteNoCaseAndRTrimMergeAsSQLiteCompares(t *testing.T) {
	e := newReadEnvIn(t, "sqlite", "gormatk_nocase_")
	codes := []string{"ä", "Ä", "a ", "A", "a", "b  ", "B", "é", "É", "z"}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		for i, c := range codes {
			if err := db.Create(&ReadOrder{UserID: int64(1 + i%4), Amount: 100 + i, Code: c}).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, coll := range []string{"NOCASE", "RTRIM"} {
		for _, c := range []readCase{
			{name: "ORDER BY code COLLATE " + coll, run: func(db *gorm.DB) (any, error) {
				var amounts []int
				err := model(db).Where("amount >= ?", 100).Order("code COLLATE "+coll+" desc").Order("amount").Pluck("amount", &amounts).Error
				return amounts, err
			}},
			{name: "GROUP BY code COLLATE " + coll, run: func(db *gorm.DB) (any, error) {
				var out []struct{ N, Lo int }
				err := model(db).Select("count(*) as n, min(amount) as lo").Where("amount >= ?", 100).Group("code COLLATE " + coll).Order("lo").Find(&out).Error
				return out, err
			}},
		} {
			(&readEnv{be: "sqlite", db: e.db, oracle: e.oracle}).check(t, c)
		}
	}
}
