package shardconf

// ShardingSphere's inline expression parser tests, translated (apache/
// shardingsphere infra/expr: type/groovy/.../GroovyInlineExpressionParserTest,
// type/literal/.../LiteralInlineExpressionParserTest,
// type/interval/.../IntervalInlineExpressionParserTest,
// entry/.../InlineExpressionParserFactoryTest, core/.../InlineExpressionParserTest).
// The Java tests check size and hasItems; these check the exact list, in
// the order ShardingSphere builds it.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func checkExpand(t *testing.T, expr string, want ...string) {
	t.Helper()
	got, err := expandInline(expr)
	if err != nil {
		t.Errorf("expandInline(%q): %v", expr, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("expandInline(%q) = %q, want %q", expr, got, want)
	}
}

func checkExpandFails(t *testing.T, expr, msg string) {
	t.Helper()
	got, err := expandInline(expr)
	var ie *inlineError
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, msg) {
		t.Errorf("expandInline(%q) = %q, %v; want an *inlineError containing %q", expr, got, err, msg)
	}
}

func TestGroovyNodeListsExpandAsShardingSphere(t *testing.T) {
	// GroovyInlineExpressionParserTest.assertEvaluateForSimpleString
	checkExpand(t, " t_order_0, t_order_1 ", "t_order_0", "t_order_1")
	// GroovyInlineExpressionParserTest.assertEvaluateForNull
	checkExpand(t, "t_order_${null}", "t_order_")
	// GroovyInlineExpressionParserTest.assertEvaluateForLiteral
	checkExpand(t, "t_order_${'xx'}", "t_order_xx")
	// GroovyInlineExpressionParserTest.assertEvaluateForArray
	checkExpand(t, "t_order_${[0, 1, 2]},t_order_item_${[0, 2]}",
		"t_order_0", "t_order_1", "t_order_2", "t_order_item_0", "t_order_item_2")
	// GroovyInlineExpressionParserTest.assertEvaluateForRange
	checkExpand(t, "t_order_${0..2},t_order_item_${0..1}",
		"t_order_0", "t_order_1", "t_order_2", "t_order_item_0", "t_order_item_1")
	// GroovyInlineExpressionParserTest.assertEvaluateForComplex
	checkExpand(t, "t_${['new','old']}_order_${1..2}, t_config",
		"t_new_order_1", "t_new_order_2", "t_old_order_1", "t_old_order_2", "t_config")
	// GroovyInlineExpressionParserTest.assertEvaluateForCalculate
	checkExpand(t, `t_${["new${1+2}",'old']}_order_${1..2}`,
		"t_new3_order_1", "t_new3_order_2", "t_old_order_1", "t_old_order_2")
	// GroovyInlineExpressionParserTest.assertEvaluateForExpressionPlaceHolder
	checkExpand(t, `t_$->{["new$->{1+2}",'old']}_order_$->{1..2}`,
		"t_new3_order_1", "t_new3_order_2", "t_old_order_1", "t_old_order_2")
	// GroovyInlineExpressionParserTest.assertHandlePlaceHolder: "$->{" is
	// "${", in nested strings too.
	checkExpand(t, `t_$->{["new$->{1+2}"]}`, "t_new3")
	checkExpand(t, `t_${["new$->{1+2}"]}`, "t_new3")
	// GroovyInlineExpressionParserTest.assertEvaluateClosure ("${1+2}" as a
	// node list; the algorithm form is in TestGroovyClosureEvaluatesAsShardingSphere)
	checkExpand(t, "${1+2}", "3")
	// ShardingSphere's row value expression docs (expr.en.md)
	checkExpand(t, "<GROOVY>t_order_${1..3}", "t_order_1", "t_order_2", "t_order_3")
	checkExpand(t, "<GROOVY>${['online', 'offline']}_table${1..3}",
		"online_table1", "online_table2", "online_table3", "offline_table1", "offline_table2", "offline_table3")
}

// GroovyInlineExpressionParserTest.assertEvaluateForLong,
// LiteralInlineExpressionParserTest.assertEvaluateForLong
func TestLongNodeListsExpandAsShardingSphere(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1024; i++ {
		fmt.Fprintf(&b, "ds_%d.t_user_%d", i/64, i)
		if i != 1023 {
			b.WriteByte(',')
		}
	}
	for _, expr := range []string{b.String(), "<LITERAL>" + b.String()} {
		got, err := expandInline(expr)
		if err != nil || len(got) != 1024 || got[0] != "ds_0.t_user_0" || got[1023] != "ds_15.t_user_1023" {
			t.Errorf("expandInline(%.20q...) = %d names, %v", expr, len(got), err)
		}
	}
}

