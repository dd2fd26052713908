package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// bind routes a compiled plan with the caller's arguments.
func (h *hook) bind(ctx context.Context, p *ir.Plan, args []driver.NamedValue) (*routed, error) {
	if p.Names != nil {
		var err error
		if args, err = ir.SQLiteArgs(p.Names, args); err != nil {
			return nil, err
		}
	}
	if len(args) < p.NParams {
		return nil, fmt.Errorf("sqlhook: the statement has %d placeholders but %d arguments were given", p.NParams, len(args))
	}
	for i := range args {
		if args[i].Name != "" {
			return nil, fmt.Errorf("%w: named argument %q in a statement on a logic table", ErrUnsupported, args[i].Name)
		}
	}
	if err := h.checkUnroutedHints(ctx, p); err != nil {
		return nil, err
	}
	switch p.Kind {
	case ir.KindDDL:
		return h.bindDDL(ctx, p, args)
	case ir.KindInsert:
		return h.bindInsert(ctx, p, args)
	}
	return h.bindWhere(ctx, p, args)
}

func (h *hook) bindDDL(ctx context.Context, p *ir.Plan, args []driver.NamedValue) (*routed, error) {
	if err := refuseDDLHint(ctx, p.Tables[0].Logic); err != nil {
		return nil, err
	}
	ts, err := h.Router.Targets(p.Tables[0].Logic)
	if err != nil {
		return nil, err
	}
	out := h.newRouted(len(ts))
	for _, t := range ts {
		phys := []string{t.Table}
		r := p.RenderFor(h.Dialect, ir.RenderSpec{Phys: phys})
		out.units = append(out.units, unit{ds: t.DataSource, sql: r.SQL, args: h.args(r, args, nil, nil)})
		out.notePhysical(phys)
	}
	return out, nil
}

// value is what an ir.ValRef holds for these arguments.
func value(v ir.ValRef, args []driver.NamedValue) any {
	if v.Param >= 0 {
		return args[v.Param].Value
	}
	return v.Lit
}

// routeValue is the value a sharding value is routed by: a time in the
// zone the driver writes it in (WithTimeLocation).
func (h *hook) routeValue(x any) any {
	if h.opts.timeLoc != nil {
		if t, ok := x.(time.Time); ok {
			return t.In(h.opts.timeLoc)
		}
	}
	return x
}

// conds turns one branch of the WHERE clause into router conditions on
// the routed table.
func (h *hook) conds(p *ir.Plan, branch []ir.Pred, args []driver.NamedValue, buf []shardconf.Cond) ([]shardconf.Cond, error) {
	for _, pr := range branch {
		col := pr.Column
		switch pr.Op {
		case ir.OpEq:
			buf = append(buf, shardconf.Eq(col, h.routeValue(value(pr.Vals[0], args))))
		case ir.OpIn:
			vs := make([]any, len(pr.Vals))
			for i, v := range pr.Vals {
				vs[i] = h.routeValue(value(v, args))
			}
			buf = append(buf, shardconf.In(col, vs...))
		case ir.OpAny:
			vs, err := listValues(value(pr.Vals[0], args))
			if err != nil {
				return nil, err
			}
			buf = append(buf, shardconf.In(col, vs...))
		case ir.OpBetween:
			buf = append(buf, shardconf.Between(col, h.routeValue(value(pr.Vals[0], args)), h.routeValue(value(pr.Vals[1], args))))
		case ir.OpLt:
			buf = append(buf, shardconf.Lt(col, h.routeValue(value(pr.Vals[0], args))))
		case ir.OpLe:
			buf = append(buf, shardconf.Le(col, h.routeValue(value(pr.Vals[0], args))))
		case ir.OpGt:
			buf = append(buf, shardconf.Gt(col, h.routeValue(value(pr.Vals[0], args))))
		case ir.OpGe:
			buf = append(buf, shardconf.Ge(col, h.routeValue(value(pr.Vals[0], args))))
		}
	}
	return buf, nil
}

