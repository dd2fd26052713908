package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// HintRow is t_hint, routed by hints alone.
type HintRow struct {
	ID     int64   `gorm:"column:id;primaryKey;autoIncrement:false"`
	Tenant int64   `gorm:"column:tenant"`
	V      *string `gorm:"column:v"`
	N      *int64  `gorm:"column:n"`
}

func (HintRow) TableName() string { return "t_hint" }

// AlgoRow is t_algo, routed by the Go algorithms.
type AlgoRow struct {
	K   int64   `gorm:"column:k;primaryKey;autoIncrement:false"`
	Grp *int64  `gorm:"column:grp"`
	V   *string `gorm:"column:v"`
}

func (AlgoRow) TableName() string { return "t_algo" }

// xrun is a GORM call on t_hint or t_algo; hinted: shardkey's side,
// which runs with the step's hints (the oracle's runs without).
type xrun func(db *gorm.DB, hinted bool) ([]int64, error)

// under is db with ctx's hints on shardkey's side.
func under(db *gorm.DB, ctx context.Context, hinted bool) *gorm.DB {
	if hinted {
		return db.WithContext(ctx)
	}
	return db
}

func (c *gormClient) buildExtra(h *harness, rng *rand.Rand, step int) op {
	g := &gormGen{h: h, rng: rng, step: step}
	db, handle := c.strict, "strict"
	if rng.IntN(3) == 0 {
		db, handle = c.scatter, "scatter"
	}
	var kind, desc string
	var run xrun
	if rng.IntN(2) == 0 {
		kind, desc, run = g.hintPlan()
	} else {
		kind, desc, run = g.algoCall()
	}
	return op{kind: kind, desc: handle + ": " + desc,
		shard:  func() ([]int64, error) { return run(db, true) },
		oracle: func() ([]int64, error) { return run(c.oracle, false) }}
}

func (g *gormGen) hintRow(id, tenant int64) HintRow {
	return HintRow{ID: id, Tenant: tenant, V: g.status(), N: g.amount()}
}

func hintRowText(r HintRow) string {
	return fmt.Sprintf("HintRow{ID: %d, Tenant: %d, V: %s, N: %s}", r.ID, r.Tenant, ptrText(r.V), ptrText(r.N))
}

// hinted is a context with one tenant's hint, in some Go type.
func (g *gormGen) hinted(t int64) (context.Context, string) {
	v := hintValue(g.rng, t)
	return shardconf.WithHint(context.Background(), "t_hint", shardconf.Hint{Database: []any{v}, Table: []any{v}}),
		fmt.Sprintf("hint t_hint %s", argText(v))
}

