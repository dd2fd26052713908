package shardconf

// Inline expressions: the Groovy subset ShardingSphere rule files use, in
// two roles.
//
//   - expandInline (inline_expand.go) expands a node list such as
//     actualDataNodes ("ds_${0..1}.t_order_${0..3}") into names, as
//     ShardingSphere's InlineExpressionParser.splitAndEvaluate does; its
//     segments hold constants, lists and ranges.
//   - compileInline compiles an algorithm-expression such as
//     "t_order_${order_id % 4}" once, at load time, into Go closures. Routing
//     never parses or interprets text; the common single-integer-column
//     shape gets a path that builds no string at all (intTemplate).
//
// Both are written by hand; there is no Groovy runtime. What is supported,
// and how it maps to Groovy/Java semantics:
//
//   - "${...}" and the 4.x form "$->{...}"; an optional "<GROOVY>" type
//     prefix (ShardingSphere 5.4+). expandInline also takes "<LITERAL>" (a
//     plain comma-separated list, nothing expanded) and "<INTERVAL>"
//     (inline_interval.go). A "$" in the literal text that starts neither
//     form is an error (Groovy would read it as a variable reference),
//     except in a node list's text without any segment.
//   - Text without a segment is used as it is (ShardingSphere never hands
//     it to Groovy; an algorithm expression still refuses a stray "$").
//     Around segments the text is the body of a Groovy string literal there
//     ({it -> "<expression>"}), so a double quote, backslash or line break
//     in it is refused.
//   - Integer literals are Groovy's: Integer (32-bit) when the value fits,
//     else Long; an "L"/"l" suffix makes a Long. Literals beyond Long
//     (BigInteger), floating-point literals, hex and octal (a leading 0) are
//     errors: a leading zero means octal in Groovy, so "${01}" would silently
//     be 1 there; quote zero-padded names ('01') instead.
//   - String literals in single or double quotes with the Java escapes
//     \b \t \n \f \r \" \' \\ \$ and \uXXXX. A double-quoted literal may
//     hold segments (a nested GString, "new${1+2}"): it is the
//     concatenation of its texts and its values' strings. Its hashCode
//     (Groovy's GString.hashCode is not String.hashCode) is refused.
//   - null: a whole segment value "${null}" writes "null" (a node list
//     skips it, see inline_expand.go); any operator on null is refused.
//   - A closure without parameters as a whole segment value, "${-> e}" or
//     "${{-> e}}", is called by the GString: its value is e's. Closures
//     with parameters, and closures anywhere else, are refused.
//   - A sharding column's value is a Long (kindInt) or a String
//     (kindString); any other kind is an error at evaluation. ShardingSphere
//     passes whatever JDBC produced; Long is what it produces for BIGINT keys,
//     and with an Integer column only 32-bit overflow would differ.
//   - + - * % follow Groovy's NumberMath: Integer op Integer is Integer
//     (wrapping at 32 bits), anything with a Long is Long (wrapping at 64
//     bits). % is Java's remainder, with the sign of the dividend:
//     -3 % 2 == -1. + with a String on either side concatenates the other
//     side's toString. - * % on Strings are errors (Groovy's String.minus
//     and String.multiply are not supported).
//   - / is refused at compile time: on two integers Groovy's / yields a
//     BigDecimal ("t_${5 / 2}" is "t_2.5"), which is never a useful target
//     name; use .intdiv(n), Groovy's truncating integer division.
//   - Division or remainder by zero is an error (Java's ArithmeticException):
//     at compile time when the divisor is a constant 0, else at evaluation.
//   - Methods: x.intdiv(n), x.abs(), x.hashCode(), x.toString(),
//     x.longValue(), x.intValue() (Java's narrowing), Integer.valueOf(x),
//     Integer.parseInt(x), Long.valueOf(x), Long.parseLong(x) (a String
//     parsed as Java does; valueOf also takes a number its parameter holds
//     without narrowing, so Integer.valueOf refuses a Long), Math.abs(x),
//     Math.floorDiv(x, y) and Math.floorMod(x, y) (rounding toward negative
//     infinity; floorMod has the divisor's sign and, as Java 9+ overloads
//     it, the divisor's type). hashCode is Java's: Integer.hashCode is the
//     value, Long.hashCode is (int)(v ^ (v >>> 32)), String.hashCode runs
//     over UTF-16 code units with int overflow. Math.abs keeps Java's
//     overflow: Math.abs(Integer.MIN_VALUE) is Integer.MIN_VALUE.
//   - Identifiers are column names, matched case-insensitively (they are
//     normalized to lower case). "Math" followed by "." is java.lang.Math.
//   - Unary minus and plus, parentheses. Nothing else of Groovy: no
//     ternaries, comparisons, bit operators, property access.
//
// Every error is an *inlineError carrying the byte offset in the original
// expression.
//
// Fast paths: when an expression reads one column and is constant text
// around one integer-valued sub-expression (after folding constants and
// flattening '+' concatenations: "t_${id % 4}", "${'t_' + id % 4}"),
// intTemplate exposes it as prefix + decimal(f(x)) + suffix with an f that
// does not allocate; when that sub-expression reads the column only as
// x.hashCode(), a String value gets the same treatment (strFn).

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// inlineError is a problem in an inline expression at a byte offset of
// the expression as written.
type inlineError struct {
	Offset int
	Msg    string
}

