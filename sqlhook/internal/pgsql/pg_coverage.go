package pgsql

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The PostgreSQL and SQLite coverage check (see coverage.go). It looks at
// a statement twice:
//
//   - the parse tree: every name in it equal to a logic table's is placed
//     by its role. A table position the plan rewrites is covered; a
//     column, an alias, a function name, an option name or a plain value
//     is safe; anything else (a table position the plan does not route, a
//     type, a DROP VIEW, COMMENT ON, a CTE name, ...) is refused. String
//     constants are values, except procedural bodies (DO, CREATE
//     FUNCTION) and strings given to a function or cast to a reg* type
//     (query_to_xml('...'), 't_order'::regclass), which the database may
//     read as SQL or as a table name: those are refused when they mention
//     a logic table at all.
//   - the tokens: every identifier token (quoted or not, keywords used as
//     names, U&"..." decoded) equal to a logic table's name is either a
//     table position the plan rewrites or one of the safe names above;
//     more such tokens than safe names means the tree holds one the check
//     cannot place, and the statement is refused.

// coverage runs the check on the whole parse result. multi: the text
// holds several statements, none of which is routed.
func (c *pgCompiler) coverage(tree *pg.ParseResult, multi bool) error {
	if err := c.ambiguousStrings(); err != nil {
		return err
	}
	tokens := map[string]int{} // logic name -> identifier tokens not covered
	for i, tok := range c.toks {
		v, ok := c.identValue(i)
		if !ok || !c.h.IsLogicName(v) {
			continue
		}
		if tok.Token == pg.Token_UIDENT {
			return ir.NotCovered(v, "with Unicode escapes (U&\"...\")")
		}
		if multi {
			return fmt.Errorf("%w: logic table %s is named in a text of several statements; send them one by one", ir.ErrUnsupported, v)
		}
		if !c.covered[i] {
			tokens[strings.ToLower(v)]++
		}
	}
	if !multi {
		if err := c.foreignWriteTarget(tree); err != nil {
			return err
		}
		if err := c.rowLocators(tree); err != nil {
			return err
		}
	}
	w := &pgCoverWalk{c: c, safe: map[string]int{}}
	w.walk(tree.ProtoReflect(), nil)
	if w.err != nil {
		return w.err
	}
	for _, name := range ir.SortedKeys(tokens) {
		if tokens[name] > w.safe[name] {
			return ir.NotCovered(name, "where the parse tree shows neither a routed table nor a column, alias or function")
		}
	}
	return nil
}

// foreignWriteTarget refuses an UPDATE or DELETE of a table that is
// neither a logic table nor a physical one while it reads a logic or
// broadcast table (FROM, USING): the plan routes by the table it reads,
// so the write would reach the written table on that table's data
// sources (on every one for a broadcast table), not only where it lives.
func (c *pgCompiler) foreignWriteTarget(tree *pg.ParseResult) error {
	if len(tree.Stmts) != 1 || len(c.p.Tables) == 0 {
		return nil
	}
	var rel *pg.RangeVar
	if u := tree.Stmts[0].Stmt.GetUpdateStmt(); u != nil {
		rel = u.Relation
	} else if d := tree.Stmts[0].Stmt.GetDeleteStmt(); d != nil {
		rel = d.Relation
	}
	if rel == nil || c.h.IsLogicName(rel.Relname) {
		return nil
	}
	if _, ok := c.h.PhysicalOf(rel.Relname); ok {
		return nil
	}
	return fmt.Errorf("%w: %s is written while logic table %s is read: the write would run on %s's data sources, not where %s lives", ir.ErrUnsupported, rel.Relname, c.p.Tables[0].Logic, c.p.Tables[0].Logic, rel.Relname)
}

