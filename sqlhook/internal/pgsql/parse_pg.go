package pgsql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The PostgreSQL grammar (libpg_query, the server's own parser) also
// reads SQLite statements, after ir.SQLiteToPG maps SQLite's `quoted`
// identifiers and ? placeholders to PostgreSQL's spelling: the two
// dialects share their statement shapes (RETURNING, ON CONFLICT,
// "identifiers"), which MySQL's grammar does not read.

// pgCompiler compiles one statement parsed by libpg_query.
type pgCompiler struct {
	h       *ir.Schema
	text    string
	toks    []*pg.ScanToken
	p       *ir.Plan
	edits   []ir.Edit
	used    map[int32]bool // locations of RangeVars placed in table position
	covered map[int]bool   // tokens the template rewrites as a table name
	// aliasRefs: RangeVars left as written: a routed table's alias (FOR
	// UPDATE OF), a broadcast table a logic table's DDL references.
	aliasRefs map[int32]bool
	// dropPlaced: DROP TABLE names are rewritten (they carry no
	// locations, so the coverage check counts their tokens instead).
	dropPlaced bool
	aliases    map[string]int  // qualifier (lower case) -> table index
	repeats    string          // a logic table named twice
	shape      *ir.SelectShape // a top-level SELECT's shape
	err        error
}

func Compile(h *ir.Schema, query string) (*ir.Plan, error) {
	text := query
	var names []string
	if h.Dialect == ir.SQLite {
		var err error
		if text, names, err = ir.SQLiteRespell(query); err != nil {
			return nil, fmt.Errorf("%w: %v", ir.ErrParse, err)
		}
	}
	tree, err := Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ir.ErrParse, err)
	}
	scan, err := pgScan(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ir.ErrParse, err)
	}
	c := &pgCompiler{h: h, text: text, toks: scan.Tokens, p: &ir.Plan{Routed: -1},
		used: map[int32]bool{}, covered: map[int]bool{}, aliasRefs: map[int32]bool{}, aliases: map[string]int{}}
	if len(tree.Stmts) != 1 {
		if err := c.coverage(tree, true); err != nil {
			return nil, err
		}
		return ir.PassthroughPlan, nil
	}
	c.stmt(tree.Stmts[0].Stmt)
	if c.err != nil {
		return nil, c.err
	}
	if err := c.unplaced(tree); err != nil {
		return nil, err
	}
	if err := c.coverage(tree, false); err != nil {
		return nil, err
	}
	if len(c.p.Tables) == 0 {
		return ir.PassthroughPlan, nil
	}
	if c.repeats != "" {
		return nil, fmt.Errorf("%w: logic table %s is named twice (self-joins of sharded tables are not routed)", ir.ErrUnsupported, c.repeats)
	}
	if err := ir.FinishTables(c.h, c.p); err != nil {
		return nil, err
	}
	c.params()
	if c.err != nil {
		return nil, c.err
	}
	c.finishSelect()
	c.p.Names = names
	c.p.Tmpl = ir.BuildTemplate(c.text, c.edits)
	return c.p, nil
}

func (c *pgCompiler) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ir.ErrUnsupported}, args...)...)
	}
}

// walkRangeVars calls f for every table reference anywhere in the tree.
func walkRangeVars(m protoreflect.Message, f func(*pg.RangeVar)) {
	walkMessages(m, func(msg protoreflect.Message) {
		if rv, ok := msg.Interface().(*pg.RangeVar); ok {
			f(rv)
		}
	})
}

// unplaced fails closed on a logic table the compiler did not place: one
// inside a subquery, a CTE, a UNION arm or a statement kind it does not
// route. Rewriting only some references would read or write the wrong
// table.
func (c *pgCompiler) unplaced(tree *pg.ParseResult) error {
	// The first in the text is named: protobuf-go ranges over fields in an
	// order that differs between binaries, and the error should not.
	var bad string
	var badAt int32
	walkRangeVars(tree.ProtoReflect(), func(rv *pg.RangeVar) {
		if c.used[rv.Location] || bad != "" && rv.Location >= badAt {
			return
		}
		if s, b := c.h.Classify(rv.Relname); s || b {
			bad, badAt = rv.Relname, rv.Location
		}
	})
	if bad != "" {
		return fmt.Errorf("%w: logic table %s is referenced where it cannot be routed (subquery, CTE, UNION or an unsupported statement)", ir.ErrUnsupported, bad)
	}
	return nil
}

// tokenAt is the index of the token starting at byte offset loc.
func (c *pgCompiler) tokenAt(loc int32) int {
	i, ok := slices.BinarySearchFunc(c.toks, loc, func(t *pg.ScanToken, l int32) int { return int(t.Start - l) })
	if !ok {
		return -1
	}
	return i
}

func (c *pgCompiler) tokText(i int) string { return c.text[c.toks[i].Start:c.toks[i].End] }

// rangeVar places a table reference; it returns the plan table index, or
// -1 for a table that is not a logic table.
func (c *pgCompiler) rangeVar(rv *pg.RangeVar, withAlias bool) int {
	return c.placeTable(rv, withAlias, rv.Relname)
}