// What the GString semantics of ShardingSphere's GROOVY parser give beyond
// its tests (GroovyInlineExpressionParser.getCartesianValues and
// assemblySegment): a null value is skipped and later values pair with
// earlier texts; a list contributes its distinct strings.
func TestGroovyNodeListsKeepShardingSphereQuirks(t *testing.T) {
	checkExpand(t, "a${null}b${[1,2]}c", "a1bc", "a2bc")
	checkExpand(t, "t_${[0, 0, 1, '1']}", "t_0", "t_1")
	checkExpand(t, `"t_${0..1}"`, "t_0", "t_1") // ShardingSphere quotes an item only when it is not quoted
	checkExpand(t, `ds.t_${0..1},"t_x"`, "ds.t_0", "ds.t_1", "t_x")
	checkExpand(t, `t_${"${null}"}`, "t_null") // a GString writes null as "null"
	checkExpand(t, `t_${'$->{x}'}`, "t_${x}")  // "$->{" is rewritten before Groovy reads quotes
	checkExpand(t, `t_${"\$->{x}"}`, "t_${x}") // also after a backslash
	checkExpand(t, "t_${1 + 1}_${'a' + 1}_${7.intdiv(2)}", "t_2_a1_3")
	checkExpand(t, "t_${-1..1}", "t_-1", "t_0", "t_1")

	checkExpandFails(t, "t_${-> 1}", "closure")           // ShardingSphere writes the closure object
	checkExpandFails(t, "t_${[null, 1]}", "null")         // NullPointerException there
	checkExpandFails(t, `t_${1}\n`, "Groovy string")      // an escape in the GString text
	checkExpandFails(t, `t_${1}"x"`, "Groovy string")     // a quote ends the GString
	checkExpandFails(t, "t_${id}", "identifier")          // MissingPropertyException there
	checkExpandFails(t, "t_${5 / 2}", "BigDecimal")       // 2.5 in Groovy
	checkExpandFails(t, "t_${['}', 'a,b']}", "unclosed")  // GroovyUtils.split cuts at the comma
	checkExpand(t, "x$y,t_${1},a", "x$y", "t_1", "a")     // an item without a segment is not read by Groovy
	checkExpandFails(t, "t_${1},x$y", "close to the end") // GroovyUtils.split's substring fails
}

func TestLiteralNodeListsExpandAsShardingSphere(t *testing.T) {
	// LiteralInlineExpressionParserTest.assertEvaluateForSimpleString
	checkExpand(t, "<LITERAL> t_order_0, t_order_1 ", "t_order_0", "t_order_1")
	// LiteralInlineExpressionParserTest.assertHandlePlaceHolder: LITERAL
	// reads nothing
	checkExpand(t, `<LITERAL>t_$->{["new$->{1+2}"]}`, `t_$->{["new$->{1+2}"]}`)
	// ShardingSphere's row value expression docs (expr.en.md)
	checkExpand(t, "<LITERAL>t_order_1, t_order_2, t_order_3", "t_order_1", "t_order_2", "t_order_3")
	checkExpand(t, "<LITERAL>t_order_${1..3}", "t_order_${1..3}")
}

// ShardingSphere expands an absent or empty expression to no names
// (GroovyInlineExpressionParserTest.assertEvaluateForExpressionIsNull,
// LiteralInlineExpressionParserTest.assertEvaluateForExpressionIsNull). The
// loader never expands an empty actualDataNodes (it means every data
// source, as there); an expression that is empty after its type prefix is
// an error rather than a table with no data nodes.
func TestEmptyNodeListIsAnError(t *testing.T) {
	for _, expr := range []string{"", "<GROOVY>", "<LITERAL>", "<INTERVAL>"} {
		if got, err := expandInline(expr); err == nil {
			t.Errorf("expandInline(%q) = %q, want an error", expr, got)
		}
	}
}