// listValues spreads the argument of col = ANY($1).
func listValues(v any) ([]any, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, fmt.Errorf("%w: = ANY() of a %T, not a list", ErrUnsupported, v)
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, nil
}

// bindWhere routes a SELECT, UPDATE or DELETE by its WHERE clause and the
// hints of ctx.
func (h *hook) bindWhere(ctx context.Context, p *ir.Plan, args []driver.NamedValue) (*routed, error) {
	if p.Routed < 0 {
		return h.bindBroadcast(p, args)
	}
	main := p.Tables[p.Routed].Logic
	var targets []shardconf.Target
	var buf [4]shardconf.Cond
	branches := p.Branches
	if p.Unbounded || len(branches) == 0 {
		branches = [][]ir.Pred{nil}
	}
	for bi, branch := range branches {
		conds, err := h.conds(p, branch, args, buf[:0])
		if err != nil {
			return nil, err
		}
		ts, err := h.routeTable(ctx, main, conds)
		if err != nil {
			return nil, err
		}
		if bi == 0 {
			targets = ts
			continue
		}
		for _, t := range ts {
			if !containsTarget(targets, t) {
				targets = append(targets[:len(targets):len(targets)], t)
			}
		}
	}
	if err := h.checkKeyChange(ctx, p, targets, args); err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		// Contradictory conditions: no row can match; ask any one table so
		// the caller still gets a result of the right shape.
		all, err := h.Router.Targets(main)
		if err != nil {
			return nil, err
		}
		targets = all[:1]
	}
	if err := h.checkPartnerHints(ctx, p, targets); err != nil {
		return nil, err
	}
	if len(targets) > 1 {
		if p.Kind == ir.KindSelect && p.Sel.Multi != "" {
			return nil, fmt.Errorf("%w: %s across %d targets", ErrUnsupported, p.Sel.Multi, len(targets))
		}
		if p.Kind != ir.KindSelect && p.WriteMulti != "" {
			return nil, fmt.Errorf("%w: %s across %d targets", ErrUnsupported, p.WriteMulti, len(targets))
		}
	}
	out := h.newRouted(len(targets))
	mergeTail := p.Kind == ir.KindSelect && len(targets) > 1
	var limit any
	if mergeTail {
		var err error
		if out.merge, limit, err = h.mergeOf(p.Sel, args); err != nil {
			return nil, err
		}
	}
	var physBuf [4]string
	for _, t := range targets {
		phys := physBuf[:0]
		if len(p.Tables) > len(physBuf) {
			phys = make([]string, 0, len(p.Tables))
		}
		for i, pt := range p.Tables {
			switch {
			case i == p.Routed:
				phys = append(phys, t.Table)
			case pt.PartnerOf >= 0:
				bt, err := h.partner(main, t, pt.Logic)
				if err != nil {
					return nil, err
				}
				phys = append(phys, bt.Table)
			default:
				phys = append(phys, pt.Logic)
			}
		}
		r := p.RenderFor(h.Dialect, ir.RenderSpec{Phys: phys, MergeTail: mergeTail})
		out.units = append(out.units, unit{ds: t.DataSource, sql: r.SQL, args: h.args(r, args, nil, limit)})
		out.notePhysical(phys)
	}
	return out, nil
}

func containsTarget(ts []shardconf.Target, t shardconf.Target) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// bindBroadcast routes a statement naming only broadcast tables: a read
// goes to one copy (the default data source's when it has one), a write to
// every copy.
func (h *hook) bindBroadcast(p *ir.Plan, args []driver.NamedValue) (*routed, error) {
	ts, err := h.Router.Targets(p.Tables[0].Logic)
	if err != nil {
		return nil, err
	}
	if p.Kind == ir.KindSelect {
		pick := ts[0]
		for _, t := range ts {
			if t.DataSource == h.DefaultDS {
				pick = t
			}
		}
		ts = []shardconf.Target{pick}
	}
	phys := make([]string, len(p.Tables))
	for i, t := range p.Tables {
		phys[i] = t.Logic
	}
	out := h.newRouted(len(ts))
	out.copies = p.Kind != ir.KindSelect
	for _, t := range ts {
		r := p.RenderFor(h.Dialect, ir.RenderSpec{Phys: phys})
		out.units = append(out.units, unit{ds: t.DataSource, sql: r.SQL, args: h.args(r, args, nil, nil)})
		out.notePhysical(phys)
	}
	return out, nil
}