// placeTable places rv as logic table logic (its own name, or for a
// physical table named directly the logic table it belongs to).
func (c *pgCompiler) placeTable(rv *pg.RangeVar, withAlias bool, logic string) int {
	sharded, broadcast := c.h.Classify(logic)
	if !sharded && !broadcast {
		if rv.Alias != nil {
			c.aliases[strings.ToLower(rv.Alias.Aliasname)] = -1
		}
		return -1
	}
	before := len(c.p.Tables)
	i := c.p.AddTable(logic, sharded, broadcast)
	if len(c.p.Tables) == before && !c.used[rv.Location] {
		c.repeats = rv.Relname
	}
	c.used[rv.Location] = true
	ti := c.relnameToken(rv)
	if ti < 0 {
		return i
	}
	c.covered[ti] = true
	tok := c.toks[ti]
	seg := ir.Segment{Hole: ir.HoleTable, I: i}
	if withAlias && rv.Alias == nil && !c.afterTableKeyword(rv) {
		seg.Hole, seg.Text = ir.HoleTableAs, c.tokText(ti)
	}
	end := tok.End
	if ti+1 < len(c.toks) && c.toks[ti+1].Token == pg.Token_ASCII_42 {
		end = c.toks[ti+1].End // "t*" (with descendants) is the default; the alias must follow the name
	}
	if seg.Hole == ir.HoleTableAs && int(end) < len(c.text) && !ir.IsSpace(c.text[end]) {
		seg.Text += " "
	}
	c.edits = append(c.edits, ir.Edit{Start: int(tok.Start), End: int(end), Seg: seg})
	if rv.Alias != nil {
		c.aliases[strings.ToLower(rv.Alias.Aliasname)] = i
	} else {
		c.aliases[strings.ToLower(rv.Relname)] = i
	}
	return i
}

// relnameToken is the index of the token that spells rv's table name,
// after any schema qualifier (kept as written: the physical table is
// looked up in the same schema). A database-qualified name is refused: it
// names one data source's database, and the others have their own.
func (c *pgCompiler) relnameToken(rv *pg.RangeVar) int {
	if rv.Catalogname != "" {
		c.fail("logic table %s qualified by database %s: each data source has its own database; qualify by schema at most", rv.Relname, rv.Catalogname)
		return -1
	}
	ti := c.tokenAt(rv.Location)
	if ti >= 0 && rv.Schemaname != "" {
		if ti = c.nextToken(ti); ti >= 0 && c.toks[ti].Token == pg.Token_ASCII_46 {
			ti = c.nextToken(ti)
		} else {
			ti = -1
		}
	}
	if ti < 0 {
		c.fail("cannot find table %s in the statement text", rv.Relname)
		return -1
	}
	if c.toks[ti].Token == pg.Token_UIDENT {
		c.fail("logic table %s spelled with Unicode escapes (U&\"...\"): spell its name plainly", rv.Relname)
		return -1
	}
	if v, ok := c.identValue(ti); !ok || v != rv.Relname && !strings.EqualFold(v, rv.Relname) {
		c.fail("cannot find table %s in the statement text", rv.Relname)
		return -1
	}
	return ti
}

// afterTableKeyword reports whether rv is written as TABLE name (short
// for SELECT * FROM name), which takes no alias; qualified columns cannot
// follow it either.
func (c *pgCompiler) afterTableKeyword(rv *pg.RangeVar) bool {
	ti := c.tokenAt(rv.Location)
	for j := ti - 1; j >= 0; j-- {
		switch c.toks[j].Token {
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT:
			continue
		case pg.Token_TABLE:
			return true
		}
		return false
	}
	return false
}

func (c *pgCompiler) stmt(n *pg.Node) {
	switch x := n.Node.(type) {
	case *pg.Node_SelectStmt:
		c.selectStmt(x.SelectStmt)
	case *pg.Node_InsertStmt:
		c.insertStmt(x.InsertStmt)
	case *pg.Node_UpdateStmt:
		c.updateStmt(x.UpdateStmt)
	case *pg.Node_DeleteStmt:
		c.deleteStmt(x.DeleteStmt)
	case *pg.Node_CreateStmt:
		c.p.Kind = ir.KindDDL
		if c.rangeVar(x.CreateStmt.Relation, false) >= 0 {
			c.namedIndexConstraints(x.CreateStmt)
			c.broadcastReferences(x.CreateStmt)
		}
	case *pg.Node_AlterTableStmt:
		c.p.Kind = ir.KindDDL
		if t := c.rangeVar(x.AlterTableStmt.Relation, false); t >= 0 {
			c.namedIndexConstraints(x.AlterTableStmt)
			c.broadcastReferences(x.AlterTableStmt)
			c.dropShardingColumn(t, x.AlterTableStmt)
		}
	case *pg.Node_IndexStmt:
		c.indexStmt(x.IndexStmt)
	case *pg.Node_TruncateStmt:
		c.p.Kind = ir.KindDDL
		if len(x.TruncateStmt.Relations) > 1 {
			return // the unplaced check refuses a logic table among several
		}
		for _, r := range x.TruncateStmt.Relations {
			c.rangeVar(r.GetRangeVar(), false)
		}
	case *pg.Node_DropStmt:
		c.dropStmt(x.DropStmt)
	case *pg.Node_RenameStmt:
		c.renameColumn(x.RenameStmt)
	case *pg.Node_ExplainStmt:
		// EXPLAIN shows the plan of one target; the unplaced check refuses
		// logic tables in it.
	}
	if c.p.Kind == ir.KindDDL && len(c.p.Tables) > 1 {
		c.fail("DDL on several logic tables in one statement")
	}
}