func TestInlineExpressionTypesAsShardingSphereFactory(t *testing.T) {
	// InlineExpressionParserFactoryTest.assertNewInstance
	checkExpand(t, "t_order_0, t_order_1", "t_order_0", "t_order_1")
	checkExpand(t, "<GROOVY>t_order_0, t_order_1", "t_order_0", "t_order_1")
	checkExpand(t, "<LITERAL>t_order_0, t_order_1", "t_order_0", "t_order_1")
	checkExpand(t, "<groovy>t_${0..1}", "t_0", "t_1") // TypedSPILoader ignores case
	// InlineExpressionParserFactoryTest.assertUndefinedInstance
	checkExpandFails(t, "<UNDEFINED>t_order_0, t_order_1", "unsupported inline expression type <UNDEFINED>")
	// InlineExpressionParserFactoryTest.assertFixtureInstance: a custom
	// InlineExpressionParser is Java code; shardkey has none.
	checkExpandFails(t, "<CUSTOM.FIXTURE>spring", "unsupported inline expression type <CUSTOM.FIXTURE>")
	// ShardingSphere 5.4.0 named LITERAL "PURELIST" and GROOVY "HOTSPOT"
	// (PureListInlineExpressionParserTest, HotspotInlineExpressionParserTest);
	// HOTSPOT reads every item with Groovy, even one without a segment.
	checkExpand(t, "<PURELIST> t_order_0, t_order_1 ", "t_order_0", "t_order_1")
	checkExpand(t, "<HOTSPOT>t_${['new','old']}_order_${1..2}, t_config",
		"t_new_order_1", "t_new_order_2", "t_old_order_1", "t_old_order_2", "t_config")
	checkExpand(t, "<HOTSPOT> t_order_0, t_order_1 ", "t_order_0", "t_order_1")
	checkExpandFails(t, `<HOTSPOT>t_a\b`, "Groovy string")
	checkExpandFails(t, `<HOTSPOT>t_$x`, "'$' must start")
	checkExpand(t, `t_a\b`, `t_a\b`) // GROOVY takes text without a segment as it is
	if e, err := compileInline("<HOTSPOT>ds_${user_id % 2}"); err != nil {
		t.Errorf("<HOTSPOT> algorithm expression: %v", err)
	} else if got, err := e.eval(mustValues(t, 3)); err != nil || got != "ds_1" {
		t.Errorf("<HOTSPOT>ds_${user_id %% 2} at 3 = %q, %v", got, err)
	}
	if _, err := compileInline(`<HOTSPOT>t\0`); err == nil {
		t.Errorf(`<HOTSPOT>t\0: no error (HOTSPOT reads constant text with Groovy)`)
	}
	// ESPRESSO runs Groovy in a guest VM and reads text without segments
	// differently (escapes): not supported.
	checkExpandFails(t, "<ESPRESSO>t_order_${1..3}", "unsupported inline expression type")
	// LiteralInlineExpressionParserTest.assertEvaluateClosure: only GROOVY
	// evaluates an algorithm expression.
	for _, expr := range []string{"<LITERAL>${1+2}", "<INTERVAL>P=t_;SP=yyyy;DIA=1;DIU=Years;DL=2021;DU=2023"} {
		if _, err := compileInline(expr); err == nil || !strings.Contains(err.Error(), "cannot be an algorithm expression") {
			t.Errorf("compileInline(%q): %v, want an error", expr, err)
		}
	}
}

