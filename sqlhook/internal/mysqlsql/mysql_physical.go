package mysqlsql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// A physical table of a sharded table (t_order_0) named directly is not a
// logic table, so without these checks a write to it would run unchanged
// on the default data source, wherever its rows belong.

// physicalInsert places the target of INSERT or REPLACE when it is a
// physical table: its rows are routed as the logic table's, and bind
// refuses a row that routes to a table of another name (plan.pinned). A
// database qualifier is refused: the row would go to the data source it
// routes to, which need not be the database named. It returns the plan
// table index, or -1.
func (c *myCompiler) physicalInsert(tn *ast.TableName) int {
	logic, ok := c.h.PhysicalOf(tn.Name.O)
	if !ok {
		return -1
	}
	if tn.Schema.O != "" {
		c.fail("INSERT into physical table %s.%s named with its database: insert into logic table %s, which is routed", tn.Schema.O, tn.Name.O, logic)
		return -1
	}
	c.p.Pinned = tn.Name.L
	return c.placeTable(tn, "", logic)
}

// physicalUpdate refuses an UPDATE of a physical table that assigns one
// of its logic table's sharding columns: the statement is not routed, so
// the new value cannot be checked to route to the row's table. An
// unqualified column is checked against every physical table of the
// statement.
func (c *myCompiler) physicalUpdate(x *ast.UpdateStmt) {
	phys := map[string]string{} // name or alias, lower case -> logic table
	var walk func(n ast.ResultSetNode)
	walk = func(n ast.ResultSetNode) {
		switch y := n.(type) {
		case *ast.Join:
			if y.Left != nil {
				walk(y.Left)
			}
			if y.Right != nil {
				walk(y.Right)
			}
		case *ast.TableSource:
			tn, ok := y.Source.(*ast.TableName)
			if !ok {
				return
			}
			if logic, ok := c.h.PhysicalOf(tn.Name.O); ok {
				phys[tn.Name.L] = logic
				if y.AsName.L != "" {
					phys[y.AsName.L] = logic
				}
			}
		}
	}
	if x.TableRefs != nil && x.TableRefs.TableRefs != nil {
		walk(x.TableRefs.TableRefs)
	}
	for _, a := range x.List {
		col := a.Column.Name.L
		for name, logic := range phys {
			if q := a.Column.Table.L; q != "" && q != name {
				continue
			}
			if c.h.IsShardingColumn(strings.ToLower(logic), col) && c.err == nil {
				c.err = ir.KeyChangeError(logic, col, "", "an UPDATE of physical table "+name+" is not routed, so the new value cannot be checked")
			}
		}
	}
}

// logicName is the logic table a placed table name stands for.
func (c *myCompiler) logicName(tn *ast.TableName) string {
	if l, ok := c.asLogic[tn]; ok {
		return l
	}
	return tn.Name.O
}
