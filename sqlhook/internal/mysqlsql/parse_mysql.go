package mysqlsql

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// MySQL statements are parsed with TiDB's parser (a goyacc grammar of
// MySQL 8 that reads MariaDB's common syntax too). The tree says what the
// statement does and which names are table references; the template is
// cut from the caller's own text at those names' byte offsets (found by
// mysql_locate.go), so literals, comments, hints and locking clauses reach
// the database exactly as written.

var mysqlParsers = sync.Pool{New: func() any { return parser.New() }}

type myCompiler struct {
	h       *ir.Schema
	p       *ir.Plan
	aliases map[string]int
	placed  map[*ast.TableName]bool
	asLogic map[*ast.TableName]string // a physical table placed as its logic table
	bare    map[string]bool           // logic tables placed without alias, lower case
	shape   *ir.SelectShape           // a top-level SELECT's shape
	repeats string
	err     error
}

func (c *myCompiler) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ir.ErrUnsupported}, args...)...)
	}
}

// Compile compiles a MySQL statement. Refused with ErrUnsupported:
// executable comments, several statements naming a logic table, a logic
// table in a place the compiler does not route (subquery, CTE, UNION, a
// statement kind it does not know), a table name it cannot find in the
// text, a database qualifier other than that of a data source holding the
// table, SQL text for PREPARE or EXECUTE IMMEDIATE that names a logic
// table or cannot be read (ir.MySQLPreparedText), and a write to a physical
// table named directly that could misplace a row (physicalInsert,
// physicalUpdate).
func Compile(h *ir.Schema, query string) (*ir.Plan, error) {
	toks, exec, err := ir.LexMySQL(query)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ir.ErrParse, err)
	}
	if exec != nil {
		// MySQL runs /*!NNNNN ... */ by the server's version, MariaDB also
		// runs /*M!NNNNNN ... */, TiDB's grammar reads every /*! */ and no
		// /*M! */: the statement routed and the one run could differ.
		return nil, fmt.Errorf("%w: executable comment %.40q in a statement on a logic table", ir.ErrUnsupported, exec.Text)
	}
	if err := h.MySQLPreparedText(query, toks); err != nil {
		return nil, err
	}
	ps := mysqlParsers.Get().(*parser.Parser)
	stmts, _, err := ps.ParseSQL(query)
	stmts = slices.Clone(stmts) // the parser reuses its result slice
	mysqlParsers.Put(ps)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ir.ErrParse, err)
	}
	if err := mysqlDynamicSQL(h, query, toks, stmts); err != nil {
		return nil, err
	}
	c := &myCompiler{h: h, p: &ir.Plan{Routed: -1}, aliases: map[string]int{}, placed: map[*ast.TableName]bool{}, asLogic: map[*ast.TableName]string{}, bare: map[string]bool{}}
	if len(stmts) != 1 {
		for _, s := range stmts {
			if c.logicTables(s, CollectSlots(s)) != "" {
				return nil, fmt.Errorf("%w: %d statements in one call; send them one by one", ir.ErrUnsupported, len(stmts))
			}
		}
		return ir.PassthroughPlan, nil
	}
	stmt := stmts[0]
	numberMarkers(stmt)
	c.stmt(stmt)
	if c.err != nil {
		return nil, c.err
	}
	slots := CollectSlots(stmt)
	if bad := c.logicTables(stmt, slots); bad != "" {
		return nil, fmt.Errorf("%w: logic table %s is referenced where it cannot be routed (subquery, CTE, UNION or an unsupported statement)", ir.ErrUnsupported, bad)
	}
	if len(c.p.Tables) == 0 {
		return ir.PassthroughPlan, nil
	}
	if c.repeats != "" {
		return nil, fmt.Errorf("%w: logic table %s is named twice (self-joins of sharded tables are not routed)", ir.ErrUnsupported, c.repeats)
	}
	if err := ir.FinishTables(h, c.p); err != nil {
		return nil, err
	}
	if name := c.shadowed(stmt); name != "" {
		return nil, fmt.Errorf("%w: alias %s shadows logic table %s, whose qualified columns are rewritten", ir.ErrUnsupported, name, name)
	}
	t := &myTemplate{c: c, q: query, toks: toks, slots: slots, stmt: stmt}
	if err := t.build(); err != nil {
		return nil, err
	}
	return c.p, nil
}