// rowLocators keeps an UPDATE or DELETE that names a row's physical
// address (PostgreSQL's ctid or tableoid, SQLite's rowid) off several
// tables: the address picks a different row, or none, in each physical
// table and in each copy of a broadcast table, so the copies would
// diverge. On a broadcast table it is refused; on a sharded one it may
// still reach a single table.
func (c *pgCompiler) rowLocators(tree *pg.ParseResult) error {
	if len(tree.Stmts) != 1 || len(c.p.Tables) == 0 {
		return nil
	}
	if st := tree.Stmts[0].Stmt; st.GetUpdateStmt() == nil && st.GetDeleteStmt() == nil {
		return nil
	}
	locators := map[string]bool{"ctid": true, "tableoid": true, "xmin": true, "xmax": true, "cmin": true, "cmax": true}
	if c.h.Dialect == ir.SQLite {
		locators = map[string]bool{"rowid": true, "_rowid_": true, "oid": true}
	}
	for i := range c.toks {
		v, ok := c.identValue(i)
		if !ok || !locators[strings.ToLower(v)] {
			continue
		}
		for _, t := range c.p.Tables {
			if t.Broadcast {
				return fmt.Errorf("%w: %s names a row's physical address, which differs between the copies of broadcast table %s", ir.ErrUnsupported, v, t.Logic)
			}
		}
		if c.p.WriteMulti == "" {
			c.p.WriteMulti = "a write naming a row's physical address (" + v + ")"
		}
	}
	return nil
}

// ambiguousStrings refuses a backslash in a standard '...' string of a
// PostgreSQL statement that names a logic table: the server reads it by
// its standard_conforming_strings setting, which sqlhook cannot see, and
// with it off a quote after the backslash no longer ends the string, so
// the server would see different code than was checked. E'...' strings
// and bind arguments read the same either way.
func (c *pgCompiler) ambiguousStrings() error {
	if c.h.Dialect != ir.PostgreSQL || !c.h.MentionsLogic(c.text) && !strings.Contains(strings.ToLower(c.text), "u&") {
		return nil // no name the server could read differently
	}
	for i, tok := range c.toks {
		if tok.Token == pg.Token_SCONST && strings.HasPrefix(c.tokText(i), "'") && strings.Contains(c.tokText(i), `\`) {
			return fmt.Errorf("%w: a backslash in a standard string literal (%s) of a statement on a logic table: its meaning depends on standard_conforming_strings; use E'...' or a bind argument", ir.ErrUnsupported, c.tokText(i))
		}
	}
	return nil
}

// identValue is the name an identifier token stands for: unquoted and
// case-folded, quoted with its doubled quotes undone, U&"..." decoded.
// ok is false for tokens that are not names (strings, numbers,
// operators, comments, placeholders).
func (c *pgCompiler) identValue(i int) (string, bool) {
	tok := c.toks[i]
	text := c.tokText(i)
	switch {
	case tok.Token == pg.Token_UIDENT:
		return decodeUIdent(text, c.uescape(i))
	case tok.Token == pg.Token_IDENT:
		if strings.HasPrefix(text, `"`) {
			return unquoteIdent(text), true
		}
		return strings.ToLower(text), true
	case tok.KeywordKind != pg.KeywordKind_NO_KEYWORD:
		return strings.ToLower(text), true
	}
	return "", false
}

// uescape is the escape character of the U& token at i: the one named by
// a following UESCAPE 'c', else backslash.
func (c *pgCompiler) uescape(i int) byte {
	j := c.nextToken(i)
	if j < 0 || c.toks[j].Token != pg.Token_UESCAPE {
		return '\\'
	}
	k := c.nextToken(j)
	if k < 0 {
		return '\\'
	}
	if s := c.tokText(k); len(s) == 3 && s[0] == '\'' {
		return s[1]
	}
	return 0
}

// nextToken is the index of the token after i that is not a comment, or
// -1.
func (c *pgCompiler) nextToken(i int) int {
	for j := i + 1; j < len(c.toks); j++ {
		if t := c.toks[j].Token; t != pg.Token_SQL_COMMENT && t != pg.Token_C_COMMENT {
			return j
		}
	}
	return -1
}