func (e *inlineError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

func inlErrf(off int, format string, args ...any) *inlineError {
	return &inlineError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// maxInlineNames caps what one expandInline call may produce, and
// maxInlineBytes the total length of those names, so that a typo such as
// ${0..99999999} is an error instead of an out-of-memory crash.
const (
	maxInlineNames = 1_000_000
	maxInlineBytes = 64 << 20
	maxInlineDepth = 64 // nesting of parentheses and unary operators
)

// javaStringHash is Java's String.hashCode: s*31^(n-1) + ... over the
// UTF-16 code units of s, with int overflow. Each invalid UTF-8 byte
// counts as one U+FFFD (Java's decoder may merge a truncated sequence into
// one U+FFFD; valid UTF-8 is exact). It does not allocate.
func javaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaLongHash is Java's Long.hashCode: (int)(v ^ (v >>> 32)).
func javaLongHash(v int64) int32 { return int32(v ^ int64(uint64(v)>>32)) }

// ---------------------------------------------------------------------------
// Lexer (inside ${...})

type inlTokKind uint8

const (
	itkEnd       inlTokKind = iota + 1 // the closing '}'
	itkInt                             // integer literal
	itkStr                             // string literal
	itkIdent                           // identifier
	itkLParen                          // (
	itkRParen                          // )
	itkLBrack                          // [
	itkRBrack                          // ]
	itkComma                           // ,
	itkDot                             // .
	itkRange                           // ..
	itkRangeExcl                       // ..<
	itkPlus                            // +
	itkMinus                           // -
	itkStar                            // *
	itkSlash                           // /
	itkPercent                         // %
	itkGStr                            // "text${ : a double-quoted string up to its first segment
	itkArrow                           // ->
	itkLBrace                          // {
)

var inlTokNames = [...]string{
	itkEnd: "'}'", itkInt: "integer", itkStr: "string", itkIdent: "identifier",
	itkLParen: "'('", itkRParen: "')'", itkLBrack: "'['", itkRBrack: "']'",
	itkComma: "','", itkDot: "'.'", itkRange: "'..'", itkRangeExcl: "'..<'",
	itkPlus: "'+'", itkMinus: "'-'", itkStar: "'*'", itkSlash: "'/'", itkPercent: "'%'",
	itkGStr: "string", itkArrow: "'->'", itkLBrace: "'{'",
}

func (k inlTokKind) String() string {
	if int(k) < len(inlTokNames) && inlTokNames[k] != "" {
		return inlTokNames[k]
	}
	return "token"
}

type inlTok struct {
	kind inlTokKind
	off  int    // byte offset of the token in the expression
	end  int    // byte offset just after it
	i    int64  // tkInt
	long bool   // tkInt: a Long (suffix L or beyond Integer range)
	s    string // tkStr: the value; tkIdent: the name as written; tkGStr: the text before the segment
	open int    // tkGStr: offset of the '$' opening the string's first segment
}

// inlLexer tokenizes the inside of one ${...} segment of src.
type inlLexer struct {
	src  string
	pos  int
	open int // offset of the '$' that opened the segment, for errors
}

func inlSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func inlIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func inlIdentPart(c byte) bool { return inlIdentStart(c) || c >= '0' && c <= '9' }

func (lx *inlLexer) next() (inlTok, error) {
	for lx.pos < len(lx.src) && inlSpace(lx.src[lx.pos]) {
		lx.pos++
	}
	if lx.pos >= len(lx.src) {
		return inlTok{}, inlErrf(lx.open, "unclosed %s: no closing '}'", inlOpener(lx.src, lx.open))
	}
	start := lx.pos
	c := lx.src[start]
	one := func(k inlTokKind) (inlTok, error) {
		lx.pos++
		return inlTok{kind: k, off: start, end: lx.pos}, nil
	}
	switch {
	case c >= '0' && c <= '9':
		return lx.number()
	case inlIdentStart(c):
		for lx.pos < len(lx.src) && inlIdentPart(lx.src[lx.pos]) {
			lx.pos++
		}
		return inlTok{kind: itkIdent, off: start, end: lx.pos, s: lx.src[start:lx.pos]}, nil
	case c == '\'' || c == '"':
		return lx.str()
	}
	switch c {
	case '}':
		return one(itkEnd)
	case '(':
		return one(itkLParen)
	case ')':
		return one(itkRParen)
	case '[':
		return one(itkLBrack)
	case ']':
		return one(itkRBrack)
	case ',':
		return one(itkComma)
	case '+':
		return one(itkPlus)
	case '-':
		if strings.HasPrefix(lx.src[start:], "->") {
			lx.pos += 2
			return inlTok{kind: itkArrow, off: start, end: lx.pos}, nil
		}
		return one(itkMinus)
	case '*':
		if strings.HasPrefix(lx.src[start:], "**") {
			return inlTok{}, inlErrf(start, "operator ** is not supported")
		}
		return one(itkStar)
	case '/':
		return one(itkSlash)
	case '%':
		return one(itkPercent)
	case '.':
		if strings.HasPrefix(lx.src[start:], "..<") {
			lx.pos += 3
			return inlTok{kind: itkRangeExcl, off: start, end: lx.pos}, nil
		}
		if strings.HasPrefix(lx.src[start:], "..") {
			lx.pos += 2
			return inlTok{kind: itkRange, off: start, end: lx.pos}, nil
		}
		return one(itkDot)
	case '{':
		return one(itkLBrace)
	case '$':
		return inlTok{}, inlErrf(start, "'$' is not allowed inside %s", inlOpener(lx.src, lx.open))
	}
	r, _ := utf8.DecodeRuneInString(lx.src[start:])
	return inlTok{}, inlErrf(start, "unexpected character %q", r)
}

// inlOpener names the segment opener at off: "${" or "$->{".
func inlOpener(src string, off int) string {
	if strings.HasPrefix(src[off:], "$->{") {
		return "$->{"
	}
	return "${"
}

func (lx *inlLexer) number() (inlTok, error) {
	start := lx.pos
	for lx.pos < len(lx.src) && lx.src[lx.pos] >= '0' && lx.src[lx.pos] <= '9' {
		lx.pos++
	}
	digits := lx.src[start:lx.pos]
	if lx.pos+1 < len(lx.src) && lx.src[lx.pos] == '.' && lx.src[lx.pos+1] >= '0' && lx.src[lx.pos+1] <= '9' {
		return inlTok{}, inlErrf(start, "floating-point literals are not supported")
	}
	long := false
	if lx.pos < len(lx.src) && (lx.src[lx.pos] == 'L' || lx.src[lx.pos] == 'l') {
		long = true
		lx.pos++
	}
	if lx.pos < len(lx.src) && inlIdentPart(lx.src[lx.pos]) {
		return inlTok{}, inlErrf(start, "malformed number %q (only decimal Integer and Long literals are supported)", lx.src[start:lx.pos+1])
	}
	if len(digits) > 1 && digits[0] == '0' {
		return inlTok{}, inlErrf(start, "integer literal %s has a leading zero, which Groovy reads as octal; quote it ('%s') for a zero-padded name", digits, digits)
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return inlTok{}, inlErrf(start, "integer literal %s is out of Long range", digits)
	}
	if v > 1<<31-1 {
		long = true
	}
	return inlTok{kind: itkInt, off: start, end: lx.pos, i: v, long: long}, nil
}

func (lx *inlLexer) str() (inlTok, error) {
	start := lx.pos
	q := lx.src[start]
	lx.pos++
	text, open, err := lx.strBody(q, start)
	if err != nil {
		return inlTok{}, err
	}
	if open >= 0 {
		return inlTok{kind: itkGStr, off: start, end: lx.pos, s: text, open: open}, nil
	}
	return inlTok{kind: itkStr, off: start, end: lx.pos, s: text}, nil
}

// strBody reads string text from lx.pos up to the closing quote q (open is
// -1, lx.pos is past the quote) or, in a double-quoted string, up to a
// nested ${...} or $->{...} segment (open is the offset of its '$', lx.pos
// is past its '{'). start is the opening quote's offset, for errors. As
// ShardingSphere rewrites every "$->{" to "${" before Groovy reads the
// text, "$->{" in a single-quoted string is the text "${".
func (lx *inlLexer) strBody(q byte, start int) (text string, open int, err error) {
	var b strings.Builder
	for {
		if lx.pos >= len(lx.src) {
			return "", 0, inlErrf(start, "unterminated string literal")
		}
		c := lx.src[lx.pos]
		switch {
		case c == q:
			lx.pos++
			return b.String(), -1, nil
		case c == '\n' || c == '\r':
			return "", 0, inlErrf(start, "unterminated string literal (line break inside quotes)")
		case c == '$' && q == '"':
			inner, ok := inlSegmentAt(lx.src, lx.pos)
			if !ok {
				return "", 0, inlErrf(lx.pos, "'$' inside a double-quoted string must start ${...} (Groovy reads $name as a variable); escape a literal dollar as \\$ or use single quotes")
			}
			open, lx.pos = lx.pos, inner
			return b.String(), open, nil
		case c == '$' && strings.HasPrefix(lx.src[lx.pos:], "$->{"):
			b.WriteString("${")
			lx.pos += 4
		case c == '\\':
			if err := lx.escape(&b); err != nil {
				return "", 0, err
			}
		default:
			b.WriteByte(c)
			lx.pos++
		}
	}
}

func (lx *inlLexer) escape(b *strings.Builder) error {
	at := lx.pos
	if at+1 >= len(lx.src) {
		return inlErrf(at, "unterminated escape sequence")
	}
	c := lx.src[at+1]
	lx.pos += 2
	switch c {
	case 'b':
		b.WriteByte('\b')
	case 't':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case '"', '\'', '\\':
		b.WriteByte(c)
	case '$':
		b.WriteByte(c)
		if strings.HasPrefix(lx.src[lx.pos:], "->{") { // "\$->{" was rewritten to "\${"
			b.WriteByte('{')
			lx.pos += 3
		}
	case 'u':
		r, err := lx.hex4(at)
		if err != nil {
			return err
		}
		if r >= 0xD800 && r <= 0xDBFF { // high surrogate: a low one must follow
			if !strings.HasPrefix(lx.src[lx.pos:], `\u`) {
				return inlErrf(at, "lone UTF-16 surrogate in \\u escape")
			}
			at2 := lx.pos
			lx.pos += 2
			lo, err := lx.hex4(at2)
			if err != nil {
				return err
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return inlErrf(at2, "lone UTF-16 surrogate in \\u escape")
			}
			r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
		} else if r >= 0xDC00 && r <= 0xDFFF {
			return inlErrf(at, "lone UTF-16 surrogate in \\u escape")
		}
		b.WriteRune(r)
	default:
		return inlErrf(at, "unsupported escape sequence \\%c", c)
	}
	return nil
}

// hex4 reads the four hex digits of a \u escape starting at lx.pos.
func (lx *inlLexer) hex4(at int) (rune, error) {
	if lx.pos+4 > len(lx.src) {
		return 0, inlErrf(at, "malformed \\u escape")
	}
	v, err := strconv.ParseUint(lx.src[lx.pos:lx.pos+4], 16, 16)
	if err != nil {
		return 0, inlErrf(at, "malformed \\u escape")
	}
	lx.pos += 4
	return rune(v), nil
}

// ---------------------------------------------------------------------------
// GString scanning, shared by both roles.

// javaTrimBounds is the part of s that Java's String.trim keeps, [lo, hi).
func javaTrimBounds(s string) (lo, hi int) {
	lo, hi = 0, len(s)
	for lo < hi && s[lo] <= ' ' {
		lo++
	}
	for hi > lo && s[hi-1] <= ' ' {
		hi--
	}
	return lo, hi
}

// inlineType splits an optional "<TYPE>" prefix off expr, as ShardingSphere's
// InlineExpressionParserFactory does: an expression starting with '<' names
// the type up to its first '>' (TypedSPILoader matches it ignoring case).
// It returns the upper-cased type and the offset where the expression proper
// starts (0: no prefix, the default GROOVY).
func inlineType(expr string) (typ string, start int) {
	if !strings.HasPrefix(expr, "<") {
		return "", 0
	}
	j := strings.IndexByte(expr, '>')
	if j < 0 {
		return "", 0
	}
	return strings.ToUpper(expr[1:j]), j + 1
}

// inlDynamic reports whether s has a segment, as ShardingSphere's
// isDynamicExpression: text without one is taken as it is, never read by
// Groovy.
func inlDynamic(s string) bool {
	return strings.Contains(s, "${") || strings.Contains(s, "$->{")
}

// inlSegmentAt reports whether a segment opener starts at src[i] (which is
// '$') and returns the offset just after its '{'.
func inlSegmentAt(src string, i int) (int, bool) {
	if strings.HasPrefix(src[i:], "${") {
		return i + 2, true
	}
	if strings.HasPrefix(src[i:], "$->{") {
		return i + 4, true
	}
	return 0, false
}

func inlBadDollar(off int) *inlineError {
	return inlErrf(off, "'$' must start ${...} or $->{...} (write literal text without '$')")
}

// ---------------------------------------------------------------------------
// compileInline: algorithm expressions

// gtype is the Groovy type of an intermediate value.
type gtype uint8

const (
	gBad    gtype = iota // statically known to fail (e.g. String in arithmetic)
	gInt                 // java.lang.Integer: 32-bit, wrapping
	gLong                // java.lang.Long: 64-bit, wrapping
	gString              // java.lang.String
	gNull                // null: only a whole segment value
	gList                // a list or range of a node list segment (inlNode.list)
)

func (t gtype) String() string {
	switch t {
	case gInt:
		return "Integer"
	case gLong:
		return "Long"
	case gString:
		return "String"
	case gNull:
		return "null"
	case gList:
		return "list"
	}
	return "invalid"
}

// gval is a Groovy value during evaluation.
type gval struct {
	t gtype
	i int64 // gInt (in int32 range) and gLong
	s string
}

func (v gval) str() string {
	switch v.t {
	case gString:
		return v.s
	case gNull:
		return "null" // as a GString writes it
	}
	return strconv.FormatInt(v.i, 10)
}

type inlOp uint8

const (
	iopLit inlOp = iota + 1
	iopCol
	iopNeg
	iopPos
	iopAdd
	iopSub
	iopMul
	iopRem
	iopIntdiv
	iopAbs
	iopHash
	iopToString
	iopFloorDiv     // Math.floorDiv
	iopFloorMod     // Math.floorMod
	iopLongValue    // Number.longValue
	iopIntValue     // Number.intValue
	iopIntegerOf    // Integer.valueOf
	iopIntegerParse // Integer.parseInt
	iopLongOf       // Long.valueOf
	iopLongParse    // Long.parseLong
)

var iopNames = [...]string{
	iopNeg: "unary -", iopPos: "unary +", iopAdd: "+", iopSub: "-", iopMul: "*", iopRem: "%",
	iopIntdiv: "intdiv", iopAbs: "abs", iopHash: "hashCode", iopToString: "toString",
	iopFloorDiv: "Math.floorDiv", iopFloorMod: "Math.floorMod", iopLongValue: "longValue", iopIntValue: "intValue",
	iopIntegerOf: "Integer.valueOf", iopIntegerParse: "Integer.parseInt", iopLongOf: "Long.valueOf", iopLongParse: "Long.parseLong",
}

// inlNode is the parsed form of an expression inside ${...}; subtrees
// without columns are folded to opLit while parsing.
type inlNode struct {
	op   inlOp
	off  int      // byte offset, for errors
	lit  gval     // opLit
	col  int      // opCol: index into inlineExpr.cols
	a, b *inlNode // operands
	st   gtype    // static type, taking every column to be a Long
	cols int      // number of column references below (0: constant)
	list []string // st gList: the values' strings, in order
	// gstr marks a GString (a double-quoted string with segments): its
	// hashCode is not String.hashCode, so it is refused.
	gstr bool
	// closure marks a zero-parameter closure ({-> e} or ${-> e}), which a
	// GString calls when it is written; only a whole segment may be one.
	closure bool
}

// inlineExpr is a compiled algorithm expression.
type inlineExpr struct {
	src   string
	cols  []string // distinct lower-case column names, first-use order
	parts []inlPart

	// the single-integer-column fast path, see intTemplate
	fast           bool
	prefix, suffix string
	fastFn         func(int64) (int64, error)
	modForm        bool // the fast leaf is bounded by a remainder: probing enumerates it
	// strFn is the fast path for a String value, when the column appears
	// only as x.hashCode(): prefix + decimal(strFn(s)) + suffix.
	strFn func(string) (int64, error)
}

// inlPart is literal text (fn == nil) or one ${...} segment.
type inlPart struct {
	lit string
	fn  inlEvalFn
	n   *inlNode
}

// inlEvalFn evaluates a node; column k reads vals[k], or vals[idx[k]] when
// idx is not nil.
type inlEvalFn func(vals []value, idx []int) (gval, error)

// compileInline compiles an algorithm-expression (a GString of literal text
// and ${...} segments) once; see the top of this file for the supported
// Groovy subset.
func compileInline(expr string) (*inlineExpr, error) {
	// INLINE, COMPLEX_INLINE and HINT_INLINE trim the expression
	// (String.trim) before anything else reads it.
	lo, hi := javaTrimBounds(expr)
	typ, start := inlineType(expr[lo:hi])
	if start > 0 && typ != "GROOVY" && typ != "HOTSPOT" {
		return nil, inlErrf(lo, "inline expression type <%s> cannot be an algorithm expression (supported: <GROOVY>, and 5.4.0's <HOTSPOT>)", expr[lo+1:lo+start-1])
	}
	start += lo
	if start >= hi {
		return nil, inlErrf(start, "empty expression")
	}
	// ShardingSphere evaluates "{it -> \"<expression>\"}": the text
	// around the segments is the body of a Groovy string literal. Text
	// without segments is used as it is.
	dynamic := inlDynamic(expr[start:hi]) || typ == "HOTSPOT" // HOTSPOT has no shortcut
	e := &inlineExpr{src: expr}
	p := &inlExprParser{e: e, colIdx: map[string]int{}}
	var lit strings.Builder
	i := start
	for i < hi {
		c := expr[i]
		if c != '$' {
			if dynamic {
				if err := inlGStringText(expr, i); err != nil {
					return nil, err
				}
			}
			lit.WriteByte(c)
			i++
			continue
		}
		inner, ok := inlSegmentAt(expr, i)
		if !ok {
			return nil, inlBadDollar(i)
		}
		if lit.Len() > 0 {
			e.parts = append(e.parts, inlPart{lit: lit.String()})
			lit.Reset()
		}
		n, end, err := p.segment(i, inner)
		if err != nil {
			return nil, err
		}
		n = inlUnwrap(n)
		if n.cols == 0 {
			e.parts = append(e.parts, inlPart{lit: n.lit.str()})
		} else {
			e.parts = append(e.parts, inlPart{fn: inlCompileEval(n), n: n})
		}
		i = end
	}
	if lit.Len() > 0 {
		e.parts = append(e.parts, inlPart{lit: lit.String()})
	}
	e.parts = inlMergeLits(e.parts)
	e.compileFast()
	return e, nil
}

// inlGStringText refuses, in the text around segments, what Groovy would
// read as string syntax rather than text: a double quote (it ends the
// string), a backslash (an escape) and a line break (not allowed in a
// one-line string).
func inlGStringText(expr string, i int) error {
	switch expr[i] {
	case '"', '\\', '\n', '\r':
		return inlErrf(i, "%q in the text of an expression with ${...} is Groovy string syntax (ShardingSphere reads the text as a string literal); it is not supported", expr[i])
	}
	return nil
}

func inlMergeLits(parts []inlPart) []inlPart {
	out := parts[:0]
	for _, p := range parts {
		if p.fn == nil && len(out) > 0 && out[len(out)-1].fn == nil {
			out[len(out)-1].lit += p.lit
			continue
		}
		out = append(out, p)
	}
	return out
}

// columns returns the distinct columns the expression reads, lower case,
// in the order of first use; eval takes its values in this order.
func (e *inlineExpr) columns() []string { return e.cols }

// String returns the expression as written.
func (e *inlineExpr) String() string { return e.src }

// eval builds the target name for vals, given in columns() order.
func (e *inlineExpr) eval(vals []value) (string, error) { return e.evalMapped(vals, nil) }

// evalMapped is eval with column k read from vals[idx[k]] (idx nil: vals[k]).
func (e *inlineExpr) evalMapped(vals []value, idx []int) (string, error) {
	need := len(e.cols)
	if idx != nil {
		if len(idx) != need {
			return "", &inlineError{Msg: fmt.Sprintf("expression reads %d columns, given %d indexes", need, len(idx))}
		}
		for _, k := range idx {
			if k < 0 || k >= len(vals) {
				return "", &inlineError{Msg: fmt.Sprintf("column index %d out of range for %d values", k, len(vals))}
			}
		}
	} else if len(vals) != need {
		return "", &inlineError{Msg: fmt.Sprintf("expression reads %d columns %v, given %d values", need, e.cols, len(vals))}
	}
	if len(e.parts) == 1 {
		p := e.parts[0]
		if p.fn == nil {
			return p.lit, nil
		}
		v, err := p.fn(vals, idx)
		if err != nil {
			return "", err
		}
		return v.str(), nil
	}
	var b strings.Builder
	for _, p := range e.parts {
		if p.fn == nil {
			b.WriteString(p.lit)
			continue
		}
		v, err := p.fn(vals, idx)
		if err != nil {
			return "", err
		}
		if v.t == gString {
			b.WriteString(v.s)
		} else {
			var buf [20]byte
			b.Write(strconv.AppendInt(buf[:0], v.i, 10))
		}
	}
	return b.String(), nil
}

// intTemplate reports whether the expression is literal prefix + one
// integer-valued sub-expression of its single column + literal suffix, and
// if so returns them: for an integer column value x the target name is
// prefix + decimal(f(x)) + suffix. f does not allocate.
func (e *inlineExpr) intTemplate() (prefix, suffix string, f func(int64) (int64, error), ok bool) {
	if !e.fast {
		return "", "", nil, false
	}
	return e.prefix, e.suffix, e.fastFn, true
}

// intTargetIndex maps n to the index of target prefix+decimal(n)+suffix,
// for every target of that shape whose middle is a canonical decimal
// integer (no sign but '-', no leading zero). The first of duplicate
// names wins.
func intTargetIndex(prefix, suffix string, targets []string) map[int64]int {
	idx := make(map[int64]int, len(targets))
	for i, t := range targets {
		if len(t) < len(prefix)+len(suffix) || !strings.HasPrefix(t, prefix) || !strings.HasSuffix(t, suffix) {
			continue
		}
		mid := t[len(prefix) : len(t)-len(suffix)]
		n, err := strconv.ParseInt(mid, 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != mid {
			continue
		}
		if _, dup := idx[n]; !dup {
			idx[n] = i
		}
	}
	return idx
}

// compileFast sets up the intTemplate path when the expression is, taking
// its one column to be a Long, constant text around exactly one
// integer-valued sub-expression of that column. String concatenation with
// '+' inside a segment ('t_' + (id % 4)) is flattened into the text.
func (e *inlineExpr) compileFast() {
	if len(e.cols) != 1 {
		return
	}
	var (
		pre, suf strings.Builder
		leaf     *inlNode
	)
	add := func(s string) {
		if leaf == nil {
			pre.WriteString(s)
		} else {
			suf.WriteString(s)
		}
	}
	var walk func(n *inlNode) bool
	walk = func(n *inlNode) bool {
		switch {
		case n.cols == 0:
			add(n.lit.str())
			return true
		case n.op == iopAdd && n.st == gString:
			return walk(n.a) && walk(n.b)
		case n.op == iopToString && (n.a.st == gInt || n.a.st == gLong):
			return walk(n.a) // a Long's toString is its decimal digits
		case leaf != nil || (n.st != gInt && n.st != gLong):
			return false
		}
		leaf = n
		return true
	}
	for _, p := range e.parts {
		if p.fn == nil {
			add(p.lit)
			continue
		}
		if !walk(p.n) {
			return
		}
	}
	if leaf == nil {
		return
	}
	f, ok := inlCompileInt(leaf)
	if !ok {
		return
	}
	e.fast, e.prefix, e.suffix, e.fastFn = true, pre.String(), suf.String(), f
	e.modForm = inlModForm(leaf)
	// The same leaf with a String value: the concatenations around it stay
	// concatenations (a static String type does not depend on the column).
	e.strFn, _ = inlCompileStr(leaf)
}

// inlModForm reports whether n is (after peeling constant offsets, factors,
// constant intdivs, abs and negation) a remainder by a constant: its values
// are bounded, and probing a range of inputs enumerates its targets.
func inlModForm(n *inlNode) bool {
	for {
		switch n.op {
		case iopRem:
			return n.b.cols == 0
		case iopAdd, iopSub, iopMul:
			switch {
			case n.a.cols == 0:
				n = n.b
			case n.b.cols == 0:
				n = n.a
			default:
				return false
			}
		case iopIntdiv:
			if n.b.cols != 0 {
				return false
			}
			n = n.a
		case iopAbs, iopNeg, iopPos:
			n = n.a
		default:
			return false
		}
	}
}

// ---------------------------------------------------------------------------
// Parser for algorithm expressions

type inlExprParser struct {
	e      *inlineExpr
	colIdx map[string]int
	lx     *inlLexer
	tok    inlTok
	depth  int
	// nodeList parses a node list segment: constants only, plus lists
	// and ranges; otherwise identifiers are sharding columns.
	nodeList bool
}

func (p *inlExprParser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// segment parses the segment opened at open (its '$') whose inside starts
// at inner; it returns the value (a closure unwrapped by the caller) and
// the offset after its '}'.
func (p *inlExprParser) segment(open, inner int) (*inlNode, int, error) {
	p.lx = &inlLexer{src: p.e.src, pos: inner, open: open}
	p.depth = 0
	n, err := p.segmentValue(open)
	if err != nil {
		return nil, 0, err
	}
	return n, p.tok.end, nil
}

// segmentValue parses the inside of a segment whose '{' the lexer has just
// passed, up to its '}' (p.tok is then that '}'). "${-> e}" is Groovy's
// lazy form: a closure the GString calls when written.
func (p *inlExprParser) segmentValue(open int) (*inlNode, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == itkEnd {
		return nil, inlErrf(open, "empty %s}", inlOpener(p.lx.src, open))
	}
	lazy := p.tok.kind == itkArrow
	if lazy {
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	n, err := p.top()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != itkEnd {
		if p.nodeList {
			return nil, inlErrf(p.tok.off, "unexpected %s in %s...}: expected '}' (a segment holds a range a..b, a list [a, b] or a value)", p.tok.kind, inlOpener(p.lx.src, open))
		}
		return nil, inlErrf(p.tok.off, "unexpected %s: expected an operator or '}'", p.tok.kind)
	}
	if lazy {
		n = inlMarkClosure(n)
	}
	return n, nil
}

// inlMarkClosure returns n marked as a zero-parameter closure's body.
func inlMarkClosure(n *inlNode) *inlNode {
	c := *n
	c.closure = true
	return &c
}

// inlUnwrap returns the value a GString writes for n: a closure's result.
func inlUnwrap(n *inlNode) *inlNode {
	if !n.closure {
		return n
	}
	c := *n
	c.closure = false
	return &c
}

// top parses an expression; in a node list also a range lo..hi or lo..<hi
// (Groovy's '..' binds more loosely than + - * %).
func (p *inlExprParser) top() (*inlNode, error) {
	lo, err := p.expr()
	if err != nil || !p.nodeList || p.tok.kind != itkRange && p.tok.kind != itkRangeExcl {
		return lo, err
	}
	rt := p.tok
	if err := p.advance(); err != nil {
		return nil, err
	}
	hi, err := p.expr()
	if err != nil {
		return nil, err
	}
	return inlRangeNode(lo, hi, rt)
}

func (p *inlExprParser) enter() error {
	if p.depth++; p.depth > maxInlineDepth {
		return inlErrf(p.tok.off, "expression nested too deeply")
	}
	return nil
}

func (p *inlExprParser) expr() (*inlNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	left, err := p.term()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == itkPlus || p.tok.kind == itkMinus {
		op, off := iopAdd, p.tok.off
		if p.tok.kind == itkMinus {
			op = iopSub
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.term()
		if err != nil {
			return nil, err
		}
		if left, err = inlBinary(op, off, left, right); err != nil {
			return nil, err
		}
	}
	return left, nil
}

func (p *inlExprParser) term() (*inlNode, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		var op inlOp
		switch p.tok.kind {
		case itkStar:
			op = iopMul
		case itkPercent:
			op = iopRem
		case itkSlash:
			return nil, inlErrf(p.tok.off, "'/' on integers yields a BigDecimal in Groovy; use x.intdiv(n) for integer division")
		default:
			return left, nil
		}
		off := p.tok.off
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.unary()
		if err != nil {
			return nil, err
		}
		if left, err = inlBinary(op, off, left, right); err != nil {
			return nil, err
		}
	}
}

func (p *inlExprParser) unary() (*inlNode, error) {
	if p.tok.kind != itkMinus && p.tok.kind != itkPlus {
		return p.postfix()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	op, off := iopNeg, p.tok.off
	if p.tok.kind == itkPlus {
		op = iopPos
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	return inlUnary(op, off, x)
}

func (p *inlExprParser) postfix() (*inlNode, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == itkDot {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != itkIdent {
			return nil, inlErrf(p.tok.off, "expected a method name after '.', found %s", p.tok.kind)
		}
		name, off := p.tok.s, p.tok.off
		if err := p.advance(); err != nil {
			return nil, err
		}
		args, err := p.args(name, off)
		if err != nil {
			return nil, err
		}
		switch name {
		case "intdiv":
			if len(args) != 1 {
				return nil, inlErrf(off, "intdiv takes 1 argument, given %d", len(args))
			}
			x, err = inlBinary(iopIntdiv, off, x, args[0])
		case "hashCode", "abs", "toString", "longValue", "intValue":
			if len(args) != 0 {
				return nil, inlErrf(off, "%s takes no arguments, given %d", name, len(args))
			}
			op := map[string]inlOp{"hashCode": iopHash, "abs": iopAbs, "toString": iopToString,
				"longValue": iopLongValue, "intValue": iopIntValue}[name]
			x, err = inlUnary(op, off, x)
		default:
			return nil, inlErrf(off, "unsupported method %q (supported: intdiv, hashCode, abs, toString, longValue, intValue)", name)
		}
		if err != nil {
			return nil, err
		}
	}
	return x, nil
}

// args parses "(a, b, ...)" after a method name.
func (p *inlExprParser) args(name string, off int) ([]*inlNode, error) {
	if p.tok.kind != itkLParen {
		return nil, inlErrf(off, "%s must be called with parentheses", name)
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	var args []*inlNode
	for p.tok.kind != itkRParen {
		a, err := p.expr()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		switch p.tok.kind {
		case itkComma:
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind == itkRParen {
				return nil, inlErrf(p.tok.off, "expected an argument after ','")
			}
		case itkRParen:
		default:
			return nil, inlErrf(p.tok.off, "expected ',' or ')', found %s", p.tok.kind)
		}
	}
	return args, p.advance()
}

var groovyKeywords = map[string]bool{
	"true": true, "false": true, "new": true, "def": true, "this": true,
	"class": true, "it": true, "in": true, "as": true, "instanceof": true, "return": true,
	"if": true, "else": true, "super": true,
}

func (p *inlExprParser) primary() (*inlNode, error) {
	t := p.tok
	switch t.kind {
	case itkInt:
		typ := gInt
		if t.long {
			typ = gLong
		}
		return inlLit(t.off, gval{t: typ, i: t.i}), p.advance()
	case itkStr:
		return inlLit(t.off, gval{t: gString, s: t.s}), p.advance()
	case itkGStr:
		return p.gstring(t)
	case itkLBrace:
		return p.closureLit()
	case itkLParen:
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.top()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != itkRParen {
			return nil, inlErrf(p.tok.off, "expected ')', found %s", p.tok.kind)
		}
		return x, p.advance()
	case itkIdent:
		if err := p.advance(); err != nil {
			return nil, err
		}
		if t.s == "Math" && p.tok.kind == itkDot {
			return p.mathCall()
		}
		if (t.s == "Integer" || t.s == "Long") && p.tok.kind == itkDot {
			return p.boxCall(t.s)
		}
		if t.s == "null" {
			return inlLit(t.off, gval{t: gNull}), nil
		}
		if p.nodeList {
			return nil, inlErrf(t.off, "unexpected identifier %q: a node list segment holds literals only (quote names: '%s')", t.s, t.s)
		}
		if groovyKeywords[t.s] || t.s == "Math" {
			return nil, inlErrf(t.off, "%q is not supported here (identifiers are sharding columns)", t.s)
		}
		name := strings.ToLower(t.s)
		k, ok := p.colIdx[name]
		if !ok {
			k = len(p.e.cols)
			p.colIdx[name] = k
			p.e.cols = append(p.e.cols, name)
		}
		return &inlNode{op: iopCol, off: t.off, col: k, st: gLong, cols: 1}, nil
	case itkRange, itkRangeExcl:
		return nil, inlErrf(t.off, "ranges are not allowed in an algorithm expression")
	case itkLBrack:
		if p.nodeList {
			return p.list()
		}
		return nil, inlErrf(t.off, "lists are not allowed in an algorithm expression")
	case itkEnd:
		return nil, inlErrf(t.off, "expression ends early: expected a value before '}'")
	}
	return nil, inlErrf(t.off, "unexpected %s: expected a value", t.kind)
}

// gstring parses a double-quoted string with segments ("new${1+2}"), t
// being its text up to the first one, into the concatenation of its texts
// and its values' strings, as the GString's toString builds it.
func (p *inlExprParser) gstring(t inlTok) (*inlNode, error) {
	acc := inlLit(t.off, gval{t: gString, s: t.s})
	saved := p.lx.open
	defer func() { p.lx.open = saved }()
	for open := t.open; open >= 0; {
		p.lx.open = open
		seg, err := p.segmentValue(open)
		if err != nil {
			return nil, err
		}
		seg = inlUnwrap(seg)
		var part *inlNode
		switch seg.st {
		case gList:
			return nil, inlErrf(seg.off, "a list or range inside a nested string is not supported")
		case gNull:
			part = inlLit(seg.off, gval{t: gString, s: "null"})
		default:
			if part, err = inlUnary(iopToString, seg.off, seg); err != nil {
				return nil, err
			}
		}
		if acc, err = inlBinary(iopAdd, seg.off, acc, part); err != nil {
			return nil, err
		}
		var text string
		if text, open, err = p.lx.strBody('"', t.off); err != nil {
			return nil, err
		}
		if text != "" {
			if acc, err = inlBinary(iopAdd, seg.off, acc, inlLit(seg.off, gval{t: gString, s: text})); err != nil {
				return nil, err
			}
		}
	}
	g := *acc
	g.gstr = true
	return &g, p.advance()
}

// closureLit parses "{-> e}" (p.tok is the '{'): a closure without
// parameters. One with parameters, or Groovy's implicit "it", is refused: a
// GString hands such a closure its Writer instead of calling it for a value.
func (p *inlExprParser) closureLit() (*inlNode, error) {
	open := p.tok.off
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind != itkArrow {
		return nil, inlErrf(open, "only a closure without parameters, {-> ...}, is supported")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	body, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != itkEnd {
		return nil, inlErrf(p.tok.off, "unexpected %s: expected an operator or the closure's '}'", p.tok.kind)
	}
	return inlMarkClosure(body), p.advance()
}

// mathCall parses ".abs(x)", ".floorDiv(x, y)" or ".floorMod(x, y)" after
// "Math".
func (p *inlExprParser) mathCall() (*inlNode, error) {
	if err := p.advance(); err != nil { // the '.'
		return nil, err
	}
	if p.tok.kind != itkIdent {
		return nil, inlErrf(p.tok.off, "expected a method name after 'Math.', found %s", p.tok.kind)
	}
	name, off := p.tok.s, p.tok.off
	op, ok := map[string]inlOp{"abs": iopAbs, "floorDiv": iopFloorDiv, "floorMod": iopFloorMod}[name]
	if !ok {
		return nil, inlErrf(off, "unsupported method Math.%s (supported: Math.abs, Math.floorDiv, Math.floorMod)", name)
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	args, err := p.args("Math."+name, off)
	if err != nil {
		return nil, err
	}
	if op == iopAbs {
		if len(args) != 1 {
			return nil, inlErrf(off, "Math.abs takes 1 argument, given %d", len(args))
		}
		return inlUnary(iopAbs, off, args[0])
	}
	if len(args) != 2 {
		return nil, inlErrf(off, "Math.%s takes 2 arguments, given %d", name, len(args))
	}
	return inlBinary(op, off, args[0], args[1])
}

// boxCall parses ".valueOf(x)" or ".parseInt(x)" after "Integer", and
// ".valueOf(x)" or ".parseLong(x)" after "Long".
func (p *inlExprParser) boxCall(class string) (*inlNode, error) {
	if err := p.advance(); err != nil { // the '.'
		return nil, err
	}
	if p.tok.kind != itkIdent {
		return nil, inlErrf(p.tok.off, "expected a method name after '%s.', found %s", class, p.tok.kind)
	}
	name, off := p.tok.s, p.tok.off
	op, ok := map[string]inlOp{"Integer.valueOf": iopIntegerOf, "Integer.parseInt": iopIntegerParse,
		"Long.valueOf": iopLongOf, "Long.parseLong": iopLongParse}[class+"."+name]
	if !ok {
		return nil, inlErrf(off, "unsupported method %s.%s (supported: Integer.valueOf, Integer.parseInt, Long.valueOf, Long.parseLong)", class, name)
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	args, err := p.args(class+"."+name, off)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, inlErrf(off, "%s.%s takes 1 argument here, given %d", class, name, len(args))
	}
	return inlUnary(op, off, args[0])
}

func inlLit(off int, v gval) *inlNode { return &inlNode{op: iopLit, off: off, lit: v, st: v.t} }

// inlBinary builds a binary node, checking what can be checked statically
// and folding constants.
func inlBinary(op inlOp, off int, a, b *inlNode) (*inlNode, error) {
	if err := inlOperand(op, off, a); err != nil {
		return nil, err
	}
	if err := inlOperand(op, off, b); err != nil {
		return nil, err
	}
	n := &inlNode{op: op, off: off, a: a, b: b, cols: a.cols + b.cols, gstr: op == iopAdd && (a.gstr || b.gstr)}
	n.st = gBinType(op, a.st, b.st)
	// A static String type is certain whatever the columns hold at run
	// time (a literal, toString(), or a concatenation), so this is exact.
	if op != iopAdd && (a.st == gString || b.st == gString) {
		return nil, inlErrf(off, "operator %s is not supported on a String", iopNames[op])
	}
	if op == iopFloorMod && n.st != gBad {
		n.st = b.st
	}
	if (op == iopRem || op == iopIntdiv || op == iopFloorDiv || op == iopFloorMod) && b.cols == 0 && b.st != gString && b.lit.i == 0 {
		return nil, inlErrf(off, "division by zero")
	}
	return inlFold(n)
}

func inlUnary(op inlOp, off int, a *inlNode) (*inlNode, error) {
	if err := inlOperand(op, off, a); err != nil {
		return nil, err
	}
	if op == iopHash && a.gstr {
		return nil, inlErrf(off, "hashCode of a GString (a double-quoted string with ${...}) is not String.hashCode; call .toString() first")
	}
	n := &inlNode{op: op, off: off, a: a, cols: a.cols}
	switch op {
	case iopHash:
		n.st = gInt
		if a.st == gBad {
			n.st = gBad
		}
	case iopToString:
		n.st = gString
		if a.st == gBad {
			n.st = gBad
		}
	case iopIntegerOf, iopIntegerParse, iopLongOf, iopLongParse:
		// The argument's type is known at run time only (a column may
		// hold a String or a Long); gUnaryOp checks it there.
		n.st = gInt
		if op == iopLongOf || op == iopLongParse {
			n.st = gLong
		}
	case iopLongValue, iopIntValue:
		if a.st == gString {
			return nil, inlErrf(off, "%s is not supported on a String", iopNames[op])
		}
		n.st = map[inlOp]gtype{iopLongValue: gLong, iopIntValue: gInt}[op]
		if a.st == gBad {
			n.st = gBad
		}
	default: // neg, pos, abs
		n.st = a.st
		if a.st == gString {
			return nil, inlErrf(off, "%s is not supported on a String", iopNames[op])
		}
	}
	return inlFold(n)
}

// inlOperand refuses operands Groovy would not compute as shardkey does:
// null (Groovy's NullObject has its own rules), lists and ranges, and
// closures (only a whole segment may be one).
func inlOperand(op inlOp, off int, a *inlNode) error {
	switch {
	case a.closure:
		return inlErrf(off, "%s is not supported on a closure (a closure may only be a whole ${...} value)", iopNames[op])
	case a.st == gNull:
		return inlErrf(off, "%s is not supported on null", iopNames[op])
	case a.st == gList:
		return inlErrf(off, "%s is not supported on a list or range", iopNames[op])
	}
	return nil
}

// inlFold evaluates a node without columns at compile time.
func inlFold(n *inlNode) (*inlNode, error) {
	if n.cols != 0 {
		return n, nil
	}
	v, err := inlCompileEval(n)(nil, nil)
	if err != nil {
		return nil, err
	}
	f := inlLit(n.off, v)
	f.gstr = n.gstr
	return f, nil
}

// gBinType is the static type of a binary operation.
func gBinType(op inlOp, a, b gtype) gtype {
	if a == gBad || b == gBad {
		return gBad
	}
	if a == gString || b == gString {
		if op == iopAdd {
			return gString
		}
		return gBad
	}
	if a == gLong || b == gLong {
		return gLong
	}
	return gInt
}

// ---------------------------------------------------------------------------
// Evaluation (general path): closures built once per expression.

func inlColValue(v value, off int) (gval, error) {
	switch v.kind {
	case kindInt:
		return gval{t: gLong, i: v.i}, nil
	case kindString:
		return gval{t: gString, s: v.s}, nil
	case kindBig:
		return gval{}, inlErrf(off, "value %s is beyond Long range", v.String())
	case kindFloat:
		return gval{}, inlErrf(off, "floating-point value %s is not supported in an inline expression", v.String())
	case kindTime:
		return gval{}, inlErrf(off, "time value %s is not supported in an inline expression", v.String())
	}
	return gval{}, inlErrf(off, "missing value")
}

func inlCompileEval(n *inlNode) inlEvalFn {
	switch n.op {
	case iopLit:
		v := n.lit
		return func([]value, []int) (gval, error) { return v, nil }
	case iopCol:
		k, off := n.col, n.off
		return func(vals []value, idx []int) (gval, error) {
			if idx != nil {
				return inlColValue(vals[idx[k]], off)
			}
			return inlColValue(vals[k], off)
		}
	case iopNeg, iopPos, iopAbs, iopHash, iopToString, iopLongValue, iopIntValue,
		iopIntegerOf, iopIntegerParse, iopLongOf, iopLongParse:
		fa, op, off := inlCompileEval(n.a), n.op, n.off
		return func(vals []value, idx []int) (gval, error) {
			a, err := fa(vals, idx)
			if err != nil {
				return gval{}, err
			}
			return gUnaryOp(op, off, a)
		}
	}
	fa, fb, op, off := inlCompileEval(n.a), inlCompileEval(n.b), n.op, n.off
	return func(vals []value, idx []int) (gval, error) {
		a, err := fa(vals, idx)
		if err != nil {
			return gval{}, err
		}
		b, err := fb(vals, idx)
		if err != nil {
			return gval{}, err
		}
		return gBinOp(op, off, a, b)
	}
}

// gWrap narrows an Integer result to 32 bits, as Java int arithmetic does.
func gWrap(t gtype, v int64) gval {
	if t == gInt {
		v = int64(int32(v))
	}
	return gval{t: t, i: v}
}

func gUnaryOp(op inlOp, off int, a gval) (gval, error) {
	switch op {
	case iopToString:
		return gval{t: gString, s: a.str()}, nil
	case iopHash:
		switch a.t {
		case gString:
			return gval{t: gInt, i: int64(javaStringHash(a.s))}, nil
		case gLong:
			return gval{t: gInt, i: int64(javaLongHash(a.i))}, nil
		}
		return gval{t: gInt, i: a.i}, nil
	case iopIntegerOf, iopIntegerParse, iopLongOf, iopLongParse:
		return gBoxOp(op, off, a)
	}
	if a.t == gString {
		return gval{}, inlErrf(off, "%s is not supported on a String (value %q)", iopNames[op], a.s)
	}
	switch op {
	case iopLongValue:
		return gval{t: gLong, i: a.i}, nil
	case iopIntValue:
		return gWrap(gInt, a.i), nil
	case iopNeg:
		return gWrap(a.t, -a.i), nil
	case iopAbs:
		if a.i < 0 {
			return gWrap(a.t, -a.i), nil
		}
	}
	return a, nil
}

// gBoxOp is Integer.valueOf/parseInt and Long.valueOf/parseLong: a String
// is parsed as Java's parseInt/parseLong do (optional sign, decimal digits,
// within range); valueOf also takes a number its parameter can hold
// without narrowing (Groovy does not narrow a Long to an int).
func gBoxOp(op inlOp, off int, a gval) (gval, error) {
	t, bits := gInt, 32
	if op == iopLongOf || op == iopLongParse {
		t, bits = gLong, 64
	}
	switch {
	case a.t == gString:
		v, err := javaParseInt(a.s, bits)
		if err != nil {
			return gval{}, inlErrf(off, "%s(%q): NumberFormatException", iopNames[op], a.s)
		}
		return gval{t: t, i: v}, nil
	case op == iopIntegerOf && a.t == gInt, op == iopLongOf && (a.t == gInt || a.t == gLong):
		return gval{t: t, i: a.i}, nil
	}
	return gval{}, inlErrf(off, "%s takes a String here, not the %s %s (no such Java method)", iopNames[op], a.t, a.str())
}

// javaParseInt is Integer.parseInt (bits 32) or Long.parseLong (64) for
// ASCII digits; other Unicode digits, which Java also reads, are refused.
func javaParseInt(s string, bits int) (int64, error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if digits == "" || len(s)-len(digits) > 1 {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseInt(s, 10, bits)
}

func gBinOp(op inlOp, off int, a, b gval) (gval, error) {
	if a.t == gString || b.t == gString {
		if op == iopAdd {
			return gval{t: gString, s: a.str() + b.str()}, nil
		}
		return gval{}, inlErrf(off, "operator %s is not supported on a String (values %s and %s)", iopNames[op], quoteG(a), quoteG(b))
	}
	t := gInt
	if a.t == gLong || b.t == gLong {
		t = gLong
	}
	switch op {
	case iopAdd:
		return gWrap(t, a.i+b.i), nil
	case iopSub:
		return gWrap(t, a.i-b.i), nil
	case iopMul:
		return gWrap(t, a.i*b.i), nil
	case iopRem:
		if b.i == 0 {
			return gval{}, inlErrf(off, "division by zero")
		}
		return gWrap(t, a.i%b.i), nil
	case iopIntdiv:
		if b.i == 0 {
			return gval{}, inlErrf(off, "division by zero")
		}
		return gWrap(t, a.i/b.i), nil
	case iopFloorDiv, iopFloorMod:
		if b.i == 0 {
			return gval{}, inlErrf(off, "division by zero")
		}
		q := a.i / b.i
		if (a.i%b.i != 0) && ((a.i < 0) != (b.i < 0)) {
			q-- // round toward negative infinity
		}
		if op == iopFloorDiv {
			return gWrap(t, q), nil
		}
		return gWrap(b.t, a.i-q*b.i), nil // the sign of the divisor
	}
	return gval{}, inlErrf(off, "internal error: unknown operator")
}

func quoteG(v gval) string {
	if v.t == gString {
		return strconv.Quote(v.s)
	}
	return v.str()
}

// ---------------------------------------------------------------------------
// Fast paths: the one column has a known type, so every type is static and
// the node compiles to a closure over int64 that does not allocate.

type inlIntFn = func(int64) (int64, error)

// inlCompileInt compiles an integer-typed node over the single column,
// taken to be a Long, into a function that does not allocate.
func inlCompileInt(n *inlNode) (inlIntFn, bool) {
	f, _, ok := inlCompileNum(n, func(n *inlNode) (inlIntFn, gtype, bool, bool) {
		if n.op == iopCol {
			return func(x int64) (int64, error) { return x, nil }, gLong, true, true
		}
		if n.op == iopRem && n.a.op == iopCol && n.b.cols == 0 && n.b.st != gString { // x % c
			c := n.b.lit.i
			return func(x int64) (int64, error) { return x % c, nil }, gLong, true, true
		}
		return nil, 0, false, false
	})
	return f, ok
}

// inlCompileStr compiles an integer-typed node over the single column,
// taken to be a String: the column may only appear as x.hashCode(), as in
// Math.abs(name.hashCode()) % 4.
func inlCompileStr(n *inlNode) (func(string) (int64, error), bool) {
	f, _, ok := inlCompileNum(n, func(n *inlNode) (func(string) (int64, error), gtype, bool, bool) {
		switch {
		case n.op == iopCol:
			return nil, 0, false, true // a String is not an integer
		case n.op == iopHash && n.a.op == iopCol:
			return func(s string) (int64, error) { return int64(javaStringHash(s)), nil }, gInt, true, true
		}
		return nil, 0, false, false
	})
	return f, ok
}

// inlCompileNum compiles an integer-typed node into a closure over T, the
// column's value. leaf compiles the nodes that read the column (handled
// true); it reports ok false when the node is not integer-valued. Errors
// the closures return are built here, once.
func inlCompileNum[T any](n *inlNode, leaf func(*inlNode) (func(T) (int64, error), gtype, bool, bool)) (func(T) (int64, error), gtype, bool) {
	if f, t, ok, handled := leaf(n); handled {
		return f, t, ok
	}
	switch n.op {
	case iopLit:
		if n.lit.t == gString {
			return nil, 0, false
		}
		c := n.lit.i
		return func(T) (int64, error) { return c, nil }, n.lit.t, true
	case iopNeg, iopPos, iopAbs, iopHash:
		fa, t, ok := inlCompileNum(n.a, leaf)
		if !ok {
			return nil, 0, false
		}
		f, t := inlNumUnary(n.op, fa, t)
		return f, t, true
	case iopAdd, iopSub, iopMul, iopRem, iopIntdiv:
		fa, ta, ok := inlCompileNum(n.a, leaf)
		if !ok {
			return nil, 0, false
		}
		fb, tb, ok := inlCompileNum(n.b, leaf)
		if !ok {
			return nil, 0, false
		}
		t := gInt
		if ta == gLong || tb == gLong {
			t = gLong
		}
		if n.b.cols == 0 { // constant right operand: the common shape
			return inlNumBinaryConst(n.op, fa, n.b.lit.i, t == gInt), t, true
		}
		return inlNumBinary(n, fa, fb, t == gInt), t, true
	default:
		return nil, 0, false
	}
}

// inlNumUnary applies unary op (-, +, abs, hashCode) to fa, of type t, and
// gives the result's type.
func inlNumUnary[T any](op inlOp, fa func(T) (int64, error), t gtype) (func(T) (int64, error), gtype) {
	narrow := t == gInt
	switch op {
	case iopPos:
		return fa, t
	case iopNeg:
		return func(x T) (int64, error) {
			v, err := fa(x)
			return inlNarrow(narrow, -v), err
		}, t
	case iopAbs:
		return func(x T) (int64, error) {
			v, err := fa(x)
			if v < 0 {
				v = inlNarrow(narrow, -v)
			}
			return v, err
		}, t
	}
	// iopHash
	if t == gLong {
		return func(x T) (int64, error) {
			v, err := fa(x)
			return int64(javaLongHash(v)), err
		}, gInt
	}
	return fa, gInt // Integer.hashCode is the value
}

// inlNumBinaryConst applies binary op to fa and the constant c; narrow
// wraps the result to 32 bits. A zero c for % and intdiv is refused when
// the expression compiles.
func inlNumBinaryConst[T any](op inlOp, fa func(T) (int64, error), c int64, narrow bool) func(T) (int64, error) {
	switch op {
	case iopAdd:
		return func(x T) (int64, error) {
			v, err := fa(x)
			return inlNarrow(narrow, v+c), err
		}
	case iopSub:
		return func(x T) (int64, error) {
			v, err := fa(x)
			return inlNarrow(narrow, v-c), err
		}
	case iopMul:
		return func(x T) (int64, error) {
			v, err := fa(x)
			return inlNarrow(narrow, v*c), err
		}
	case iopRem:
		return func(x T) (int64, error) {
			v, err := fa(x)
			if err != nil {
				return 0, err
			}
			return inlNarrow(narrow, v%c), nil
		}
	default: // iopIntdiv
		return func(x T) (int64, error) {
			v, err := fa(x)
			if err != nil {
				return 0, err
			}
			return inlNarrow(narrow, v/c), nil
		}
	}
}

// inlNumBinary applies n's binary operator to fa and fb; narrow wraps the
// result to 32 bits. A zero divisor is an error of the call.
func inlNumBinary[T any](n *inlNode, fa, fb func(T) (int64, error), narrow bool) func(T) (int64, error) {
	zero := &inlineError{Offset: n.off, Msg: "division by zero"}
	op := n.op
	return func(x T) (int64, error) {
		a, err := fa(x)
		if err != nil {
			return 0, err
		}
		b, err := fb(x)
		if err != nil {
			return 0, err
		}
		var r int64
		switch op {
		case iopAdd:
			r = a + b
		case iopSub:
			r = a - b
		case iopMul:
			r = a * b
		case iopRem:
			if b == 0 {
				return 0, zero
			}
			r = a % b
		case iopIntdiv:
			if b == 0 {
				return 0, zero
			}
			r = a / b
		}
		return inlNarrow(narrow, r), nil
	}
}

func inlNarrow(narrow bool, v int64) int64 {
	if narrow {
		return int64(int32(v))
	}
	return v
}