func (c *pgCompiler) fromItem(n *pg.Node) {
	switch x := n.Node.(type) {
	case *pg.Node_RangeVar:
		c.rangeVar(x.RangeVar, true)
	case *pg.Node_JoinExpr:
		j := x.JoinExpr
		before := c.shardedCount()
		c.fromItem(j.Larg)
		mid := c.shardedCount()
		c.fromItem(j.Rarg)
		after := c.shardedCount()
		left, right := mid > before, after > mid
		switch j.Jointype {
		case pg.JoinType_JOIN_LEFT:
			c.outerJoin(!left && right)
		case pg.JoinType_JOIN_RIGHT:
			c.outerJoin(left && !right)
		case pg.JoinType_JOIN_FULL:
			c.outerJoin(left != right)
		}
	}
}

func (c *pgCompiler) shardedCount() int { return ir.ShardedCount(c.p) }

func (c *pgCompiler) outerJoin(keepsUnsharded bool) {
	if keepsUnsharded && c.p.Sel != nil {
		// Every target would return the unmatched rows of the kept side.
		ir.SetOnce(&c.p.Sel.Multi, "an outer join keeping the rows of a table that is not sharded")
	}
}

func (c *pgCompiler) selectStmt(s *pg.SelectStmt) {
	c.p.Kind = ir.KindSelect
	c.p.Sel = &ir.SelectPlan{}
	if s.Op != pg.SetOperation_SETOP_NONE || s.WithClause != nil || s.IntoClause != nil {
		// The unplaced check refuses logic tables inside. SELECT INTO
		// would create a table holding one target's rows on each.
		return
	}
	for _, f := range s.FromClause {
		c.fromItem(f)
	}
	c.lockedRels(s)
	c.where(s.WhereClause)
	c.selectShape(s)
}

// lockedRels accepts FOR UPDATE OF t_order where t_order is the name a
// routed table keeps as its alias: it names that FROM item, not a table.
func (c *pgCompiler) lockedRels(s *pg.SelectStmt) {
	for _, n := range s.LockingClause {
		for _, r := range n.GetLockingClause().GetLockedRels() {
			rv := r.GetRangeVar()
			if rv == nil || rv.Schemaname != "" || rv.Catalogname != "" {
				continue
			}
			if t, ok := c.aliases[strings.ToLower(rv.Relname)]; ok && t >= 0 {
				c.used[rv.Location] = true
				c.aliasRefs[rv.Location] = true
			}
		}
	}
}

func (c *pgCompiler) updateStmt(s *pg.UpdateStmt) {
	c.p.Kind = ir.KindUpdate
	if s.WithClause != nil {
		return // a CTE may shadow a logic table's name: the unplaced check refuses
	}
	if logic, ok := c.h.PhysicalOf(s.Relation.Relname); ok {
		for _, n := range s.TargetList {
			if rt := n.GetResTarget(); rt != nil && c.h.IsShardingColumn(strings.ToLower(logic), rt.Name) && c.err == nil {
				c.err = ir.KeyChangeError(logic, strings.ToLower(rt.Name), "", "an UPDATE of physical table "+s.Relation.Relname+" is not routed, so the new value cannot be checked")
			}
		}
	}
	t := c.rangeVar(s.Relation, true)
	for _, f := range s.FromClause {
		c.fromItem(f)
	}
	if t >= 0 {
		for _, n := range s.TargetList {
			if rt := n.GetResTarget(); rt != nil && c.h.IsShardingColumn(c.p.Tables[t].Key, rt.Name) {
				c.updateKey(t, rt)
			}
		}
		if c.p.Tables[t].Broadcast && len(c.p.Tables) > 1 {
			c.fail("UPDATE of broadcast table %s joined with a sharded table", c.p.Tables[t].Logic)
		}
	}
	c.where(s.WhereClause)
}

// updateKey records an UPDATE's assignment to a sharding column of table
// t, for bind to check that the row stays where it is. An assignment of
// the column to itself changes nothing; one the router cannot evaluate
// is refused.
func (c *pgCompiler) updateKey(t int, rt *pg.ResTarget) {
	table := c.p.Tables[t]
	val := assignedValue(rt)
	if c.sameColumn(val, t, rt.Name) {
		return
	}
	v := c.value(val)
	if v.Expr {
		if c.err == nil {
			c.err = ir.KeyChangeError(table.Logic, strings.ToLower(rt.Name), "", "the new value is an expression sqlhook cannot route")
		}
		return
	}
	c.p.KeySets = append(c.p.KeySets, ir.KeySet{Table: t, Column: strings.ToLower(rt.Name), Val: v})
}