// decodeUIdent decodes U&"..." with escape character esc (\XXXX and
// \+XXXXXX code points, a doubled escape for itself).
func decodeUIdent(text string, esc byte) (string, bool) {
	if len(text) < 4 || esc == 0 {
		return "", false
	}
	body := strings.ReplaceAll(text[3:len(text)-1], `""`, `"`)
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != esc {
			b.WriteByte(body[i])
			continue
		}
		rest := body[i+1:]
		n := 4
		switch {
		case strings.HasPrefix(rest, string(esc)):
			b.WriteByte(esc)
			i++
			continue
		case strings.HasPrefix(rest, "+"):
			rest, n = rest[1:], 6
			i++
		}
		if len(rest) < n {
			return "", false
		}
		code, err := strconv.ParseUint(rest[:n], 16, 32)
		if err != nil {
			return "", false
		}
		b.WriteRune(rune(code))
		i += n
	}
	return b.String(), true
}

// pgCoverWalk places every name of the tree by its role.
type pgCoverWalk struct {
	c    *pgCompiler
	safe map[string]int // logic name -> occurrences in safe roles
	err  error
}

type coverFrame struct {
	msg   protoreflect.Message
	field string
}

func (w *pgCoverWalk) walk(m protoreflect.Message, stack []coverFrame) {
	if w.err != nil {
		return
	}
	if s, ok := m.Interface().(*pg.String); ok {
		w.name(s.Sval, stack)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.Kind() == protoreflect.StringKind && !fd.IsList():
			w.field(m, string(fd.Name()), v.String())
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				w.walk(l.Get(i).Message(), append(stack, coverFrame{m, string(fd.Name())}))
			}
		case fd.Message() != nil:
			w.walk(v.Message(), append(stack, coverFrame{m, string(fd.Name())}))
		}
		return w.err == nil
	})
}

// owner is the nearest enclosing node that is not a Node or List wrapper,
// with the field that leads to the value.
func owner(stack []coverFrame) (protoreflect.Message, string, int) {
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].msg.Interface().(type) {
		case *pg.Node, *pg.List:
			continue
		}
		return stack[i].msg, stack[i].field, i
	}
	return nil, "", -1
}

// safeStringLists are the String lists that hold column, alias, function,
// operator or collation names, never a relation (owner type, field).
var safeStringLists = map[string]bool{
	"ColumnRef.fields": true, "FuncCall.funcname": true, "A_Indirection.indirection": true,
	"Alias.colnames": true, "A_Expr.name": true, "Constraint.keys": true, "Constraint.fk_attrs": true,
	"Constraint.pk_attrs": true, "Constraint.including": true, "Constraint.exclusions": true,
	"IndexElem.opclass": true, "IndexElem.collation": true, "CopyStmt.attlist": true,
	"VacuumRelation.va_cols": true, "AccessPriv.cols": true, "CreateFunctionStmt.funcname": true,
	"ObjectWithArgs.objname": true, "CreateTrigStmt.funcname": true, "CreateTrigStmt.columns": true,
	"SortBy.use_op": true, "RowExpr.colnames": true, "CollateClause.collname": true,
}

// safeFields are the string fields that hold names of columns, aliases,
// options, savepoints, cursors and the like, never a relation.
var safeFields = map[string]bool{
	"Alias.aliasname": true, "ResTarget.name": true, "ColumnDef.colname": true, "IndexElem.name": true,
	"IndexElem.indexcolname": true, "DefElem.defname": true, "DefElem.defnamespace": true,
	"WindowDef.name": true, "WindowDef.refname": true, "Constraint.conname": true,
	"VariableSetStmt.name": true, "VariableShowStmt.name": true, "CommentStmt.comment": true,
	"CopyStmt.filename": true, "NotifyStmt.conditionname": true, "NotifyStmt.payload": true,
	"ListenStmt.conditionname": true, "UnlistenStmt.conditionname": true,
	"TransactionStmt.savepoint_name": true, "TransactionStmt.gid": true, "PrepareStmt.name": true,
	"ExecuteStmt.name": true, "DeallocateStmt.name": true, "DeclareCursorStmt.portalname": true,
	"FetchStmt.portalname": true, "ClosePortalStmt.portalname": true, "RoleSpec.rolename": true,
	"FunctionParameter.name": true, "XmlExpr.name": true, "RangeTableFuncCol.colname": true,
	"CreateTrigStmt.trigname": true,
}

