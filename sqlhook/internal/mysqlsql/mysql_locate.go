package mysqlsql

import (
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// TiDB's tree has no byte offsets for names. To learn which token of the
// text is which name of the tree, the compiler parses the text once more
// with every identifier token that spells a logic table's name replaced by
// a sentinel of its own, and looks where each sentinel lands: in a table
// reference, a column's qualifier, or elsewhere (a column, an alias, a
// function name), which the rewrite leaves alone. The grammar itself thus
// decides what each occurrence is. When the parse with every replacement
// differs in shape from the original (a name used as a keyword somewhere),
// each token is tried alone.

// sentinelPrefix marks the replaced names; the random part keeps a
// user's identifier from ever matching it.
var sentinelPrefix = func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "shardkey_" + hex.EncodeToString(b[:]) + "_"
}()

// slotField names one name-holding field of the tree.
type slotField uint8

const (
	fTableSchema slotField = iota + 1
	fTableName
	fColSchema
	fColTable
	fColName
	fStarSchema
	fStarTable
)

type slotRef struct {
	field slotField
	idx   int // into nameSlots.tables, .cols or .stars
}

// nameSlots are the nodes holding table names, in a fixed order of the
// tree's fields, found by reflection so that no node type's Accept can
// hide one.
type nameSlots struct {
	Tables []*ast.TableName
	Cols   []*ast.ColumnName
	Stars  []*ast.WildCardField
	seen   map[uintptr]bool
}

var (
	astPkg    = reflect.TypeOf(ast.TableName{}).PkgPath()
	driverPkg = reflect.TypeOf(test_driver.ValueExpr{}).PkgPath()
)

func CollectSlots(n ast.Node) *nameSlots {
	s := &nameSlots{seen: map[uintptr]bool{}}
	s.walk(reflect.ValueOf(n))
	return s
}

func treeType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && (t.PkgPath() == astPkg || t.PkgPath() == driverPkg)
}

func (s *nameSlots) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			s.walk(v.Elem())
		}
	case reflect.Pointer:
		if v.IsNil() || !treeType(v.Type().Elem()) || s.seen[v.Pointer()] {
			return
		}
		s.seen[v.Pointer()] = true
		switch x := v.Interface().(type) {
		case *ast.TableName:
			s.Tables = append(s.Tables, x)
		case *ast.ColumnName:
			s.Cols = append(s.Cols, x)
		case *ast.WildCardField:
			s.Stars = append(s.Stars, x)
		}
		s.walk(v.Elem())
	case reflect.Slice, reflect.Array:
		switch v.Type().Elem().Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				s.walk(v.Index(i))
			}
		}
	case reflect.Struct:
		if !treeType(v.Type()) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				s.walk(v.Field(i))
			}
		}
	}
}

// each calls f for every name field, in order.
func (s *nameSlots) each(f func(slotRef, string)) {
	for i, t := range s.Tables {
		f(slotRef{fTableSchema, i}, t.Schema.O)
		f(slotRef{fTableName, i}, t.Name.O)
	}
	for i, c := range s.Cols {
		f(slotRef{fColSchema, i}, c.Schema.O)
		f(slotRef{fColTable, i}, c.Table.O)
		f(slotRef{fColName, i}, c.Name.O)
	}
	for i, w := range s.Stars {
		f(slotRef{fStarSchema, i}, w.Schema.O)
		f(slotRef{fStarTable, i}, w.Table.O)
	}
}

func (s *nameSlots) shape() [3]int { return [3]int{len(s.Tables), len(s.Cols), len(s.Stars)} }

// ParseOne parses q, which must hold one statement.
func ParseOne(q string) (ast.StmtNode, error) {
	ps := mysqlParsers.Get().(*parser.Parser)
	stmts, _, err := ps.ParseSQL(q)
	var stmt ast.StmtNode
	if err == nil && len(stmts) == 1 {
		stmt = stmts[0] // the slice is the parser's, reused by its next parse
	}
	mysqlParsers.Put(ps)
	if err != nil {
		return nil, err
	}
	if stmt == nil {
		return nil, errNotOne
	}
	return stmt, nil
}

type notOneError struct{}

func (notOneError) Error() string { return "not one statement" }

var errNotOne = notOneError{}

// locate maps each candidate token (index into toks) that the grammar
// reads as a name field of orig to that field.
func locate(q string, toks []ir.MyTok, cands []int, orig *nameSlots) map[slotRef]int {
	if found, ok := tryLocate(q, toks, cands, orig); ok {
		return found
	}
	found := map[slotRef]int{}
	for _, j := range cands {
		f, ok := tryLocate(q, toks, []int{j}, orig)
		if !ok {
			continue // the token is not a name here (a keyword, ...)
		}
		for r, k := range f {
			found[r] = k
		}
	}
	return found
}

// tryLocate replaces the tokens which and parses; ok is false when the
// result is not the original tree with some names changed.
func tryLocate(q string, toks []ir.MyTok, which []int, orig *nameSlots) (map[slotRef]int, bool) {
	var b strings.Builder
	pos := 0
	names := map[string]int{}
	for _, j := range which {
		t := toks[j]
		b.WriteString(q[pos:t.Start])
		name := sentinelPrefix + strconv.Itoa(j)
		names[name] = j
		if t.Kind == '`' {
			b.WriteString("`" + name + "`")
		} else {
			b.WriteString(name)
		}
		pos = t.End
	}
	b.WriteString(q[pos:])
	stmt, err := ParseOne(b.String())
	if err != nil {
		return nil, false
	}
	got := CollectSlots(stmt)
	if got.shape() != orig.shape() {
		return nil, false
	}
	var want []string
	orig.each(func(_ slotRef, v string) { want = append(want, v) })
	found := map[slotRef]int{}
	used := map[int]bool{}
	ok, n := true, 0
	got.each(func(r slotRef, v string) {
		w := want[n]
		n++
		if v == w || !ok {
			return
		}
		j, isSentinel := names[v]
		if !isSentinel || used[j] || ir.IdentText(q, toks[j]) != w {
			ok = false
			return
		}
		used[j] = true
		found[r] = j
	})
	return found, ok
}