// assignedValue is the expression assigned by a SET item: its value, the
// matching element of SET (a, b) = (x, y), or nil when it cannot be told
// (a subquery source, or an assignment to a field or element).
func assignedValue(rt *pg.ResTarget) *pg.Node {
	if len(rt.Indirection) > 0 || rt.Val == nil {
		return nil
	}
	if ma := rt.Val.GetMultiAssignRef(); ma != nil {
		row := ma.Source.GetRowExpr()
		if row == nil || ma.Colno < 1 || int(ma.Colno) > len(row.Args) {
			return nil
		}
		return row.Args[ma.Colno-1]
	}
	return rt.Val
}

// sameColumn reports whether n is a reference to column col of table t
// (unqualified, or qualified by its name or alias).
func (c *pgCompiler) sameColumn(n *pg.Node, t int, col string) bool {
	parts, ok := columnParts(n)
	if !ok || !strings.EqualFold(parts[len(parts)-1], col) {
		return false
	}
	switch len(parts) {
	case 1:
		return true
	case 2:
		ti, ok := c.aliases[strings.ToLower(parts[0])]
		return ok && ti == t
	}
	return false
}

// columnParts is the names of a column reference, ok false for anything
// else (including t.*).
func columnParts(n *pg.Node) ([]string, bool) {
	cr := n.GetColumnRef()
	if cr == nil {
		return nil, false
	}
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return nil, false
		}
		parts = append(parts, s.Sval)
	}
	return parts, len(parts) > 0
}

// onConflictKeys refuses an ON CONFLICT DO UPDATE that could move a row:
// a sharding column may be set to itself, or to excluded's value when the
// row then routes where the INSERT routed (ir.UpsertKeyChange).
func (c *pgCompiler) onConflictKeys(oc *pg.OnConflictClause, t int) {
	table := c.p.Tables[t]
	var fromInserted []string
	for _, n := range oc.TargetList {
		rt := n.GetResTarget()
		if rt == nil || !table.Sharded || !c.h.IsShardingColumn(table.Key, rt.Name) {
			continue
		}
		val := assignedValue(rt)
		if c.sameColumn(val, t, rt.Name) {
			continue
		}
		if parts, ok := columnParts(val); ok && len(parts) == 2 && strings.EqualFold(parts[0], "excluded") && strings.EqualFold(parts[1], rt.Name) {
			fromInserted = append(fromInserted, strings.ToLower(rt.Name))
			continue
		}
		if c.err == nil {
			c.err = ir.KeyChangeError(table.Logic, strings.ToLower(rt.Name), "", "ON CONFLICT DO UPDATE may set it only to excluded."+strings.ToLower(rt.Name))
		}
		return
	}
	var conflictCols []string
	if oc.Infer != nil {
		for _, e := range oc.Infer.IndexElems {
			if ie := e.GetIndexElem(); ie != nil && ie.Name != "" {
				conflictCols = append(conflictCols, ie.Name)
			}
		}
	}
	if err := c.h.UpsertKeyChange(table.Logic, fromInserted, conflictCols); err != nil && c.err == nil {
		c.err = err
	}
}

func (c *pgCompiler) deleteStmt(s *pg.DeleteStmt) {
	c.p.Kind = ir.KindDelete
	if s.WithClause != nil {
		return
	}
	t := c.rangeVar(s.Relation, true)
	for _, f := range s.UsingClause {
		c.fromItem(f)
	}
	if t >= 0 && c.p.Tables[t].Broadcast && len(c.p.Tables) > 1 {
		c.fail("DELETE from broadcast table %s joined with a sharded table", c.p.Tables[t].Logic)
	}
	c.where(s.WhereClause)
}

// namedIndexConstraints refuses a named PRIMARY KEY, UNIQUE or EXCLUDE
// constraint in DDL on a logic table: PostgreSQL names the constraint's
// index after it, schema-wide, so the second physical table would fail
// after the first was changed. Unnamed ones get a name per table.
func (c *pgCompiler) namedIndexConstraints(m interface{ ProtoReflect() protoreflect.Message }) {
	walkMessages(m.ProtoReflect(), func(msg protoreflect.Message) {
		k, ok := msg.Interface().(*pg.Constraint)
		if !ok || k.Conname == "" {
			return
		}
		switch k.Contype {
		case pg.ConstrType_CONSTR_PRIMARY, pg.ConstrType_CONSTR_UNIQUE, pg.ConstrType_CONSTR_EXCLUSION:
			c.fail("named constraint %s on a logic table: PostgreSQL index names are schema-wide; leave it unnamed so each physical table gets its own", k.Conname)
		}
	})
}

// renameColumn routes ALTER TABLE ... RENAME COLUMN on a logic table to
// every physical table, unless the column is a sharding column (the rules
// would then name a column that no longer exists). Any other RENAME of a
// logic table stays refused by the unplaced check.
func (c *pgCompiler) renameColumn(r *pg.RenameStmt) {
	if r.RenameType != pg.ObjectType_OBJECT_COLUMN || r.RelationType != pg.ObjectType_OBJECT_TABLE || r.Relation == nil {
		return
	}
	c.p.Kind = ir.KindDDL
	if t := c.rangeVar(r.Relation, false); t >= 0 && c.h.IsShardingColumn(c.p.Tables[t].Key, r.Subname) {
		c.fail("renaming sharding column %s of %s: the rules shard by that name", r.Subname, c.p.Tables[t].Logic)
	}
}