func msgName(m protoreflect.Message) string { return string(m.Descriptor().Name()) }

// field places a string field of message m.
func (w *pgCoverWalk) field(m protoreflect.Message, field, v string) {
	if cp, ok := m.Interface().(*pg.CopyStmt); ok && cp.IsProgram && field == "filename" {
		if n := w.c.h.MentionedName(v); n != "" {
			w.err = ir.NotCovered(n, "in the command of COPY ... PROGRAM")
		}
		return
	}
	if !w.c.h.IsLogicName(v) {
		return
	}
	key := msgName(m) + "." + field
	if r, ok := m.Interface().(*pg.RenameStmt); ok && r.RenameType == pg.ObjectType_OBJECT_COLUMN && (field == "subname" || field == "newname") {
		key = "ColumnDef.colname" // RENAME COLUMN: column names
	}
	switch {
	case key == "RangeVar.relname":
		rv := m.Interface().(*pg.RangeVar)
		switch {
		case !w.c.used[rv.Location]:
			w.err = ir.NotCovered(v, "in a table position the plan does not route (a subquery, CTE, UNION arm, or a statement sqlhook does not route)")
		case w.c.aliasRefs[rv.Location]:
			w.safe[strings.ToLower(v)]++
		}
	case safeFields[key]:
		w.safe[strings.ToLower(v)]++
	default:
		w.err = ir.NotCovered(v, "as "+strings.ToLower(key))
	}
}

// name places a String node (a name in a list, or a string constant).
func (w *pgCoverWalk) name(v string, stack []coverFrame) {
	own, field, at := owner(stack)
	if own == nil {
		return
	}
	switch msgName(own) {
	case "A_Const":
		w.constant(v, stack[:at])
		return
	case "DefElem":
		// An option's value; for DO and CREATE FUNCTION the body, which
		// the server runs as code later.
		if n := w.c.h.MentionedName(v); n != "" {
			w.err = ir.NotCovered(n, "inside a procedural body or an option value ("+bodyOwner(w.c.h, stack)+")")
		}
		return
	}
	if !w.c.h.IsLogicName(v) {
		return
	}
	key := msgName(own) + "." + field
	switch {
	case key == "DropStmt.objects" && w.c.dropPlaced:
	case key == "TypeName.names":
		w.err = ir.NotCovered(v, "as a type (the row type of the default data source's table)")
	case safeStringLists[key]:
		w.safe[strings.ToLower(v)]++
	default:
		w.err = ir.NotCovered(v, "as "+strings.ToLower(key))
	}
}

// bodyOwner names the statement a DefElem belongs to, for the error.
func bodyOwner(h *ir.Schema, stack []coverFrame) string {
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].msg.Interface().(type) {
		case *pg.DoStmt:
			return "DO"
		case *pg.CreateFunctionStmt:
			return "CREATE FUNCTION/PROCEDURE"
		}
	}
	return "an option"
}

// constant places a string constant: a value, unless it is given to a
// function or cast to a reg* type, where the server may read it as a
// table name or as SQL.
func (w *pgCoverWalk) constant(v string, above []coverFrame) {
	for i := len(above) - 1; i >= 0; i-- {
		switch x := above[i].msg.Interface().(type) {
		case *pg.FuncCall:
			if n := w.c.h.MentionedName(v); n != "" {
				w.err = ir.NotCovered(n, "in a string given to a function (which may read it as a table name or as SQL)")
				return
			}
		case *pg.TypeCast:
			if names := x.GetTypeName().GetNames(); len(names) > 0 &&
				strings.HasPrefix(strings.ToLower(names[len(names)-1].GetString_().GetSval()), "reg") {
				if n := w.c.h.MentionedName(v); n != "" {
					w.err = ir.NotCovered(n, "in a string cast to an object identifier type (reg*)")
					return
				}
			}
		}
	}
	if w.c.h.IsLogicName(v) {
		w.safe[strings.ToLower(v)]++ // SET search_path TO t_order: a value from an identifier token
	}
}