// mergeOf binds the merge of a SELECT over several targets and gives the
// LIMIT each target gets: limit + offset where the merge streams, else the
// dialect's "no limit" (grouping and DISTINCT need every row).
func (h *hook) mergeOf(sel *ir.SelectPlan, args []driver.NamedValue) (mergeSpec, any, error) {
	m := mergeSpec{merge: sel.Merge, dialect: ir.MergeDialect(h.Dialect), limit: -1, args: args}
	var err error
	if sel.Offset != nil {
		if m.offset, err = h.limitValue(value(*sel.Offset, args), 0); err != nil {
			return m, 0, fmt.Errorf("sqlhook: OFFSET: %w", err)
		}
	}
	if sel.Limit != nil {
		// LIMIT NULL: none on PostgreSQL, 0 on MySQL.
		none := int64(-1)
		if h.Dialect == MySQL {
			none = 0
		}
		if m.limit, err = h.limitValue(value(*sel.Limit, args), none); err != nil {
			return m, 0, fmt.Errorf("sqlhook: LIMIT: %w", err)
		}
	}
	if h.Dialect == SQLite {
		// SQLite reads any negative LIMIT as none and a negative OFFSET as 0.
		m.limit, m.offset = max(m.limit, -1), max(m.offset, 0)
	}
	if m.offset < 0 || m.limit < -1 {
		return m, 0, fmt.Errorf("sqlhook: negative LIMIT or OFFSET")
	}
	if m.limit >= 0 && (sel.Merge == nil || sel.Merge.Streaming()) && m.limit <= math.MaxInt64-m.offset {
		return m, m.limit + m.offset, nil
	}
	switch h.Dialect {
	case PostgreSQL:
		return m, nil, nil // LIMIT NULL: no limit
	case SQLite:
		return m, int64(-1), nil // a negative LIMIT: no limit
	}
	return m, uint64(math.MaxUint64), nil // MySQL's documented "all rows"
}

// limitValue reads a LIMIT or OFFSET value as the dialect does: NULL is
// null (SQLite fails it), an integral float its integer, on MySQL an
// unsigned beyond int64 (its "all rows") the largest int64.
func (h *hook) limitValue(v any, null int64) (int64, error) {
	switch x := v.(type) {
	case nil:
		if h.Dialect == SQLite {
			return 0, errors.New("NULL (SQLite fails it: datatype mismatch)")
		}
		return null, nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) >= 1<<63 {
			return 0, fmt.Errorf("not an integer: %v", x)
		}
		return int64(x), nil
	case float32:
		return h.limitValue(float64(x), null)
	}
	if rv := reflect.ValueOf(v); h.Dialect == MySQL && rv.CanUint() && rv.Uint() > math.MaxInt64 {
		return math.MaxInt64, nil
	}
	return toInt64(v)
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case nil:
		return -1, nil // LIMIT NULL / LIMIT ALL
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	case []byte:
		return strconv.ParseInt(strings.TrimSpace(string(x)), 10, 64)
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return rv.Int(), nil
	case rv.CanUint():
		return int64(rv.Uint()), nil
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}

// args lays out a unit's arguments as its rendering says.
func (h *hook) args(r *ir.Rendered, args []driver.NamedValue, keys []any, limit any) []driver.NamedValue {
	if r.Identity && len(args) == len(r.Src) {
		return args
	}
	out := make([]driver.NamedValue, len(r.Src))
	for i, s := range r.Src {
		out[i].Ordinal = i + 1
		switch s.Kind {
		case ir.SrcArg:
			out[i].Value = args[s.I].Value
		case ir.SrcKey:
			out[i].Value = keys[s.I]
		case ir.SrcLimit:
			out[i].Value = limit
		}
	}
	return out
}