func TestGroovyClosureEvaluatesAsShardingSphere(t *testing.T) {
	tests := []struct {
		expr string
		vals []any
		want string
	}{
		// GroovyInlineExpressionParserTest.assertEvaluateClosure
		{"${1+2}", nil, "3"},
		// ShardingSphere builds {it -> "<expr>"}: a GString writes null as
		// "null", calls a closure without parameters, and reads nested
		// strings.
		{"t_order_${null}", nil, "t_order_null"},
		{"t_${-> id % 2}", []any{3}, "t_1"},
		{"t_${{-> id % 2}}", []any{4}, "t_0"},
		{`t_${"x${id % 2}"}`, []any{5}, "t_x1"},
		{`t_${"x$->{id}y" + 1}`, []any{5}, "t_x5y1"},
		{`t_${"${-> 'a'}"}`, nil, "t_a"},
		{`t\n_0`, nil, `t\n_0`}, // text without a segment is used as it is
		// InlineShardingAlgorithm and its complex and hint variants trim the
		// expression first (String.trim), also before a type prefix.
		{" t_${id % 2}\t", []any{3}, "t_1"},
		{"  <GROOVY>ds_${id % 2} \n", []any{4}, "ds_0"},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		if err != nil {
			t.Errorf("compileInline(%q): %v", tt.expr, err)
			continue
		}
		if got, err := e.eval(mustValues(t, tt.vals...)); err != nil || got != tt.want {
			t.Errorf("eval(%q, %v) = %q, %v; want %q", tt.expr, tt.vals, got, err, tt.want)
		}
	}
	for _, bad := range []struct{ expr, msg string }{
		{"t_${{id -> id}}", "without parameters"}, // a GString hands it a Writer
		{"t_${{-> id} + 1}", "closure"},
		{`t_${"x${id}".hashCode()}`, "GString"}, // GString.hashCode is not String's
		{"t_${null + 1}", "null"},
		{`t_${id}\n`, "Groovy string"},
		{`"t_${id}"`, "Groovy string"},
	} {
		if _, err := compileInline(bad.expr); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("compileInline(%q): %v, want an error containing %q", bad.expr, err, bad.msg)
		}
	}
}