// dropShardingColumn refuses ALTER TABLE ... DROP COLUMN of a sharding
// column of a logic table: the rules would then shard by a column that no
// longer exists (MySQL's path refuses it alike).
func (c *pgCompiler) dropShardingColumn(t int, a *pg.AlterTableStmt) {
	for _, n := range a.Cmds {
		cmd := n.GetAlterTableCmd()
		if cmd != nil && cmd.Subtype == pg.AlterTableType_AT_DropColumn && c.h.IsShardingColumn(c.p.Tables[t].Key, cmd.Name) {
			c.fail("dropping sharding column %s of %s: the rules shard by it", cmd.Name, c.p.Tables[t].Logic)
		}
	}
}

// broadcastReferences accepts a foreign key REFERENCES to a broadcast
// table in DDL on a logic table: the DDL runs in every data source, each
// of which has its own copy under the same name, so the name stays as
// written. REFERENCES to a sharded table stays refused (the unplaced
// check): which physical table would each one reference?
func (c *pgCompiler) broadcastReferences(m interface{ ProtoReflect() protoreflect.Message }) {
	walkMessages(m.ProtoReflect(), func(msg protoreflect.Message) {
		k, ok := msg.Interface().(*pg.Constraint)
		if !ok || k.Pktable == nil || k.Pktable.Catalogname != "" || !c.h.Router.IsBroadcast(k.Pktable.Relname) {
			return
		}
		c.used[k.Pktable.Location] = true
		c.aliasRefs[k.Pktable.Location] = true
	})
}

// walkMessages calls f for every message in the tree.
func walkMessages(m protoreflect.Message, f func(protoreflect.Message)) {
	f(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkMessages(l.Get(i).Message(), f)
			}
		case fd.Message() != nil:
			walkMessages(v.Message(), f)
		}
		return true
	})
}

func (c *pgCompiler) indexStmt(s *pg.IndexStmt) {
	c.p.Kind = ir.KindDDL
	t := c.rangeVar(s.Relation, false)
	if t < 0 || s.Idxname == "" {
		return
	}
	// Index names are unique per schema in PostgreSQL and per database in
	// SQLite, so each physical table's index gets its table's name.
	rel := c.tokenAt(s.Relation.Location)
	for i := 0; i < rel; i++ {
		if c.toks[i].Token == pg.Token_IDENT && identEqual(c.tokText(i), s.Idxname) {
			c.p.IndexName = s.Idxname
			c.edits = append(c.edits, ir.Edit{Start: int(c.toks[i].Start), End: int(c.toks[i].End), Seg: ir.Segment{Hole: ir.HoleIndexName, I: t}})
			return
		}
	}
	c.fail("cannot find index name %s in the statement text", s.Idxname)
}

func (c *pgCompiler) dropStmt(s *pg.DropStmt) {
	if s.RemoveType != pg.ObjectType_OBJECT_TABLE {
		return
	}
	c.p.Kind = ir.KindDDL
	if len(s.Objects) > 1 {
		for _, o := range s.Objects {
			items := o.GetList().GetItems()
			if len(items) == 0 {
				continue
			}
			name := items[len(items)-1].GetString_().GetSval()
			if sh, b := c.h.Classify(name); sh || b {
				c.fail("DROP TABLE of logic table %s together with other tables", name)
				return
			}
		}
		return
	}
	if items := s.Objects[0].GetList().GetItems(); len(items) > 2 {
		name := items[len(items)-1].GetString_().GetSval()
		if c.h.IsLogicName(name) {
			c.fail("logic table %s qualified by a database: each data source has its own database; qualify by schema at most", name)
		}
		return
	}
	// DROP TABLE names carry no positions: find them among the name
	// tokens, which in DROP TABLE are only table names (and a schema).
	for i, tok := range c.toks {
		name, ok := c.identValue(i)
		if !ok || tok.KeywordKind == pg.KeywordKind_RESERVED_KEYWORD || tok.Token == pg.Token_UIDENT {
			continue
		}
		sharded, broadcast := c.h.Classify(name)
		if !sharded && !broadcast {
			continue
		}
		t := c.p.AddTable(name, sharded, broadcast)
		c.edits = append(c.edits, ir.Edit{Start: int(tok.Start), End: int(tok.End), Seg: ir.Segment{Hole: ir.HoleTable, I: t}})
		c.covered[i] = true
		c.dropPlaced = true
	}
}

// identEqual compares an identifier token with a parsed name.
func identEqual(tok, name string) bool {
	if strings.HasPrefix(tok, `"`) {
		return unquoteIdent(tok) == name
	}
	return strings.EqualFold(tok, name)
}