func (h *hook) bindInsert(ctx context.Context, p *ir.Plan, args []driver.NamedValue) (*routed, error) {
	ins := p.Ins
	table := p.Tables[ins.Table]
	nrows := len(ins.Rows)
	addKey := ins.KeyCol != "" && ins.KeyIdx < 0

	// Which rows need a generated key.
	var need []int
	var keyParams map[int]int // caller argument index -> row whose key it is
	if ins.KeyCol != "" {
		for r := range nrows {
			switch {
			case addKey, ins.KeyNull[r]:
				need = append(need, r)
			default:
				if v := ins.Rows[r][ins.KeyIdx]; v.Param >= 0 && isNull(args[v.Param].Value) {
					need = append(need, r)
					if keyParams == nil {
						keyParams = map[int]int{}
					}
					if _, dup := keyParams[v.Param]; dup {
						return nil, fmt.Errorf("%w: placeholder %d is the NULL key of several rows; each row needs its own key", ErrUnsupported, v.Param+1)
					}
					keyParams[v.Param] = r
				}
			}
		}
	}
	var keys []any
	if len(need) > 0 {
		var err error
		if keys, err = h.generate(ctx, table.Logic, need, nrows); err != nil {
			return nil, err
		}
	}
	rowValue := func(r, col int) (any, error) {
		if col == ins.KeyIdx && keys != nil && keys[r] != nil {
			return keys[r], nil
		}
		v := ins.Rows[r][col]
		if v.Expr {
			return nil, fmt.Errorf("%w: the value of sharding column %s in row %d is an expression", ErrUnsupported, ins.Cols[col], r+1)
		}
		x := value(v, args)
		if f32, ok := x.(float32); ok {
			x = float64(f32)
		}
		if f, ok := x.(float64); ok && f != math.Trunc(f) {
			return nil, fmt.Errorf("%w: sharding column %s in row %d has the fractional value %v; the stored value depends on the column type", ErrUnsupported, ins.Cols[col], r+1, f)
		}
		if err := h.storable(ins.Cols[col], x); err != nil {
			return nil, fmt.Errorf("%w in row %d", err, r+1)
		}
		return h.routeValue(x), nil
	}

	// Route each row.
	var targets []shardconf.Target
	var groups [][]int
	if table.Broadcast {
		ts, err := h.Router.Targets(table.Logic)
		if err != nil {
			return nil, err
		}
		targets = ts
		for range ts {
			groups = append(groups, nil)
		}
	} else {
		var buf [4]shardconf.Cond
		for r := range nrows {
			conds := buf[:0]
			for k, col := range ins.ShardCol {
				idx := ins.ShardIdx[k]
				var v any
				switch {
				case idx >= 0:
					var err error
					if v, err = rowValue(r, idx); err != nil {
						return nil, err
					}
				case addKey && strings.EqualFold(col, ins.KeyCol):
					v = keys[r]
				default:
					continue // the router reports the missing column
				}
				conds = append(conds, shardconf.Eq(col, v))
			}
			ts, err := h.Router.RouteContext(ctx, table.Logic, conds...)
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", r+1, err)
			}
			if len(ts) != 1 {
				return nil, fmt.Errorf("%w: row %d routes to %d targets", ErrUnsupported, r+1, len(ts))
			}
			g := -1
			for i, t := range targets {
				if t == ts[0] {
					g = i
				}
			}
			if g < 0 {
				targets = append(targets, ts[0])
				groups = append(groups, nil)
				g = len(targets) - 1
			}
			groups[g] = append(groups[g], r)
		}
		for _, t := range targets {
			if p.Pinned != "" && !strings.EqualFold(t.Table, p.Pinned) {
				return nil, fmt.Errorf("%w: a row inserted into physical table %s routes to %s.%s", ErrUnsupported, p.Pinned, t.DataSource, t.Table)
			}
		}
		if len(targets) > 1 && ins.Single != "" {
			return nil, fmt.Errorf("%w: %s, but its rows route to %d targets", ErrUnsupported, ins.Single, len(targets))
		}
	}

	// Substitute generated keys for NULL key arguments.
	callerArgs := args
	if keyParams != nil {
		callerArgs = append([]driver.NamedValue(nil), args...)
		for param, r := range keyParams {
			callerArgs[param].Value = keys[r]
		}
	}
	out := h.newRouted(len(targets))
	out.copies = table.Broadcast
	for g, t := range targets {
		phys := make([]string, len(p.Tables))
		for i, pt := range p.Tables {
			phys[i] = pt.Logic
		}
		phys[ins.Table] = t.Table
		rows := groups[g]
		if len(targets) == 1 || len(rows) == nrows {
			rows = nil
		}
		r := p.RenderFor(h.Dialect, ir.RenderSpec{Phys: phys, Rows: rows, AddKey: addKey})
		out.units = append(out.units, unit{ds: t.DataSource, sql: r.SQL, args: h.args(r, callerArgs, keys, nil)})
		out.notePhysical(phys)
	}
	return out, nil
}