// hintCall is one GORM call on t_hint, its hint context aside: the kind,
// the description and the call on a *gorm.DB that carries (or not) the hint.
func (g *gormGen) hintCall() (string, string, func(*gorm.DB) ([]int64, error), int64, []int64) {
	rng := g.rng
	switch n := rng.IntN(100); {
	case n < 18:
		r := g.h.insertHint(rng)
		row := g.hintRow(r.id, tenantFor(rng, r.id))
		return "create", "Create(&" + hintRowText(row) + ")",
			func(db *gorm.DB) ([]int64, error) { return result(db.Create(&row)) }, tenantFor(rng, r.id), nil
	case n < 26:
		cls := int64(rng.IntN(6))
		var rows []HintRow
		var ds []string
		for _, id := range g.h.freshHintIDs(rng, 2+rng.IntN(3), cls) {
			rows = append(rows, g.hintRow(id, tenantFor(rng, id)))
			ds = append(ds, hintRowText(rows[len(rows)-1]))
		}
		return "createbatch", "CreateInBatches([]HintRow{" + strings.Join(ds, ", ") + "}, 2)",
			func(db *gorm.DB) ([]int64, error) { return result(db.CreateInBatches(rows, 2)) }, pick(rng, tenantsOfClass(cls)), nil
	case n < 36:
		r := g.h.existingHint(rng)
		row := g.hintRow(r.id, tenantFor(rng, r.id))
		return "save", "Save(&" + hintRowText(row) + ")",
			func(db *gorm.DB) ([]int64, error) { return result(db.Save(&row)) }, tenantFor(rng, r.id), nil
	case n < 50:
		r := g.h.existingHint(rng)
		v := g.status()
		return "updates.id", fmt.Sprintf("Model(&HintRow{}).Where(\"id = ?\", %d).Updates(map{v: %s})", r.id, ptrText(v)),
			func(db *gorm.DB) ([]int64, error) {
				return result(db.Model(&HintRow{}).Where("id = ?", r.id).Updates(map[string]any{"v": v}))
			}, tenantFor(rng, r.id), nil
	case n < 58:
		t := int64(rng.IntN(hintTenants))
		v := g.status()
		return "update.tenant", fmt.Sprintf("Model(&HintRow{}).Where(\"tenant = ?\", %d).Update(\"v\", %s)", t, ptrText(v)),
			func(db *gorm.DB) ([]int64, error) {
				return result(db.Model(&HintRow{}).Where("tenant = ?", t).Update("v", v))
			}, t, nil
	case n < 68:
		ts := someTenants(rng)
		return "update.multi", fmt.Sprintf("Model(&HintRow{}).Where(\"tenant IN ?\", %v).Update(\"n\", gorm.Expr(\"n + 1\"))", ts),
			func(db *gorm.DB) ([]int64, error) {
				return result(db.Model(&HintRow{}).Where("tenant IN ?", ts).Update("n", gorm.Expr("n + 1")))
			}, -1, ts
	case n < 78:
		r := g.h.existingHint(rng)
		return "delete.id", fmt.Sprintf("Where(\"id = ?\", %d).Delete(&HintRow{})", r.id),
			func(db *gorm.DB) ([]int64, error) { return result(db.Where("id = ?", r.id).Delete(&HintRow{})) },
			tenantFor(rng, r.id), nil
	case n < 84:
		ts := someTenants(rng)
		x := rng.IntN(40)
		return "delete.multi", fmt.Sprintf("Where(\"tenant IN ? AND id < ?\", %v, %d).Delete(&HintRow{})", ts, x),
			func(db *gorm.DB) ([]int64, error) {
				return result(db.Where("tenant IN ? AND id < ?", ts, x).Delete(&HintRow{}))
			}, -1, ts
	default:
		r := g.h.existingHint(rng)
		row := g.hintRow(r.id, tenantFor(rng, r.id))
		return "upsert", "Clauses(OnConflict{id: v}).Create(&" + hintRowText(row) + ")",
			func(db *gorm.DB) ([]int64, error) {
				return result(db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}},
					DoUpdates: clause.AssignmentColumns([]string{"v"})}).Create(&row))
			}, tenantFor(rng, r.id), nil
	}
}

// hintCtx is the context of a hint call: one tenant's hint, or several.
func (g *gormGen) hintCtx(t int64, ts []int64) (context.Context, string) {
	if ts != nil {
		return tenantsHint(context.Background(), ts), fmt.Sprintf("hint t_hint %v", ts)
	}
	return g.hinted(t)
}