func unquoteIdent(tok string) string {
	if len(tok) >= 2 && (tok[0] == '"' || tok[0] == '`') {
		q := tok[:1]
		return strings.ReplaceAll(tok[1:len(tok)-1], q+q, q)
	}
	return strings.ToLower(tok)
}

// where records the sharding predicates of a WHERE clause.
func (c *pgCompiler) where(n *pg.Node) {
	if n == nil {
		return
	}
	root := c.cond(n)
	b, ok := ir.Dnf(root)
	c.p.Branches, c.p.Unbounded = b, !ok
}

func (c *pgCompiler) cond(n *pg.Node) *ir.CNode {
	switch x := n.Node.(type) {
	case *pg.Node_BoolExpr:
		var op ir.Cop
		switch x.BoolExpr.Boolop {
		case pg.BoolExprType_AND_EXPR:
			op = ir.CAnd
		case pg.BoolExprType_OR_EXPR:
			op = ir.COr
		default:
			return ir.TrueNode
		}
		out := &ir.CNode{Op: op}
		for _, a := range x.BoolExpr.Args {
			out.Kids = append(out.Kids, c.cond(a))
		}
		return out
	case *pg.Node_AExpr:
		return c.aexpr(x.AExpr)
	}
	return ir.TrueNode
}

func opName(names []*pg.Node) string {
	if len(names) != 1 {
		return ""
	}
	return names[0].GetString_().GetSval()
}

func (c *pgCompiler) aexpr(e *pg.A_Expr) *ir.CNode {
	op := opName(e.Name)
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		t, col, ok := c.column(e.Lexpr)
		v := e.Rexpr
		if !ok {
			if t, col, ok = c.column(e.Rexpr); !ok {
				return ir.TrueNode
			}
			v = e.Lexpr
			op = ir.FlipOp(op)
		}
		po, ok := ir.PredOpOf(op)
		if !ok {
			return ir.TrueNode
		}
		val := c.value(v)
		if val.Expr {
			return ir.TrueNode
		}
		return &ir.CNode{Op: ir.CPred, P: ir.Pred{Table: t, Column: col, Op: po, Vals: []ir.ValRef{val}}}
	case pg.A_Expr_Kind_AEXPR_OP_ANY:
		t, col, ok := c.column(e.Lexpr)
		if !ok || op != "=" {
			return ir.TrueNode
		}
		val := c.value(e.Rexpr)
		if val.Expr || val.Param < 0 {
			return ir.TrueNode
		}
		return &ir.CNode{Op: ir.CPred, P: ir.Pred{Table: t, Column: col, Op: ir.OpAny, Vals: []ir.ValRef{val}}}
	case pg.A_Expr_Kind_AEXPR_IN:
		t, col, ok := c.column(e.Lexpr)
		if !ok || op != "=" {
			return ir.TrueNode
		}
		var vals []ir.ValRef
		for _, item := range e.Rexpr.GetList().GetItems() {
			v := c.value(item)
			if v.Expr {
				return ir.TrueNode
			}
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			return ir.TrueNode
		}
		return &ir.CNode{Op: ir.CPred, P: ir.Pred{Table: t, Column: col, Op: ir.OpIn, Vals: vals}}
	case pg.A_Expr_Kind_AEXPR_BETWEEN:
		t, col, ok := c.column(e.Lexpr)
		items := e.Rexpr.GetList().GetItems()
		if !ok || len(items) != 2 {
			return ir.TrueNode
		}
		lo, hi := c.value(items[0]), c.value(items[1])
		if lo.Expr || hi.Expr {
			return ir.TrueNode
		}
		return &ir.CNode{Op: ir.CPred, P: ir.Pred{Table: t, Column: col, Op: ir.OpBetween, Vals: []ir.ValRef{lo, hi}}}
	}
	return ir.TrueNode
}

// column resolves a column reference to a sharding column of a plan table.
func (c *pgCompiler) column(n *pg.Node) (table int, column string, ok bool) {
	cr := n.GetColumnRef()
	if cr == nil {
		return 0, "", false
	}
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return 0, "", false
		}
		parts = append(parts, s.Sval)
	}
	return ir.ResolveColumn(c.h, c.p, c.aliases, parts)
}

// value reads a literal or placeholder.
func (c *pgCompiler) value(n *pg.Node) ir.ValRef {
	if n == nil {
		return ir.ExprRef
	}
	switch x := n.Node.(type) {
	case *pg.Node_ParamRef:
		return ir.ParamRef(int(x.ParamRef.Number) - 1)
	case *pg.Node_TypeCast:
		// A cast placeholder carries its argument's value; a cast literal
		// may not be the value the database compares ('2.5'::int is 3).
		if p := x.TypeCast.Arg.GetParamRef(); p != nil {
			return ir.ParamRef(int(p.Number) - 1)
		}
		return ir.ExprRef
	case *pg.Node_AConst:
		a := x.AConst
		if a.Isnull {
			return ir.LitRef(nil)
		}
		switch v := a.Val.(type) {
		case *pg.A_Const_Ival:
			return ir.LitRef(int64(v.Ival.Ival))
		case *pg.A_Const_Fval:
			return ir.NumberRef(v.Fval.Fval)
		case *pg.A_Const_Sval:
			return ir.LitRef(v.Sval.Sval)
		}
	}
	return ir.ExprRef
}

