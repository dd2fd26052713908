package difftest

import "testing"

// pinnedRead is a read, in its smallest form, whose merged answer can be
// subtly wrong (a USING operator, a pad-space collation, per-shard
// rounding, NULL placement, ...): it must agree with the oracle or be
// refused. The random runs find such forms; pinned here, they are checked
// whatever the seed.
type pinnedRead struct {
	name string
	db   string // "" for every database
	sql  *sqlQuery
	gorm *gormQ
	raw  string // a SELECT through GORM's Raw on sqlhook, scanned into maps
}

func col(name string) sqlItem { return sqlItem{text: name, kind: readColNamed(name).kind} }

func key(text, expr string, kind colKind, desc bool) sqlKey {
	return sqlKey{text: text, expr: expr, proj: -1, kind: kind, desc: desc}
}

func sqlPinned(items []sqlItem, group []string, order ...sqlKey) *sqlQuery {
	return &sqlQuery{items: items, group: group, order: order, limit: -1, off: -1}
}

var pinnedReads = []pinnedRead{
	{name: "USING > merged ascending", db: "postgres",
		sql: sqlPinned([]sqlItem{col("k")}, nil, key("k USING >", "k", kInt, false))},
	{name: "USING > on a locale collation", db: "postgres",
		sql: sqlPinned([]sqlItem{col("id"), col("label")}, nil, key("label USING >", "label", kTextDef, false))},
	{name: "utf8mb4_bin pads with spaces", db: "mariadb",
		sql: sqlPinned([]sqlItem{{text: "CONCAT(name, '-')", kind: kTextBin}, col("name")}, nil,
			key("2", "name", kTextBin, false), key("1", "CONCAT(name, '-')", kTextBin, false))},
	{name: "SUM of a division rounded per shard", db: "mariadb",
		sql: sqlPinned([]sqlItem{{text: "SUM(qty / 3)", kind: kDecimal}}, nil)},
	{name: "COLLATE BINARY key", db: "sqlite",
		sql: sqlPinned([]sqlItem{col("name"), col("id")}, nil,
			sqlKey{text: "label COLLATE BINARY", expr: "label COLLATE BINARY", proj: -1, kind: kTextBin, desc: true, nulls: "FIRST"},
			key("id", "id", kInt, false))},
	{name: "AVG of bigints near the limit", db: "sqlite", // positive only: no cancellation, so any order adds alike
		sql: &sqlQuery{items: []sqlItem{{text: "AVG(big)", kind: kFloat}}, where: []cell{{text: "big > 0"}}, limit: -1, off: -1}},
	{name: "GROUP BY an output alias", db: "postgres",
		sql: &sqlQuery{items: []sqlItem{{text: "k", kind: kInt, alias: "kk"}, {text: "COUNT(*)", kind: kInt}}, group: []string{"kk"}, limit: -1, off: -1}},
	{name: "merged rows keep the driver's scan types", db: "sqlite",
		raw: "SELECT id, flag, amount FROM t_read WHERE user_id IN (2, 3) AND flag IS NOT NULL AND amount IS NOT NULL"},
	{name: "Select subset ordered by a column not read",
		gorm: &gormQ{dest: "rows", sel: []string{"k", "big"}, order: []gormOrder{{col: "user_id", desc: true}}, limit: -1, off: -1}},
	{name: "NULL-tied first key then the primary key",
		gorm: &gormQ{dest: "last", order: []gormOrder{{col: "score"}}, limit: -1, off: -1}},
	{name: "NULL placement", gorm: &gormQ{dest: "first", order: []gormOrder{{col: "flag"}}, limit: -1, off: -1}},
	{name: "text in a locale collation",
		gorm: &gormQ{dest: "rows", order: []gormOrder{{col: "label"}, {col: "id"}}, limit: -1, off: -1}},
}

// TestPinnedReadsAgreeOrAreRefused runs every pinned read on each
// database it concerns.
func TestPinnedReadsAgreeOrAreRefused(t *testing.T) {
	for _, db := range readConfFromEnv(t).dbs {
		t.Run(db, func(t *testing.T) {
			w := newReadWorld(t, db, 20261126, 300)
			sg := &sqlReadGen{w: w}
			gg, gh := newGormReadGen(t, w), newGormOverHookGen(t, w)
			for _, f := range pinnedReads {
				if f.db != "" && f.db != db {
					continue
				}
				var rc readCase
				switch {
				case f.raw != "":
					rc = gh.rawTextCase(f.raw, []colKind{kDecimal, kBool, kInt}) // amount, flag, id: a map scan sorts them
				case f.sql != nil:
					q := *f.sql
					q.db = db
					q.usesDefText = q.comparesLabel()
					rc = sg.caseOf(&q)
				default:
					q := *f.gorm
					q.db, q.kinds = db, map[string]colKind{}
					rc = gg.caseOf(&q)
				}
				o := rc.judge(db)
				if o.v == divergent {
					t.Errorf("%s: %s\n  %s", f.name, rc.desc, o.reason)
				} else {
					t.Logf("%s: %s: %v", f.name, rc.desc, []string{"agreed", "refused", "divergent", "skipped"}[o.v])
				}
			}
		})
	}
}