// hintPlan draws a GORM step on t_hint (see sqlGen.hintPlan).
func (g *gormGen) hintPlan() (string, string, xrun) {
	rng := g.rng
	switch n := rng.IntN(100); {
	case n < 55:
		k, d, f, t, ts := g.hintCall()
		ctx, hd := g.hintCtx(t, ts)
		return "gorm.hint." + k, d + " [" + hd + "]", func(db *gorm.DB, hinted bool) ([]int64, error) {
			return f(under(db, ctx, hinted))
		}
	case n < 63:
		k, d, f, _, _ := g.hintCall()
		return "gorm.hint.nohint." + k, d + " [no hint]", func(db *gorm.DB, _ bool) ([]int64, error) { return f(db) }
	case n < 66: // a read under several hint values
		ts := someTenants(rng)
		ctx := tenantsHint(context.Background(), ts)
		return "gorm.hint.find.multi", fmt.Sprintf("Where(\"tenant IN ?\", %v).Find(&[]HintRow{}) [hint t_hint %v]", ts, ts),
			func(db *gorm.DB, hinted bool) ([]int64, error) {
				var rs []HintRow
				err := under(db, ctx, hinted).Where("tenant IN ?", ts).Find(&rs).Error
				return hintRowsSum(rs), err
			}
	case n < 70:
		if rng.IntN(2) == 0 {
			p := g.h.existing(rng, "t_order")
			ctx := shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Database: []any{p.user}, Table: []any{p.key}})
			return "gorm.hint.unused.order", fmt.Sprintf("Model(&Order{}).Where(\"user_id = ? AND order_id = ?\", %d, %d).Update(\"status\", \"h\") [hint t_order]", p.user, p.key),
				func(db *gorm.DB, hinted bool) ([]int64, error) {
					return result(under(db, ctx, hinted).Model(&Order{}).Where("user_id = ? AND order_id = ?", p.user, p.key).Update("status", "h"))
				}
		}
		k := g.h.existingAlgo(rng)
		ctx := shardconf.WithHint(context.Background(), "t_algo", shardconf.Hint{Table: []any{k}})
		return "gorm.hint.unused.algo", fmt.Sprintf("Model(&AlgoRow{}).Where(\"k = ?\", %d).Update(\"v\", \"h\") [hint t_algo]", k),
			func(db *gorm.DB, hinted bool) ([]int64, error) {
				return result(under(db, ctx, hinted).Model(&AlgoRow{}).Where("k = ?", k).Update("v", "h"))
			}
	case n < 76: // see sqlGen.setTenant
		r := g.h.existingHint(rng)
		kind, to := "gorm.hint.settenant.same", tenantFor(rng, r.id)
		if *flagHintTenant && rng.IntN(2) == 0 {
			kind, to = "gorm.hint.settenant.other", otherClassTenant(rng, r.tenant)
		}
		ctx, hd := g.hinted(r.tenant)
		return kind, fmt.Sprintf("Model(&HintRow{}).Where(\"id = ?\", %d).Update(\"tenant\", %d) [%s]", r.id, to, hd),
			func(db *gorm.DB, hinted bool) ([]int64, error) {
				return result(under(db, ctx, hinted).Model(&HintRow{}).Where("id = ?", r.id).Update("tenant", to))
			}
	default: // several calls, each under its own hint: in a transaction, or on a PrepareStmt session
		tx := n < 90
		var fs []func(*gorm.DB) ([]int64, error)
		var ctxs []context.Context
		var ds []string
		for range 1 + rng.IntN(3) {
			_, d, f, t, ts := g.hintCall()
			ctx, hd := g.hintCtx(t, ts)
			fs, ctxs, ds = append(fs, f), append(ctxs, ctx), append(ds, d+" ["+hd+"]")
		}
		commit := rng.IntN(4) != 0
		// the *gorm.DB the session or transaction starts from carries a hint
		// for some tenant now and then; each call's own WithContext replaces it
		outer := context.Background()
		if rng.IntN(2) == 0 {
			outer, _ = g.hinted(int64(rng.IntN(hintTenants)))
			ds[0] = "[outer: a hint for some tenant] " + ds[0]
		}
		kind, desc := "gorm.hint.prepared", "Session(PrepareStmt) {\n  "+strings.Join(ds, "\n  ")+"\n}"
		if tx {
			kind, desc = "gorm.hint.tx", "db.Transaction(func(tx) {\n  tx.WithContext(hint)."+strings.Join(ds, "\n  tx.WithContext(hint).")+"\n})"
			if !commit {
				kind, desc = kind+".rollback", desc+" // rollback"
			}
		}
		done := len(fs) // calls of a session that shardkey ran before one failed
		return kind, desc, func(db *gorm.DB, hinted bool) ([]int64, error) {
			var rows []int64
			each := func(db *gorm.DB) error {
				for i, f := range fs {
					if !tx && !hinted && i == done {
						break
					}
					n, err := f(under(db, ctxs[i], hinted))
					if err != nil {
						if !tx && hinted && i > 0 {
							// no transaction: the calls before stay done, and
							// the step is those calls (the oracle runs them)
							done = i
							return nil
						}
						return err
					}
					rows = append(rows, n...)
				}
				return nil
			}
			db = under(db, outer, hinted)
			if !tx {
				return rows, each(db.Session(&gorm.Session{PrepareStmt: true}))
			}
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := each(tx); err != nil {
					return err
				}
				if !commit && hinted {
					return errRolledBack
				}
				return nil
			})
			return rows, err
		}
	}
}