// ir.SelectShape reads what merging several targets' rows needs (built in
// finishSelect) and makes holes of the LIMIT and OFFSET values.
func (c *pgCompiler) selectShape(s *pg.SelectStmt) {
	sp := c.p.Sel
	c.shape = c.pgShape(s)
	sp.Limit = c.tail(s.LimitCount, ir.HoleLimit, sp)
	sp.Offset = c.tail(s.LimitOffset, ir.HoleOffset, sp)
}

// pgHasAggregate reports whether an aggregate call occurs anywhere in ns:
// a known aggregate's name, or a call written as an aggregate (*, DISTINCT,
// ORDER BY or FILTER in its arguments, or OVER).
func pgHasAggregate(ns []*pg.Node) bool {
	found := false
	for _, n := range ns {
		if n == nil {
			continue
		}
		walkMessages(n.ProtoReflect(), func(m protoreflect.Message) {
			fc, ok := m.Interface().(*pg.FuncCall)
			if !ok || found {
				return
			}
			fn := strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval())
			found = ir.MergeableAggNames[fn] || isAggregateName(fn) || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil
		})
	}
	return found
}

// isAggregateName: the built-in aggregates of PostgreSQL, MySQL and SQLite
// other than those merged. User-defined aggregates cannot be told from
// functions by name; see the package documentation.
func isAggregateName(fn string) bool {
	switch fn {
	case "avg", "array_agg", "string_agg", "group_concat", "bool_and", "bool_or", "every", "json_agg", "jsonb_agg",
		"json_object_agg", "jsonb_object_agg", "json_objectagg", "json_arrayagg", "xmlagg", "range_agg",
		"range_intersect_agg", "any_value", "total", "mode", "percentile_cont", "percentile_disc",
		"rank", "dense_rank", "percent_rank", "cume_dist", "corr", "covar_pop", "covar_samp",
		"regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy",
		"stddev", "variance", "bit_and", "bit_or", "bit_xor", "std", "stddev_pop", "stddev_samp", "var_pop", "var_samp":
		return true
	}
	return false
}

// tail records a LIMIT or OFFSET value and makes it a template hole.
func (c *pgCompiler) tail(n *pg.Node, hole ir.HoleKind, sp *ir.SelectPlan) *ir.ValRef {
	if n == nil {
		return nil
	}
	v := c.value(n)
	if v.Expr {
		ir.SetOnce(&sp.Multi, "LIMIT/OFFSET expression")
		return nil
	}
	loc := nodeLocation(n)
	ti := c.tokenAt(loc)
	if ti < 0 || loc < 0 {
		if v.Lit == nil && v.Param < 0 {
			return &v // LIMIT ALL / LIMIT NULL: no limit
		}
		ir.SetOnce(&sp.Multi, "LIMIT/OFFSET written in an unexpected form")
		return nil
	}
	tok := c.toks[ti]
	c.edits = append(c.edits, ir.Edit{Start: int(tok.Start), End: int(tok.End), Seg: ir.Segment{Hole: hole, I: v.Param, Text: c.tokText(ti)}})
	return &v
}

func nodeLocation(n *pg.Node) int32 {
	switch x := n.Node.(type) {
	case *pg.Node_ParamRef:
		return x.ParamRef.Location
	case *pg.Node_AConst:
		return x.AConst.Location
	}
	return -1
}

// params makes every placeholder not already inside a hole a hole, and
// counts the arguments the statement needs.
func (c *pgCompiler) params() {
	covered := func(pos int) bool {
		for _, e := range c.edits {
			if pos >= e.Start && pos < e.End {
				return true
			}
		}
		return false
	}
	for i, tok := range c.toks {
		if tok.Token != pg.Token_PARAM {
			continue
		}
		n, err := strconv.Atoi(c.tokText(i)[1:])
		if err != nil || n < 1 {
			c.fail("placeholder %s: placeholders are numbered from $1", c.tokText(i))
			return
		}
		c.p.NParams = max(c.p.NParams, n)
		if !covered(int(tok.Start)) {
			c.edits = append(c.edits, ir.Edit{Start: int(tok.Start), End: int(tok.End), Seg: ir.Segment{Hole: ir.HoleParam, I: n - 1}})
		}
	}
}

// itemSegments is the text of tokens a..b (inclusive) with placeholders
// as holes.
func (c *pgCompiler) itemSegments(a, b int) []ir.Segment {
	var edits []ir.Edit
	for i := a; i <= b; i++ {
		if c.toks[i].Token == pg.Token_PARAM {
			n, _ := strconv.Atoi(c.tokText(i)[1:])
			edits = append(edits, ir.Edit{Start: int(c.toks[i].Start), End: int(c.toks[i].End), Seg: ir.Segment{Hole: ir.HoleParam, I: n - 1}})
		}
	}
	start, end := int(c.toks[a].Start), int(c.toks[b].End)
	for i := range edits {
		edits[i].Start -= start
		edits[i].End -= start
	}
	return ir.BuildTemplate(c.text[start:end], edits)
}

