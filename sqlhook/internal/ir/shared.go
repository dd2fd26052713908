package ir

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

func ShardedCount(p *Plan) int {
	n := 0
	for _, t := range p.Tables {
		if t.Sharded {
			n++
		}
	}
	return n
}

func FlipOp(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

func PredOpOf(op string) (predOp, bool) {
	switch op {
	case "=":
		return OpEq, true
	case "<":
		return OpLt, true
	case "<=":
		return OpLe, true
	case ">":
		return OpGt, true
	case ">=":
		return OpGe, true
	}
	return 0, false
}

// ResolveColumn places a possibly qualified column on a plan table whose
// sharding column it is.
func ResolveColumn(h *Schema, p *Plan, aliases map[string]int, parts []string) (int, string, bool) {
	col := parts[len(parts)-1]
	if len(parts) >= 2 {
		t, ok := aliases[strings.ToLower(parts[len(parts)-2])]
		if !ok || t < 0 || !p.Tables[t].Sharded || !h.IsShardingColumn(p.Tables[t].Key, col) {
			return 0, "", false
		}
		return t, strings.ToLower(col), true
	}
	for i, t := range p.Tables {
		if t.Sharded && h.IsShardingColumn(t.Key, col) {
			return i, strings.ToLower(col), true
		}
	}
	return 0, "", false
}

// NumberRef is an integer literal; any other number is an expression
// for routing, since the value stored or compared depends on the column's
// type (3.5 is stored as 4 in an integer column).
func NumberRef(s string) ValRef {
	switch v := numberLiteral(s).(type) {
	case int64, uint64:
		return LitRef(v)
	}
	return ExprRef
}

// FindKeyColumn records the table's generated key column and where the
// INSERT lists it.
func FindKeyColumn(h *Schema, ins *InsertPlan, table string) {
	keyCol, _, ok := h.Router.KeyGenerator(table)
	if !ok {
		return
	}
	ins.KeyCol = keyCol
	for i, col := range ins.Cols {
		if strings.EqualFold(col, keyCol) {
			ins.KeyIdx = i
		}
	}
}

// FinishInsert records where the sharding columns are among the INSERT's.
func FinishInsert(h *Schema, p *Plan) {
	ins := p.Ins
	t := p.Tables[ins.Table]
	if !t.Sharded {
		return
	}
	for _, col := range h.ShardCols[t.Key] {
		idx := -1
		for i, c := range ins.Cols {
			if strings.EqualFold(c, col) {
				idx = i
			}
		}
		ins.ShardCol = append(ins.ShardCol, col)
		ins.ShardIdx = append(ins.ShardIdx, idx)
	}
}

// FinishTables chooses the table that routes the statement and checks the
// others can follow it: binding partners take the same-index table,
// broadcast tables keep their name.
func FinishTables(h *Schema, p *Plan) error {
	for i, t := range p.Tables {
		if !t.Sharded {
			continue
		}
		if p.Routed < 0 {
			p.Routed = i
			continue
		}
		main := p.Tables[p.Routed]
		if !slices.ContainsFunc(h.Router.BindingGroup(main.Logic), func(s string) bool { return strings.EqualFold(s, t.Logic) }) {
			return fmt.Errorf("%w: %s and %s are sharded tables that are not bound (bindingTables) to each other", ErrUnsupported, main.Logic, t.Logic)
		}
		p.Tables[i].PartnerOf = p.Routed
	}
	if p.Kind == KindInsert && p.Ins == nil {
		return fmt.Errorf("%w: INSERT into a logic table in a form that is not routed", ErrUnsupported)
	}
	// Keep predicates that constrain the routed table: its own, and those
	// of binding partners on a column of the same name.
	if p.Routed >= 0 {
		main := p.Tables[p.Routed].Key
		for bi, b := range p.Branches {
			kept := b[:0:0]
			for _, pr := range b {
				if pr.Table == p.Routed || (p.Tables[pr.Table].PartnerOf == p.Routed && h.IsShardingColumn(main, pr.Column)) {
					kept = append(kept, pr)
				}
			}
			p.Branches[bi] = kept
		}
	}
	return nil
}

// numberLiteral reads a numeric literal: int64 when it fits, then uint64,
// else float64 (PostgreSQL's grammar gives integers beyond int32 as
// "float" constants).
func numberLiteral(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}