// GroovyInlineExpressionParserTest.assertEvaluateForThreadSafety: ten
// goroutines compile and evaluate ds_${id} and account_${id} with their own
// String values, and share one compiled expression; run with -race.
func TestGroovyEvaluationIsSafeForConcurrentUse(t *testing.T) {
	shared, err := compileInline("ds_${id}")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 10*5*3)
	for g := 0; g < 10; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				suffix := fmt.Sprintf("goroutine-%d--%d", g, j)
				for _, prefix := range []string{"ds_", "account_", "shared"} {
					e := shared
					if prefix != "shared" {
						var err error
						if e, err = compileInline(prefix + "${id}"); err != nil {
							errs <- err
							continue
						}
					} else {
						prefix = "ds_"
					}
					got, err := e.eval([]value{{kind: kindString, s: suffix}})
					if err != nil || got != prefix+suffix {
						errs <- fmt.Errorf("%s with %q = %q, %v", e, suffix, got, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Java's Math.floorDiv and Math.floorMod (rounding toward negative
// infinity; floorMod takes the divisor's sign and, from Java 9, its type:
// floorMod(long, int) is an int) and Number.longValue/intValue, as
// ShardingSphere's transaction e2e rule file uses them:
// account_${Math.floorMod(Math.floorDiv(id.longValue(), 2L), 2L)}.
func TestJavaFloorDivisionEvaluatesAsJava(t *testing.T) {
	tests := []struct {
		expr string
		vals []any
		want string
	}{
		{"account_${Math.floorMod(Math.floorDiv(id.longValue(), 2L), 2L)}", []any{5}, "account_0"},
		{"account_${Math.floorMod(Math.floorDiv(id.longValue(), 2L), 2L)}", []any{6}, "account_1"},
		{"account_${Math.floorMod(Math.floorDiv(id.longValue(), 2L), 2L)}", []any{-3}, "account_0"},
		{"t_${Math.floorDiv(-7, 2)}_${Math.floorMod(-7, 2)}", nil, "t_-4_1"},
		{"t_${Math.floorDiv(7, -2)}_${Math.floorMod(7, -2)}", nil, "t_-4_-1"},
		{"t_${Math.floorDiv(id, 4)}", []any{-1}, "t_-1"},
		{"t_${Math.floorMod(id, 3) * 1000000000 * 3}", []any{2}, "t_1705032704"},  // an int: wraps at 32 bits
		{"t_${Math.floorMod(id, 3L) * 1000000000 * 3}", []any{2}, "t_6000000000"}, // a long
		{"t_${Math.floorDiv(-2147483647 - 1, -1)}", nil, "t_-2147483648"},         // floorDiv(int, int) overflows, as Java's
		{"t_${Math.floorDiv(-2147483648, -1)}", nil, "t_2147483648"},              // Groovy reads -2147483648 as -(2147483648L)
		{"t_${2147483648L.intValue()}_${id.intValue()}", []any{int64(1) << 33}, "t_-2147483648_0"},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		if err != nil {
			t.Errorf("compileInline(%q): %v", tt.expr, err)
			continue
		}
		if got, err := e.eval(mustValues(t, tt.vals...)); err != nil || got != tt.want {
			t.Errorf("eval(%q, %v) = %q, %v; want %q", tt.expr, tt.vals, got, err, tt.want)
		}
	}
	for _, bad := range []struct{ expr, msg string }{
		{"t_${Math.floorMod(id, 0)}", "division by zero"},
		{"t_${Math.floorDiv(id)}", "2 arguments"},
		{"t_${'a'.longValue()}", "not supported on a String"},
		{"t_${Math.floorMod('a', 2)}", "not supported on a String"},
	} {
		if _, err := compileInline(bad.expr); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("compileInline(%q): %v, want an error containing %q", bad.expr, err, bad.msg)
		}
	}
	e, err := compileInline("t_${Math.floorMod(id, 2)}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.eval(mustValues(t, "x")); err == nil {
		t.Errorf("Math.floorMod of a String value: no error")
	}
}

// Integer.valueOf / parseInt and Long.valueOf / parseLong, as
// ShardingSphere's DistSQL docs write HINT_INLINE expressions for hint
// values that arrive as Strings: ds_${Integer.valueOf(value) % 2}. A
// column's number is a Long, and Groovy does not narrow a Long to the int
// Integer.valueOf takes, so only Long.valueOf accepts one.
func TestJavaNumberParsingEvaluatesAsJava(t *testing.T) {
	tests := []struct {
		expr string
		vals []any
		want string
	}{
		{"ds_${Integer.valueOf(value) % 2}", []any{"3"}, "ds_1"},
		{"ds_${Integer.valueOf(value) % 2}", []any{"-3"}, "ds_-1"},
		{"ds_${Integer.valueOf(value) % 2}", []any{"+0004"}, "ds_0"},
		{"t_order_item_${Integer.valueOf(value) % 2}", []any{"-2147483648"}, "t_order_item_0"},
		{"t_${Integer.parseInt(value) * 2}", []any{"1073741824"}, "t_-2147483648"}, // an int: wraps
		{"t_${Long.valueOf(value) * 2}", []any{"1073741824"}, "t_2147483648"},
		{"t_${Long.parseLong(value)}", []any{"9223372036854775807"}, "t_9223372036854775807"},
		{"t_${Long.valueOf(value) % 3}", []any{7}, "t_1"},
		{"t_${Integer.valueOf(7) + Integer.valueOf('8')}", nil, "t_15"},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		if err != nil {
			t.Errorf("compileInline(%q): %v", tt.expr, err)
			continue
		}
		if got, err := e.eval(mustValues(t, tt.vals...)); err != nil || got != tt.want {
			t.Errorf("eval(%q, %v) = %q, %v; want %q", tt.expr, tt.vals, got, err, tt.want)
		}
	}
	for _, bad := range []struct {
		expr string
		val  any
		msg  string
	}{
		{"ds_${Integer.valueOf(value) % 2}", "2147483648", "NumberFormatException"},
		{"ds_${Integer.valueOf(value) % 2}", "1 ", "NumberFormatException"},
		{"ds_${Integer.valueOf(value) % 2}", "+-1", "NumberFormatException"},
		{"ds_${Integer.valueOf(value) % 2}", "\u0663", "NumberFormatException"}, // Java reads Arabic-Indic digits; refused
		{"ds_${Integer.valueOf(value) % 2}", 3, "takes a String"},               // Integer.valueOf(Long) does not exist
		{"ds_${Long.parseLong(value)}", 3, "takes a String"},
	} {
		e, err := compileInline(bad.expr)
		if err != nil {
			t.Errorf("compileInline(%q): %v", bad.expr, err)
			continue
		}
		if got, err := e.eval(mustValues(t, bad.val)); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("eval(%q, %v) = %q, %v; want an error containing %q", bad.expr, bad.val, got, err, bad.msg)
		}
	}
	for _, bad := range []string{"t_${Integer.valueOf(7L)}", "t_${Integer.parseInt(7)}", "t_${Integer.valueOf('x')}", "t_${Integer.valueOf('7', 8)}", "t_${Long.toString(id)}"} {
		if _, err := compileInline(bad); err == nil {
			t.Errorf("compileInline(%q): no error", bad)
		}
	}
}

func TestIntervalNodeListsExpandAsShardingSphere(t *testing.T) {
	// IntervalInlineExpressionParserTest.assertEvaluateWithSimpleExpression
	checkExpand(t, "<INTERVAL>P=ds-0.t_order;SP=yyyyMMdd;DIA=1;DIU=Days;DL=20231202;DU=20231202", "ds-0.t_order20231202")
	// IntervalInlineExpressionParserTest.assertEvaluateWithLocalDateExpression
	checkExpand(t, "<INTERVAL>P=ds-0.t_order_;SP=yyyy_MMdd;DIA=1;DIU=Days;DL=2023_1202;DU=2023_1204",
		"ds-0.t_order_2023_1202", "ds-0.t_order_2023_1203", "ds-0.t_order_2023_1204")
	// IntervalInlineExpressionParserTest.assertEvaluateWithYearMonthExpression
	checkExpand(t, "<INTERVAL>P=ds-0.t_order_;SP=yyyy_MM;DIA=1;DIU=Months;DL=2023_10;DU=2023_12",
		"ds-0.t_order_2023_10", "ds-0.t_order_2023_11", "ds-0.t_order_2023_12")
	// IntervalInlineExpressionParserTest.assertEvaluateWithYearExpression
	checkExpand(t, "<INTERVAL>P=ds-0.t_order_;SP=yyyy;DIA=1;DIU=Years;DL=2021;DU=2023",
		"ds-0.t_order_2021", "ds-0.t_order_2022", "ds-0.t_order_2023")
	// IntervalInlineExpressionParserTest.assertEvaluateWithLocalTimeExpression
	checkExpand(t, "<INTERVAL>P=ds-0.t_order_;SP=HH_mm_ss_SSS;DIA=1;DIU=Millis;DL=22_48_52_131;DU=22_48_52_133",
		"ds-0.t_order_22_48_52_131", "ds-0.t_order_22_48_52_132", "ds-0.t_order_22_48_52_133")
	// IntervalInlineExpressionParserTest.assertEvaluateWithLocalDateTimeExpression
	checkExpand(t, "<INTERVAL>P=ds-0.t_order_;SP=yyyy_MM_dd_HH_mm_ss_SSS;DIA=1;DIU=Days;DL=2023_12_04_22_48_52_131;DU=2023_12_06_22_48_52_131",
		"ds-0.t_order_2023_12_04_22_48_52_131", "ds-0.t_order_2023_12_05_22_48_52_131", "ds-0.t_order_2023_12_06_22_48_52_131")
	// IntervalInlineExpressionParserTest.assertEvaluateWithMonthExpression
	checkExpand(t, "<INTERVAL>P=ds-0.t_order_;SP=MM;DIA=1;DIU=Months;DL=10;DU=12",
		"ds-0.t_order_10", "ds-0.t_order_11", "ds-0.t_order_12")
	// ShardingSphere's row value expression docs (expr.en.md)
	checkExpand(t, "<INTERVAL>P=t_order_;SP=yyyy_MM;DIA=1;DIU=Months;DL=2023_01;DU=2023_06",
		"t_order_2023_01", "t_order_2023_02", "t_order_2023_03", "t_order_2023_04", "t_order_2023_05", "t_order_2023_06")
}

// What java.time's until and plus give where ShardingSphere's tests do not
// look: each name steps from DL; a month step clamps the day; a whole
// month or day counts only once its day or time is reached; a Month alone
// ignores the unit; a negative DIA runs backwards.
func TestIntervalNodeListsFollowJavaTime(t *testing.T) {
	const p = "<INTERVAL>P=t_;"
	checkExpand(t, p+"SP=yyyyMMdd;DIA=1;DIU=Months;DL=20230131;DU=20230531",
		"t_20230131", "t_20230228", "t_20230331", "t_20230430", "t_20230531")
	checkExpand(t, p+"SP=yyyyMMdd;DIA=1;DIU=Months;DL=20230131;DU=20230530",
		"t_20230131", "t_20230228", "t_20230331", "t_20230430")
	checkExpand(t, p+"SP=yyyyMMddHH;DIA=1;DIU=Days;DL=2023120110;DU=2023120309", "t_2023120110", "t_2023120210")
	checkExpand(t, p+"SP=yyyyMMddHH;DIA=1;DIU=Days;DL=2023120110;DU=2023120310", "t_2023120110", "t_2023120210", "t_2023120310")
	checkExpand(t, p+"SP=yyyyMMddHHmm;DIA=90;DIU=Minutes;DL=202312312300;DU=202401010200",
		"t_202312312300", "t_202401010030", "t_202401010200")
	checkExpand(t, p+"SP=MM;DIA=1;DIU=Days;DL=10;DU=12", "t_10", "t_11", "t_12")
	checkExpand(t, p+"SP=yyyy;DIA=-1;DIU=Years;DL=2023;DU=2021", "t_2023", "t_2022", "t_2021")
	checkExpand(t, p+"SP=yyyy;DIA=2;DIU=Years;DL=2021;DU=2026", "t_2021", "t_2023", "t_2025")
	checkExpand(t, p+"SP=HH;DIA=6;DIU=Hours;DL=00;DU=23", "t_00", "t_06", "t_12", "t_18")
	checkExpand(t, p+"SP=yyyyMM;DIA=1;DIU=Decades;DL=200001;DU=202012", "t_200001", "t_201001", "t_202001")
	checkExpand(t, p+"SP=yyyyMMdd;DIA=1;DIU=Weeks;DL=20230101;DU=20230115;", "t_20230101", "t_20230108", "t_20230115")
	checkExpand(t, "<INTERVAL>DU=2021;DL=2020;DIU=Years;DIA=1;SP=yyyy;P=t_;C=ISO", "t_2020", "t_2021")
}

func TestIntervalNodeListsFailWhereShardingSphereFailsOrGuesses(t *testing.T) {
	const p = "<INTERVAL>P=t_;"
	for _, tt := range []struct{ expr, msg string }{
		// IntervalInlineExpressionParserTest.assertEvaluateWithJapaneseDateExpression:
		// other chronologies and era text depend on the JVM's locale.
		{p + "SP=GGGGyyyy_MM_dd;DIA=1;DIU=Days;DL=平成0001_12_05;DU=平成0001_12_06;C=Japanese", "chronology"},
		{p + "SP=GGGGyyyy_MM_dd;DIA=1;DIU=Days;DL=平成0001_12_05;DU=平成0001_12_06", "SP"},
		// ShardingSphere throws
		{p + "SP=yyyy;DIA=1;DIU=Years;DL=2023;DU=2021", "DL is past DU"},
		{p + "SP=yyyy;DIA=0;DIU=Years;DL=2021;DU=2023", "DIA"},
		{p + "SP=yyyy_MM;DIA=1;DIU=Days;DL=2023_01;DU=2023_02", "cannot step a YearMonth"},
		{p + "SP=yyyyMMdd;DIA=1;DIU=Hours;DL=20230101;DU=20230102", "cannot step a LocalDate"},
		{p + "SP=HH;DIA=1;DIU=Days;DL=01;DU=02", "cannot step a LocalTime"},
		{p + "SP=yyyy;DIA=1;DIU=years;DL=2021;DU=2023", "case matters"},
		{p + "SP=yyyy;DIA=1;DIU=Years;DL=2021", "DU is required"},
		{p + "SP=yyyy;SP=yyyy;DIA=1;DIU=Years;DL=2021;DU=2023", "twice"},
		{p + "SP=dd;DIA=1;DIU=Days;DL=01;DU=02", "names no year"},
		{p + "SP=yyyy;DIA=1;DIU=Years;DL=21;DU=2023", "DL"},
		{p + ";SP=yyyy;DIA=1;DIU=Years;DL=2021;DU=2023", "KEY=VALUE"},
		// ShardingSphere ignores an unknown key and keeps the text before a
		// second '='; shardkey refuses both.
		{p + "SP=yyyy;DIA=1;DIU=Years;DL=2021;DU=2023;X=1", "unknown key"},
		{p + "SP=yyyy;DIA=1;DIU=Years;DL=2021;DU=2023=2024", "contains '='"},
		{p + "SP=yyyy;DIA=1;DIU=Years;DL=2021;DU=2022;DIU=Eras", "twice"},
		{p + "SP=yyyy;DIA=1;DIU=Eras;DL=2021;DU=2022", "not a supported ChronoUnit"},
		{p + "SP=yyyy;DIA=1;DIU=Years;DL=2022;DU=2021", "no names"},
	} {
		checkExpandFails(t, tt.expr, tt.msg)
	}
}