// markerVisitor collects the ? placeholders.
type markerVisitor struct {
	ms []*test_driver.ParamMarkerExpr
}

func (v *markerVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
		v.ms = append(v.ms, m)
	}
	return n, false
}

func (v *markerVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// numberMarkers sets each placeholder's Order to its position in the text
// (the parser leaves it to the executor).
func numberMarkers(stmt ast.StmtNode) {
	v := &markerVisitor{}
	stmt.Accept(v)
	slices.SortFunc(v.ms, func(a, b *test_driver.ParamMarkerExpr) int { return a.Offset - b.Offset })
	for i, m := range v.ms {
		m.Order = i
	}
}

// aliasVisitor finds a table alias, at any depth, equal to a logic table
// placed under its own name.
type aliasVisitor struct {
	c   *myCompiler
	bad string
}

func (v *aliasVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if ts, ok := n.(*ast.TableSource); ok && ts.AsName.L != "" && v.bad == "" {
		if v.c.bare[ts.AsName.L] {
			v.bad = ts.AsName.O
		}
	}
	return n, false
}

func (v *aliasVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// shadowed names an alias that would make the qualifier rewrite wrong.
func (c *myCompiler) shadowed(stmt ast.StmtNode) string {
	v := &aliasVisitor{c: c}
	stmt.Accept(v)
	return v.bad
}

// logicTables names a logic table in table position that was not placed,
// or "". The tables are those of the tree's fields (slots) and those its
// visitors reach, so that neither way of walking can hide one.
func (c *myCompiler) logicTables(stmt ast.StmtNode, slots *nameSlots) string {
	v := &tableVisitor{}
	stmt.Accept(v)
	for _, t := range append(slots.Tables, v.tables...) {
		if c.placed[t] {
			continue
		}
		if s, b := c.h.Classify(t.Name.O); s || b {
			return t.Name.O
		}
	}
	return ""
}

// tableVisitor lists the table names a visitor reaches.
type tableVisitor struct{ tables []*ast.TableName }

func (v *tableVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if t, ok := n.(*ast.TableName); ok {
		v.tables = append(v.tables, t)
	}
	return n, false
}

func (v *tableVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// table places a table name; it returns the plan table index or -1.
func (c *myCompiler) table(t *ast.TableName, alias string) int {
	return c.placeTable(t, alias, t.Name.O)
}

// placeTable places t as logic table logic (its own name, or for a
// physical table named directly the logic table it belongs to).
func (c *myCompiler) placeTable(t *ast.TableName, alias, logic string) int {
	sharded, broadcast := c.h.Classify(logic)
	if !sharded && !broadcast {
		if alias != "" {
			c.aliases[strings.ToLower(alias)] = -1
		}
		return -1
	}
	before := len(c.p.Tables)
	i := c.p.AddTable(logic, sharded, broadcast)
	if !strings.EqualFold(logic, t.Name.O) {
		c.asLogic[t] = logic
	}
	if len(c.p.Tables) == before && !c.placed[t] {
		c.repeats = t.Name.O
	}
	c.placed[t] = true
	if alias != "" {
		c.aliases[strings.ToLower(alias)] = i
	} else {
		c.aliases[t.Name.L] = i
		c.bare[t.Name.L] = true
	}
	return i
}

func (c *myCompiler) from(n ast.ResultSetNode) {
	switch x := n.(type) {
	case *ast.Join:
		before := ir.ShardedCount(c.p)
		if x.Left != nil {
			c.from(x.Left)
		}
		mid := ir.ShardedCount(c.p)
		if x.Right != nil {
			c.from(x.Right)
		}
		left, right := mid > before, ir.ShardedCount(c.p) > mid
		if c.p.Sel != nil && (x.Tp == ast.LeftJoin && !left && right || x.Tp == ast.RightJoin && left && !right) {
			// Every target would return the unmatched rows of the kept side.
			ir.SetOnce(&c.p.Sel.Multi, "an outer join keeping the rows of a table that is not sharded")
		}
	case *ast.TableSource:
		if t, ok := x.Source.(*ast.TableName); ok {
			c.table(t, x.AsName.O)
		}
	}
}

func (c *myCompiler) refs(r *ast.TableRefsClause) {
	if r != nil && r.TableRefs != nil {
		c.from(r.TableRefs)
	}
}

func (c *myCompiler) stmt(n ast.StmtNode) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		c.p.Kind = ir.KindSelect
		c.p.Sel = &ir.SelectPlan{}
		if x.With != nil || x.Kind != ast.SelectStmtKindSelect {
			break // the unplaced check refuses logic tables inside
		}
		c.refs(x.From)
		c.lockOf(x.LockInfo)
		c.where(x.Where)
		c.selectShape(x)
		if x.SelectIntoOpt != nil {
			// Each target would write its own rows into the same variables
			// or file: the last one wins.
			ir.SetOnce(&c.p.Sel.Multi, "SELECT ... INTO")
		}
	case *ast.InsertStmt:
		c.insert(x)
	case *ast.UpdateStmt:
		c.p.Kind = ir.KindUpdate
		if x.With != nil {
			break // a CTE may shadow a logic table's name: the unplaced check refuses
		}
		c.physicalUpdate(x)
		c.refs(x.TableRefs)
		for _, a := range x.List {
			c.updateKey(a)
		}
		if x.Limit != nil || x.Order != nil {
			c.p.WriteMulti = "UPDATE with ORDER BY or LIMIT"
		}
		c.where(x.Where)
		c.writeTarget(x.MultipleTable, "UPDATE")
		c.broadcastLimit(x.Limit, "UPDATE")
		c.foreignWrite(x)
	case *ast.DeleteStmt:
		c.p.Kind = ir.KindDelete
		if x.IsMultiTable || x.With != nil {
			break // multi-table DELETE: the unplaced check refuses logic tables
		}
		c.refs(x.TableRefs)
		if x.Limit != nil || x.Order != nil {
			c.p.WriteMulti = "DELETE with ORDER BY or LIMIT"
		}
		c.where(x.Where)
		c.broadcastLimit(x.Limit, "DELETE")
	case *ast.CreateTableStmt:
		c.p.Kind = ir.KindDDL
		c.table(x.Table, "") // a logic table in LIKE is left to the unplaced check
	case *ast.AlterTableStmt:
		c.p.Kind = ir.KindDDL
		for _, spec := range x.Specs {
			if spec.Tp == ast.AlterTableRenameTable {
				c.fail("renaming logic table %s", x.Table.Name.O)
			}
		}
		if t := c.table(x.Table, ""); t >= 0 {
			c.shardingColumnDDL(t, x.Specs)
		}
	case *ast.CreateIndexStmt:
		c.p.Kind = ir.KindDDL
		c.table(x.Table, "")
	case *ast.DropIndexStmt:
		c.p.Kind = ir.KindDDL
		c.table(x.Table, "")
	case *ast.TruncateTableStmt:
		c.p.Kind = ir.KindDDL
		c.table(x.Table, "")
	case *ast.DropTableStmt:
		if !x.IsView && len(x.Tables) == 1 {
			c.p.Kind = ir.KindDDL
			c.table(x.Tables[0], "")
		} // several tables: the unplaced check refuses a logic one among them
	}
	if c.p.Kind == ir.KindDDL && len(c.p.Tables) > 1 {
		c.fail("DDL on several logic tables in one statement")
	}
}

// lockOf places the tables of FOR UPDATE OF / FOR SHARE OF that name a
// placed logic table (one used without alias), so they are renamed with it.
func (c *myCompiler) lockOf(l *ast.SelectLockInfo) {
	if l == nil {
		return
	}
	for _, t := range l.Tables {
		if i, ok := c.aliases[t.Name.L]; ok && i >= 0 && strings.EqualFold(c.p.Tables[i].Logic, t.Name.O) {
			c.placed[t] = true
		}
	}
}

// updateKey records an UPDATE's assignment to a sharding column, for bind
// to check that the row stays where it is. An assignment of the column to
// itself changes nothing; one the router cannot evaluate is refused.
func (c *myCompiler) updateKey(a *ast.Assignment) {
	t, col, ok := c.column(a.Column)
	if !ok || c.sameColumn(a.Expr, t, col) {
		return
	}
	v := myValue(a.Expr)
	if v.Expr {
		if c.err == nil {
			c.err = ir.KeyChangeError(c.p.Tables[t].Logic, col, "", "the new value is an expression sqlhook cannot route")
		}
		return
	}
	c.p.KeySets = append(c.p.KeySets, ir.KeySet{Table: t, Column: col, Val: v})
}

// sameColumn reports whether e is a reference to column col of plan table
// t (unqualified, or qualified by its name or alias).
func (c *myCompiler) sameColumn(e ast.ExprNode, t int, col string) bool {
	cn, ok := e.(*ast.ColumnNameExpr)
	if !ok || !strings.EqualFold(cn.Name.Name.O, col) {
		return false
	}
	if cn.Name.Table.O == "" {
		return true
	}
	i, ok := c.aliases[cn.Name.Table.L]
	return ok && i == t
}

// onDuplicateKeys refuses an ON DUPLICATE KEY UPDATE that could move a
// row: a sharding column may be set to itself, or to VALUES(column) when
// the row then routes where the INSERT routed (ir.UpsertKeyChange). Any
// unique key may be the conflict, so no column is known to be shared.
func (c *myCompiler) onDuplicateKeys(as []*ast.Assignment, t int) {
	table := c.p.Tables[t]
	var fromInserted []string
	for _, a := range as {
		col := strings.ToLower(a.Column.Name.O)
		if !table.Sharded || !c.h.IsShardingColumn(table.Key, col) || c.sameColumn(a.Expr, t, col) {
			continue
		}
		if v, ok := a.Expr.(*ast.ValuesExpr); ok && v.Column != nil && strings.EqualFold(v.Column.Name.Name.O, col) {
			fromInserted = append(fromInserted, col)
			continue
		}
		if c.err == nil {
			c.err = ir.KeyChangeError(table.Logic, col, "", "ON DUPLICATE KEY UPDATE may set it only to VALUES("+col+")")
		}
		return
	}
	if err := c.h.UpsertKeyChange(table.Logic, fromInserted, nil); err != nil && c.err == nil {
		c.err = err
	}
}

// shardingColumnDDL refuses ALTER TABLE that renames or drops a sharding
// column of table t: the rules would shard by a column that no longer
// exists.
func (c *myCompiler) shardingColumnDDL(t int, specs []*ast.AlterTableSpec) {
	table := c.p.Tables[t]
	for _, spec := range specs {
		if spec.OldColumnName == nil || !table.Sharded || !c.h.IsShardingColumn(table.Key, spec.OldColumnName.Name.O) {
			continue
		}
		old := spec.OldColumnName.Name.O
		switch spec.Tp {
		case ast.AlterTableDropColumn:
			c.fail("dropping sharding column %s of %s: the rules shard by it", old, table.Logic)
		case ast.AlterTableRenameColumn:
			if spec.NewColumnName != nil && !strings.EqualFold(spec.NewColumnName.Name.O, old) {
				c.fail("renaming sharding column %s of %s: the rules shard by that name", old, table.Logic)
			}
		case ast.AlterTableChangeColumn:
			if len(spec.NewColumns) != 1 || !strings.EqualFold(spec.NewColumns[0].Name.Name.O, old) {
				c.fail("renaming sharding column %s of %s: the rules shard by that name", old, table.Logic)
			}
		}
	}
}

// writeTarget refuses a multi-table write naming a broadcast table and a
// sharded one: it would run on one data source, and the broadcast
// table's copies would diverge.
func (c *myCompiler) writeTarget(_ bool, what string) {
	var broadcast string
	for _, t := range c.p.Tables {
		if t.Broadcast {
			broadcast = t.Logic
		}
	}
	if broadcast != "" && ir.ShardedCount(c.p) > 0 {
		c.fail("%s joining broadcast table %s with a sharded table", what, broadcast)
	}
}

// broadcastLimit refuses a LIMIT on a write to a broadcast table: each
// copy picks its own rows to change (in its storage order, or among ties
// of the ORDER BY), so the copies would diverge.
func (c *myCompiler) broadcastLimit(l *ast.Limit, what string) {
	if l == nil {
		return
	}
	for _, t := range c.p.Tables {
		if t.Broadcast {
			c.fail("%s with LIMIT on broadcast table %s: each copy may pick different rows", what, t.Logic)
			return
		}
	}
}

// foreignWrite refuses a multi-table UPDATE joining a logic table with a
// table that is neither a logic nor a physical table when an assignment
// may write that table (qualified by it, or unqualified, which MySQL
// resolves among all the joined tables): the plan routes by the logic
// table, so the other table would be written on the logic table's data
// sources (every one for a broadcast table), not only where it lives.
func (c *myCompiler) foreignWrite(x *ast.UpdateStmt) {
	if len(c.p.Tables) == 0 || x.TableRefs == nil {
		return
	}
	v := &tableVisitor{}
	x.TableRefs.Accept(v)
	foreign := ""
	for _, t := range v.tables {
		if _, ok := c.h.PhysicalOf(t.Name.O); !ok && !c.h.IsLogicName(t.Name.O) {
			foreign = t.Name.O
		}
	}
	if foreign == "" {
		return
	}
	for _, a := range x.List {
		q := a.Column.Table.L
		if i, ok := c.aliases[q]; q == "" || !ok || i < 0 {
			c.fail("UPDATE joining logic table %s with %s may write %s on the logic table's data sources", c.p.Tables[0].Logic, foreign, foreign)
			return
		}
	}
}

func (c *myCompiler) where(e ast.ExprNode) {
	if e == nil {
		return
	}
	b, ok := ir.Dnf(c.cond(e))
	c.p.Branches, c.p.Unbounded = b, !ok
}

func (c *myCompiler) cond(e ast.ExprNode) *ir.CNode {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return c.cond(x.Expr)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicAnd:
			return &ir.CNode{Op: ir.CAnd, Kids: []*ir.CNode{c.cond(x.L), c.cond(x.R)}}
		case opcode.LogicOr:
			return &ir.CNode{Op: ir.COr, Kids: []*ir.CNode{c.cond(x.L), c.cond(x.R)}}
		case opcode.EQ, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			op := map[opcode.Op]string{opcode.EQ: "=", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">="}[x.Op]
			t, col, ok := c.columnExpr(x.L)
			v := x.R
			if !ok {
				if t, col, ok = c.columnExpr(x.R); !ok {
					return ir.TrueNode
				}
				v, op = x.L, ir.FlipOp(op)
			}
			po, _ := ir.PredOpOf(op)
			val := myValue(v)
			if val.Expr {
				return ir.TrueNode
			}
			return &ir.CNode{Op: ir.CPred, P: ir.Pred{Table: t, Column: col, Op: po, Vals: []ir.ValRef{val}}}
		}
	case *ast.PatternInExpr:
		t, col, ok := c.columnExpr(x.Expr)
		if !ok || x.Not || x.Sel != nil {
			return ir.TrueNode
		}
		var vals []ir.ValRef
		for _, it := range x.List {
			v := myValue(it)
			if v.Expr {
				return ir.TrueNode
			}
			vals = append(vals, v)
		}
		return &ir.CNode{Op: ir.CPred, P: ir.Pred{Table: t, Column: col, Op: ir.OpIn, Vals: vals}}
	case *ast.BetweenExpr:
		t, col, ok := c.columnExpr(x.Expr)
		if !ok || x.Not {
			return ir.TrueNode
		}
		lo, hi := myValue(x.Left), myValue(x.Right)
		if lo.Expr || hi.Expr {
			return ir.TrueNode
		}
		return &ir.CNode{Op: ir.CPred, P: ir.Pred{Table: t, Column: col, Op: ir.OpBetween, Vals: []ir.ValRef{lo, hi}}}
	}
	return ir.TrueNode
}