// algoCall draws a GORM call on t_algo.
func (g *gormGen) algoCall() (string, string, xrun) {
	rng := g.rng
	plain := func(kind, desc string, f func(db *gorm.DB) *gorm.DB) (string, string, xrun) {
		return "gorm.algo." + kind, desc, func(db *gorm.DB, _ bool) ([]int64, error) { return result(f(db)) }
	}
	row := func(k int64) AlgoRow { return AlgoRow{K: k, Grp: g.amount(), V: g.status()} }
	rowText := func(r AlgoRow) string {
		return fmt.Sprintf("AlgoRow{K: %d, Grp: %s, V: %s}", r.K, ptrText(r.Grp), ptrText(r.V))
	}
	switch n := rng.IntN(100); {
	case n < 14:
		r := row(g.h.existingAlgo(rng))
		return plain("create", "Create(&"+rowText(r)+")", func(db *gorm.DB) *gorm.DB { return db.Create(&r) })
	case n < 24:
		var rs []AlgoRow
		var ds []string
		for _, k := range g.h.freshAlgoKeys(rng, 2+rng.IntN(3)) {
			rs = append(rs, row(k))
			ds = append(ds, rowText(rs[len(rs)-1]))
		}
		return plain("createbatch", "Create([]AlgoRow{"+strings.Join(ds, ", ")+"})", func(db *gorm.DB) *gorm.DB { return db.Create(&rs) })
	case n < 32:
		r := row(g.h.existingAlgo(rng))
		return plain("save", "Save(&"+rowText(r)+")", func(db *gorm.DB) *gorm.DB { return db.Save(&r) })
	case n < 56:
		shape, q, args := g.algoWhere(g.h.existingAlgo(rng))
		v := g.status()
		return plain("update."+shape, fmt.Sprintf("Model(&AlgoRow{}).Where(%q, %s).Update(\"v\", %s)", q, argText(args), ptrText(v)),
			func(db *gorm.DB) *gorm.DB { return db.Model(&AlgoRow{}).Where(q, args...).Update("v", v) })
	case n < 74:
		shape, q, args := g.algoWhere(g.h.existingAlgo(rng))
		return plain("delete."+shape, fmt.Sprintf("Where(%q, %s).Delete(&AlgoRow{})", q, argText(args)),
			func(db *gorm.DB) *gorm.DB { return db.Where(q, args...).Delete(&AlgoRow{}) })
	case n < 84:
		k := g.h.existingAlgo(rng)
		same := rng.IntN(2) == 0
		to := algoKeyLike(rng, k, same)
		kind := map[bool]string{true: "setk.same", false: "setk.other"}[same]
		return plain(kind, fmt.Sprintf("Model(&AlgoRow{}).Where(\"k = ?\", %d).Update(\"k\", %d)", k, to),
			func(db *gorm.DB) *gorm.DB { return db.Model(&AlgoRow{}).Where("k = ?", k).Update("k", to) })
	case n < 90:
		shape, q, args := g.algoWhere(g.h.existingAlgo(rng))
		return "gorm.algo.find." + shape, fmt.Sprintf("Where(%q, %s).Find(&[]AlgoRow{})", q, argText(args)),
			func(db *gorm.DB, _ bool) ([]int64, error) {
				var rs []AlgoRow
				err := db.Where(q, args...).Find(&rs).Error
				var sum int64
				for _, r := range rs {
					sum += r.K
				}
				return []int64{int64(len(rs)), sum}, err
			}
	default:
		r := row(g.h.existingAlgo(rng))
		return plain("upsert", "Clauses(OnConflict{k: v, grp}).Create(&"+rowText(r)+")", func(db *gorm.DB) *gorm.DB {
			return db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "k"}},
				DoUpdates: clause.AssignmentColumns([]string{"v", "grp"})}).Create(&r)
		})
	}
}

// algoWhere is a condition on k of some shape around k (GORM).
func (g *gormGen) algoWhere(k int64) (string, string, []any) {
	rng := g.rng
	lo := k - int64(rng.IntN(25))
	if lo > k {
		lo = k
	}
	hi := lo + int64(rng.IntN(30))
	if hi < lo {
		hi = lo
	}
	switch shape := pick(rng, []string{"eq", "in", "between", "gelt", "gt", "lt"}); shape {
	case "eq":
		return shape, "k = ?", []any{g.num(k)}
	case "in":
		return shape, "k IN ?", []any{[]any{g.num(k), g.num(algoKey(rng)), g.num(algoKey(rng))}}
	case "between":
		return shape, "k BETWEEN ? AND ?", []any{g.num(lo), g.num(hi)}
	case "gelt":
		return shape, "k >= ? AND k < ?", []any{g.num(lo), g.num(hi)}
	case "gt":
		return shape, "k > ?", []any{g.num(lo)}
	default:
		return shape, "k < ?", []any{g.num(hi)}
	}
}

// hintRowsSum is how many rows a read found and the sum of their ids.
func hintRowsSum(rs []HintRow) []int64 {
	var sum int64
	for _, r := range rs {
		sum += r.ID
	}
	return []int64{int64(len(rs)), sum}
}
