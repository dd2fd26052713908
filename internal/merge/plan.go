package merge

import "database/sql/driver"

// Dialect is the database whose semantics a merge reproduces: NULL
// placement, AVG's result type and rounding, GROUP BY's implicit order.
type Dialect uint8

const (
	PostgreSQL Dialect = iota + 1
	MySQL              // MySQL and MariaDB
	SQLite
)

// Text says how the text values of a column compare. Text is compared only
// where the comparison is known to equal the column's collation; the
// planner decides (an explicit COLLATE, a declared binary collation) and
// the engine refuses the rest.
type Text uint8

const (
	// TextRefused: ordering, MIN/MAX, grouping or DISTINCT on a text value
	// fails with ErrCollation before a wrong row can be returned.
	TextRefused Text = iota
	// TextBinary compares bytes (SQLite's BINARY, PostgreSQL's "C" and
	// "POSIX", binary strings).
	TextBinary
	// TextPadSpace compares bytes with trailing spaces insignificant, as
	// MySQL's and MariaDB's *_bin PAD SPACE collations do.
	TextPadSpace
	// TextEqualOnly: equality is bytewise (PostgreSQL's deterministic
	// collations) but order is the collation's: grouping and DISTINCT are
	// allowed, ordering and MIN/MAX are refused.
	TextEqualOnly
	// TextNoCase is SQLite's NOCASE: ASCII letters compare as lower case,
	// then bytewise (other characters are not folded).
	TextNoCase
	// TextRTrim is SQLite's RTRIM: trailing spaces are ignored, then
	// bytewise.
	TextRTrim
)

// Key is one ORDER BY term.
type Key struct {
	Col        int  // column of the shard rows (hidden columns included)
	Desc       bool // descending (USING > is Desc)
	NullsFirst bool // NULLs come first in the output, whatever Desc says
	Text       Text
}

// Func is how an aggregate column combines across shards.
type Func uint8

const (
	Count         Func = iota + 1 // sum of the shards' counts (int64)
	Sum                           // exact sum; NULL when every shard's is NULL
	Min                           // least non-NULL value
	Max                           // greatest non-NULL value
	Avg                           // Args: [sum column, count column]; the dialect's division, typed as Col
	CountDistinct                 // Args: value columns; distinct non-NULL tuples across shards
	SumDistinct                   // Args: [value column]; sum of distinct non-NULL values
	AvgDistinct                   // Args: [value column]; average of distinct non-NULL values
)

// Agg is an aggregate column of the result: its merged value replaces the
// shard's value in Col.
type Agg struct {
	Col  int
	Func Func
	Args []int
	Text Text // text values (MIN/MAX, distinct values)
}

// CondOp is a HAVING node's operator.
type CondOp uint8

const (
	And CondOp = iota + 1
	Or
	Not
	Compare   // L Cmp R
	IsNull    // L IS NULL
	IsNotNull // L IS NOT NULL
)

// CmpOp is a comparison.
type CmpOp uint8

const (
	Eq CmpOp = iota + 1
	Ne
	Lt
	Le
	Gt
	Ge
)

// Cond is a HAVING condition, evaluated on merged groups with SQL's
// three-valued logic (a group is kept when the condition is true).
type Cond struct {
	Op   CondOp
	Kids []*Cond // And, Or: two or more; Not: one
	Cmp  CmpOp
	L, R Operand
	Text Text // for text comparisons
}

// Operand is a merged column's value or a constant (a bound argument or a
// literal).
type Operand struct {
	Col     int
	Const   driver.Value
	IsConst bool
}

// ExprOp is an operator of a computed column's expression.
type ExprOp uint8

const (
	ExprCol      ExprOp = iota + 1 // the merged value of column Col
	ExprConst                      // Const: int64 (an integer literal), decimal text (a numeric literal), float64
	ExprAdd                        // Args[0] + Args[1]
	ExprSub                        // Args[0] - Args[1]
	ExprMul                        // Args[0] * Args[1]
	ExprDiv                        // Args[0] / Args[1], as the dialect divides
	ExprNeg                        // -Args[0]
	ExprCoalesce                   // the first non-NULL of Args
)

// Expr is an arithmetic expression over a grouped row's merged values.
type Expr struct {
	Op    ExprOp
	Col   int          // ExprCol
	Const driver.Value // ExprConst
	Args  []*Expr
}

// Computed is a column whose value the engine computes from the merged
// values of other columns (an aggregate inside an expression: COUNT(*) *
// 2, SUM(a) / COUNT(*), COALESCE(MAX(x), 0)). Its value replaces the
// shard's in Col after the aggregates merge and before HAVING; Computed
// columns are evaluated in order, so one may use an earlier one.
type Computed struct {
	Col  int
	Expr *Expr
}

// Plan is how one query's shard results combine. The shard rows have the
// query's visible columns first and the planner's hidden columns (sort
// keys, AVG's SUM and COUNT, distinct values, HAVING operands) after them.
//
// Order of work, as SQL defines it: group (when Grouped), evaluate Having,
// drop hidden columns, apply Distinct, order by OrderBy, skip Offset, stop
// at Limit.
type Plan struct {
	Dialect Dialect
	Visible int // columns returned to the caller; the rest are hidden

	// Grouped: the query aggregates. Rows with equal GroupBy values (per
	// GroupText) form one group; with no GroupBy there is exactly one
	// group, and exactly one output row even when no shard returned one.
	Grouped   bool
	GroupBy   []int
	GroupText []Text // per GroupBy column
	Aggs      []Agg
	Computed  []Computed // Grouped only
	Having    *Cond

	Distinct     bool   // SELECT DISTINCT over the visible columns
	DistinctText []Text // per visible column

	OrderBy []Key
	Offset  int64
	Limit   int64 // -1: no limit

	// MaxGroups bounds the groups (or distinct rows, or distinct values)
	// held in memory; 0 means DefaultMaxGroups. Exceeding it fails the
	// query with ErrTooManyGroups.
	MaxGroups int
}

// DefaultMaxGroups is Plan.MaxGroups when it is 0.
const DefaultMaxGroups = 1 << 20