func (c *pgCompiler) insertStmt(s *pg.InsertStmt) {
	c.p.Kind = ir.KindInsert
	if s.WithClause != nil {
		return
	}
	// The logic name as alias keeps qualified references in ON CONFLICT
	// and RETURNING working.
	t := c.rangeVar(s.Relation, s.OnConflictClause != nil || len(s.ReturningList) > 0)
	if logic, ok := c.h.PhysicalOf(s.Relation.Relname); t < 0 && ok {
		// A physical table named directly: its rows are routed as the
		// logic table's and must route to a table of this name.
		t = c.placeTable(s.Relation, s.OnConflictClause != nil || len(s.ReturningList) > 0, logic)
		c.p.Pinned = strings.ToLower(s.Relation.Relname)
	}
	if t < 0 {
		return
	}
	table := c.p.Tables[t]
	ins := &ir.InsertPlan{Table: t, KeyIdx: -1}
	c.p.Ins = ins
	for _, n := range s.Cols {
		ins.Cols = append(ins.Cols, n.GetResTarget().GetName())
	}
	sel := s.SelectStmt.GetSelectStmt()
	switch {
	case sel == nil:
		c.fail("INSERT ... DEFAULT VALUES into logic table %s", table.Logic)
		return
	case len(sel.ValuesLists) == 0:
		c.fail("INSERT ... SELECT into logic table %s", table.Logic)
		return
	case len(ins.Cols) == 0:
		c.fail("INSERT into logic table %s without a column list", table.Logic)
		return
	}
	if oc := s.OnConflictClause; oc != nil {
		c.onConflictKeys(oc, t)
	}
	// Rows, from the tokens after VALUES.
	rel := c.tokenAt(s.Relation.Location)
	values := -1
	for i := rel; i >= 0 && i < len(c.toks); i++ {
		if c.toks[i].Token == pg.Token_VALUES {
			values = i
			break
		}
	}
	if values < 0 {
		c.fail("cannot find VALUES in the statement text")
		return
	}
	// The column list: the first parenthesis after the table name.
	for i := rel + 1; i < values; i++ {
		if c.toks[i].Token == pg.Token_ASCII_40 {
			close := c.matching(i)
			if close < 0 || close > values {
				c.fail("cannot read the column list")
				return
			}
			c.edits = append(c.edits, ir.Edit{Start: int(c.toks[close].Start), End: int(c.toks[close].Start), Seg: ir.Segment{Hole: ir.HoleKeyCol}})
			break
		}
	}
	var rowsStart, rowsEnd int
	depth, itemStart := 0, 0
	var row [][]ir.Segment
	for i := values + 1; i < len(c.toks); i++ {
		tok := c.toks[i]
		switch tok.Token {
		case pg.Token_ASCII_40:
			if depth == 0 {
				if len(ins.Items) == 0 {
					rowsStart = int(tok.Start)
				}
				row, itemStart = nil, i+1
			}
			depth++
			continue
		case pg.Token_ASCII_41:
			depth--
			if depth == 0 {
				if i > itemStart {
					row = append(row, c.itemSegments(itemStart, i-1))
				}
				ins.Items = append(ins.Items, row)
				rowsEnd = int(tok.End)
			}
			continue
		case pg.Token_ASCII_44:
			if depth == 1 {
				row = append(row, c.itemSegments(itemStart, i-1))
				itemStart = i + 1
			}
			if depth <= 1 {
				continue
			}
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT:
			continue
		}
		if depth == 0 {
			break
		}
	}
	if len(ins.Items) != len(sel.ValuesLists) {
		c.fail("cannot read the VALUES rows")
		return
	}
	c.edits = append(c.edits, ir.Edit{Start: rowsStart, End: rowsEnd, Seg: ir.Segment{Hole: ir.HoleValues}})
	ir.FindKeyColumn(c.h, ins, table.Logic)
	for r, vl := range sel.ValuesLists {
		items := vl.GetList().GetItems()
		if len(items) != len(ins.Cols) || len(ins.Items[r]) != len(ins.Cols) {
			c.fail("row %d has %d values for %d columns", r+1, len(items), len(ins.Cols))
			return
		}
		vals := make([]ir.ValRef, len(items))
		null := false
		for j, it := range items {
			if it.GetSetToDefault() != nil {
				vals[j] = ir.ExprRef
				null = null || j == ins.KeyIdx
				continue
			}
			vals[j] = c.value(it)
			if j == ins.KeyIdx && !vals[j].Expr && vals[j].Param < 0 && vals[j].Lit == nil {
				null = true
			}
		}
		ins.Rows = append(ins.Rows, vals)
		ins.KeyNull = append(ins.KeyNull, null)
	}
	ir.FinishInsert(c.h, c.p)
}

// matching is the index of the parenthesis closing the one at i.
func (c *pgCompiler) matching(i int) int {
	depth := 0
	for j := i; j < len(c.toks); j++ {
		switch c.toks[j].Token {
		case pg.Token_ASCII_40:
			depth++
		case pg.Token_ASCII_41:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}