func isNull(v any) bool {
	if v == nil {
		return true
	}
	if dv, ok := v.(driver.Valuer); ok {
		x, err := dv.Value()
		return err == nil && x == nil
	}
	return false
}

// generate issues keys for the rows in need, indexed by row.
func (h *hook) generate(ctx context.Context, table string, need []int, nrows int) ([]any, error) {
	_, gen, ok := h.Router.KeyGenerator(table)
	if !ok {
		return nil, fmt.Errorf("sqlhook: table %s has no key generator", table)
	}
	keys := make([]any, nrows)
	if ig, ok := gen.(keygen.IDGenerator); ok {
		ids := make([]int64, len(need))
		if err := ig.NextIDs(ctx, ids); err != nil {
			return nil, fmt.Errorf("sqlhook: key for %s: %w", table, err)
		}
		for i, r := range need {
			keys[r] = ids[i]
		}
		return keys, nil
	}
	for _, r := range need {
		k, err := gen.NextKey(ctx)
		if err != nil {
			return nil, fmt.Errorf("sqlhook: key for %s: %w", table, err)
		}
		if k == nil || k == any(int64(0)) || k == any(keygen.ID(0)) || k == any("") {
			// A zero key reads as no key to GORM and ent; nil would store NULL.
			return nil, fmt.Errorf("sqlhook: key for %s: %w: the %s generator's NextKey returned %#v", table, keygen.ErrInvalidID, gen.Type(), k)
		}
		keys[r] = k
	}
	return keys, nil
}

// storable refuses a sharding value the database would store as another
// value than the one it is routed by: SQLite keeps an integer beyond the
// int64 range (as a number, or as text in a column of integer affinity)
// as a REAL, which routes elsewhere or nowhere.
func (h *hook) storable(column string, x any) error {
	if h.Dialect != SQLite || !beyondInt64(x) {
		return nil
	}
	return fmt.Errorf("%w: sharding column %s has the value %v, beyond the int64 range; SQLite would store it as a REAL, not the integer it routes by", ErrUnsupported, column, x)
}

// beyondInt64 reports whether x is an integer, or the decimal text of one,
// outside the int64 range.
func beyondInt64(x any) bool {
	switch v := x.(type) {
	case uint64:
		return v > math.MaxInt64
	case uint:
		return uint64(v) > math.MaxInt64
	case []byte:
		return beyondInt64(string(v))
	case string:
		t := strings.TrimSpace(v)
		digits := strings.TrimLeft(t, "+-")
		if len(t)-len(digits) > 1 || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
			return false
		}
		_, err := strconv.ParseInt(t, 10, 64)
		return errors.Is(err, strconv.ErrRange)
	}
	return false
}