func (c *myCompiler) columnExpr(e ast.ExprNode) (int, string, bool) {
	if p, ok := e.(*ast.ParenthesesExpr); ok {
		return c.columnExpr(p.Expr)
	}
	cn, ok := e.(*ast.ColumnNameExpr)
	if !ok {
		return 0, "", false
	}
	return c.column(cn.Name)
}

func (c *myCompiler) column(n *ast.ColumnName) (int, string, bool) {
	parts := []string{n.Name.O}
	if n.Table.O != "" {
		parts = []string{n.Table.O, n.Name.O}
	}
	return ir.ResolveColumn(c.h, c.p, c.aliases, parts)
}

func columnFields(n *ast.ColumnName) []string {
	if n.Table.L != "" {
		return []string{n.Table.L, n.Name.L}
	}
	return []string{n.Name.L}
}

// aggVisitor finds aggregate and window calls.
type aggVisitor struct{ found bool }

func (v *aggVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
		v.found = true
	case *ast.SubqueryExpr:
		return n, true // a subquery's aggregates are its own
	}
	return n, v.found
}

func (v *aggVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func myHasAggregate(es ...ast.ExprNode) bool {
	v := &aggVisitor{}
	for _, e := range es {
		if e != nil {
			e.Accept(v)
		}
	}
	return v.found
}

// myValue reads a literal or placeholder.
func myValue(e ast.ExprNode) ir.ValRef {
	switch x := e.(type) {
	case *test_driver.ParamMarkerExpr:
		return ir.ParamRef(x.Order)
	case *test_driver.ValueExpr:
		switch v := x.GetValue().(type) {
		case nil:
			return ir.LitRef(nil)
		case int64, uint64, string:
			return ir.LitRef(v)
		case []byte:
			return ir.LitRef(string(v))
		case *test_driver.MyDecimal:
			return ir.NumberRef(v.String())
		}
	case *ast.ParenthesesExpr:
		return myValue(x.Expr)
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Minus {
			if w, ok := myValue(x.V).Lit.(int64); ok {
				return ir.LitRef(-w)
			}
		}
	}
	return ir.ExprRef
}

// ir.SelectShape reads what merging several targets' rows needs (built by
// the template, once the text is cut) and the LIMIT values.
func (c *myCompiler) selectShape(s *ast.SelectStmt) {
	sp := c.p.Sel
	c.shape = c.myShape(s)
	if s.Limit != nil {
		if s.Limit.Count != nil {
			v := myValue(s.Limit.Count)
			sp.Limit = &v
		}
		if s.Limit.Offset != nil {
			v := myValue(s.Limit.Offset)
			sp.Offset = &v
		}
		if (sp.Limit != nil && sp.Limit.Expr) || (sp.Offset != nil && sp.Offset.Expr) {
			ir.SetOnce(&sp.Multi, "LIMIT expression")
			sp.Limit, sp.Offset = nil, nil
		}
	}
}

func (c *myCompiler) insert(x *ast.InsertStmt) {
	c.p.Kind = ir.KindInsert
	var t int = -1
	if x.Table != nil && x.Table.TableRefs != nil {
		if ts, ok := x.Table.TableRefs.Left.(*ast.TableSource); ok {
			if tn, ok := ts.Source.(*ast.TableName); ok {
				t = c.table(tn, "")
				if t < 0 {
					t = c.physicalInsert(tn)
				}
			}
		}
	}
	if t < 0 {
		return
	}
	table := c.p.Tables[t]
	ins := &ir.InsertPlan{Table: t, KeyIdx: -1}
	c.p.Ins = ins
	switch {
	case x.Select != nil:
		c.fail("INSERT ... SELECT into logic table %s", table.Logic)
		return
	case len(x.Columns) == 0:
		c.fail("INSERT into logic table %s without a column list", table.Logic)
		return
	}
	for _, col := range x.Columns {
		ins.Cols = append(ins.Cols, col.Name.O)
	}
	c.onDuplicateKeys(x.OnDuplicate, t)
	ir.FindKeyColumn(c.h, ins, table.Logic)
	for r, row := range x.Lists {
		if len(row) != len(ins.Cols) {
			c.fail("row %d has %d values for %d columns", r+1, len(row), len(ins.Cols))
			return
		}
		vals := make([]ir.ValRef, len(row))
		null := false
		for j, e := range row {
			if _, ok := e.(*ast.DefaultExpr); ok {
				vals[j] = ir.ExprRef
				null = null || j == ins.KeyIdx
				continue
			}
			vals[j] = myValue(e)
			if j == ins.KeyIdx && !vals[j].Expr && vals[j].Param < 0 && vals[j].Lit == nil {
				null = true
			}
		}
		ins.Rows = append(ins.Rows, vals)
		ins.KeyNull = append(ins.KeyNull, null)
	}
	ir.FinishInsert(c.h, c.p)
}
