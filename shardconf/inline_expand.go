package shardconf

// Node lists: expandInline expands actualDataNodes, actualDataSources and
// data source lists into names as ShardingSphere's
// InlineExpressionParserFactory and the splitAndEvaluate of its GROOVY,
// LITERAL and INTERVAL parsers do (read from apache/shardingsphere
// infra/expr: entry/.../InlineExpressionParserFactory.java,
// core/.../GroovyUtils.java, type/groovy/.../GroovyInlineExpressionParser.java,
// type/literal/.../LiteralInlineExpressionParser.java,
// type/interval/.../IntervalInlineExpressionParser.java):
//
//   - "<TYPE>" before the expression picks the parser; without it GROOVY.
//   - GROOVY, text without "${" or "$->{": split at commas, trimmed, empty
//     items dropped; nothing else is read.
//   - GROOVY otherwise: split at commas outside segments (GroovyUtils.split
//     counts "${"/"$->{" openers against '}'), each item trimmed; a last
//     empty item is dropped. An item without a segment is its text less one
//     leading and one trailing '"'. Any other item is the body of a Groovy
//     GString: its segments' values form a Cartesian product, the first
//     outermost; a collection (list or range) contributes its distinct
//     strings in order (LinkedHashSet), any other value its string. A null
//     value is skipped, and, as ShardingSphere pairs the remaining values
//     with the GString's texts by position, the values after it move one
//     text to the left: "a${null}b${[1,2]}c" gives a1bc and a2bc.
//   - LITERAL: split at commas, trimmed, nothing else.
//   - INTERVAL: see inline_interval.go.
//
// Refused (errors) where ShardingSphere would produce something no one
// means or fail later: an empty item in the middle of a GROOVY list (an
// empty name), a closure as a segment value (ShardingSphere writes the
// closure object's identity), null inside a list (NullPointerException),
// an empty list or range (the item yields nothing), and in a GString item
// a double quote, backslash or line break in the text (Groovy string
// syntax).

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// expandInline expands a node list expression into names, in order.
func expandInline(expr string) ([]string, error) {
	typ, start := inlineType(expr)
	if start > 0 {
		switch typ {
		case "GROOVY", "HOTSPOT":
		case "LITERAL", "PURELIST":
			return expandLiteralInline(expr, start)
		case "INTERVAL":
			return expandIntervalInline(expr, start)
		default:
			return nil, inlErrf(0, "unsupported inline expression type <%s> (supported: <GROOVY>, <LITERAL>, <INTERVAL>, and 5.4.0's <HOTSPOT>, <PURELIST>)", expr[1:start-1])
		}
	}
	if strings.TrimSpace(expr[start:]) == "" {
		return nil, inlErrf(start, "empty expression")
	}
	// 5.4.0's HOTSPOT is GROOVY without the shortcut for text without
	// segments: every item is read by Groovy as a string literal.
	hotspot := typ == "HOTSPOT"
	if !hotspot && !inlDynamic(expr[start:]) {
		return expandConstInline(expr, start)
	}
	// GroovyUtils.split reads the three characters after each '$' and
	// throws when the expression ends sooner, so a '$' there is an error
	// (a segment opener there is reported as empty or unclosed below).
	for i := max(start, len(expr)-3); i < len(expr); i++ {
		if _, opener := inlSegmentAt(expr, i); expr[i] == '$' && !opener {
			return nil, inlErrf(i, "'$' must start ${...} or $->{...} (ShardingSphere fails on a '$' this close to the end of an expression with segments)")
		}
	}
	var (
		out        []string
		totalBytes int64
	)
	for _, it := range inlSplitItems(expr, start) {
		if it.lo == it.hi {
			return nil, inlErrf(it.lo, "empty item")
		}
		item, err := parseInlineItem(expr, it.lo, it.hi, hotspot)
		if err != nil {
			return nil, err
		}
		if len(out)+int(item.count) > maxInlineNames {
			return nil, inlErrf(it.lo, "expression expands to more than %d names", maxInlineNames)
		}
		if totalBytes += item.bytes; totalBytes > maxInlineBytes {
			return nil, inlErrf(it.lo, "expression expands to more than %d bytes of names", maxInlineBytes)
		}
		out = item.expand(out)
	}
	return out, nil
}

// expandConstInline is GROOVY's path for text without segments:
// split("\\s*,\\s*"), trim, drop empty items.
func expandConstInline(expr string, start int) ([]string, error) {
	var out []string
	for pos := start; pos <= len(expr); {
		end := strings.IndexByte(expr[pos:], ',')
		if end < 0 {
			end = len(expr)
		} else {
			end += pos
		}
		if item := javaTrim(expr[pos:end]); item != "" {
			if len(out) >= maxInlineNames {
				return nil, inlErrf(pos, "expression has more than %d names", maxInlineNames)
			}
			out = append(out, item)
		}
		pos = end + 1
	}
	if len(out) == 0 {
		return nil, inlErrf(start, "empty expression")
	}
	return out, nil
}

// expandLiteralInline is ShardingSphere's LITERAL parser: a comma-separated
// list, items trimmed, nothing expanded. An empty item (ShardingSphere keeps
// it as an empty name) is an error.
func expandLiteralInline(expr string, start int) ([]string, error) {
	var out []string
	pos := start
	for {
		j := strings.IndexByte(expr[pos:], ',')
		end := len(expr)
		if j >= 0 {
			end = pos + j
		}
		item := javaTrim(expr[pos:end])
		if item == "" {
			return nil, inlErrf(pos, "empty item")
		}
		if len(out) >= maxInlineNames {
			return nil, inlErrf(pos, "expression has more than %d names", maxInlineNames)
		}
		out = append(out, item)
		if j < 0 {
			return out, nil
		}
		pos = end + 1
	}
}

// javaTrim trims as Java's String.trim does: every char <= ' '.
func javaTrim(s string) string {
	lo, hi := javaTrimBounds(s)
	return s[lo:hi]
}

// inlSpan is a part of the expression, [lo, hi).
type inlSpan struct{ lo, hi int }

// inlSplitItems splits expr[start:] at commas as GroovyUtils.split does:
// a comma splits unless more segment openers than '}' precede it (a '}'
// inside quotes counts too, as there). Each item is trimmed; the last one
// is dropped when nothing follows the last comma.
func inlSplitItems(expr string, start int) []inlSpan {
	var out []inlSpan
	add := func(lo, hi int) {
		for lo < hi && expr[lo] <= ' ' {
			lo++
		}
		for hi > lo && expr[hi-1] <= ' ' {
			hi--
		}
		out = append(out, inlSpan{lo, hi})
	}
	depth, lo := 0, start
	for i := start; i < len(expr); i++ {
		switch expr[i] {
		case ',':
			if depth == 0 {
				add(lo, i)
				lo = i + 1
			}
		case '$':
			if _, ok := inlSegmentAt(expr, i); ok {
				depth++
			}
		case '}':
			if depth > 0 {
				depth--
			}
		}
	}
	if lo < len(expr) {
		add(lo, len(expr))
	}
	return out
}

// inlItem is one item of a node list: the GString's texts and its values'
// alternatives (nil for a null value).
type inlItem struct {
	texts []string
	vals  [][]string
	count int64 // names: the product of the non-null values' lengths
	bytes int64 // total length of the names
}

// parseInlineItem reads the item expr[lo:hi]. An item without a segment is
// its text, unless strict (HOTSPOT), where Groovy reads it as a string
// literal too and so its text is checked as a GString's.
func parseInlineItem(expr string, lo, hi int, strict bool) (inlItem, error) {
	if !inlDynamic(expr[lo:hi]) {
		return parseConstItem(expr, lo, hi, strict)
	}
	it := inlItem{count: 1}
	// ShardingSphere quotes the item unless it starts or ends with '"'.
	if expr[lo] == '"' {
		lo++
	}
	if hi > lo && expr[hi-1] == '"' {
		hi--
	}
	src := expr[:hi] // a segment may not run past the item
	p := &inlExprParser{e: &inlineExpr{src: src}, colIdx: map[string]int{}, nodeList: true}
	var text strings.Builder
	for i := lo; i < hi; {
		c := src[i]
		if c != '$' {
			if err := inlGStringText(src, i); err != nil {
				return it, err
			}
			text.WriteByte(c)
			i++
			continue
		}
		inner, ok := inlSegmentAt(src, i)
		if !ok {
			return it, inlBadDollar(i)
		}
		n, end, err := p.segment(i, inner)
		if err != nil {
			return it, err
		}
		vals, err := inlSegmentValues(n)
		if err != nil {
			return it, err
		}
		it.texts = append(it.texts, text.String())
		text.Reset()
		it.vals = append(it.vals, vals)
		if vals != nil {
			if it.count *= int64(len(vals)); it.count > maxInlineNames {
				return it, inlErrf(i, "expression expands to more than %d names", maxInlineNames)
			}
		}
		i = end
	}
	it.texts = append(it.texts, text.String())
	return it, it.size(lo)
}

// parseConstItem reads an item without a segment: its text less one
// leading and one trailing '"' (ShardingSphere quotes the item, then strips
// a quote at each end).
func parseConstItem(expr string, lo, hi int, strict bool) (inlItem, error) {
	it := inlItem{count: 1}
	from := lo
	if expr[lo] == '"' {
		from++
	}
	s := strings.TrimSuffix(expr[from:hi], `"`)
	if s == "" {
		return it, inlErrf(lo, "empty item")
	}
	for i := from; strict && i < from+len(s); i++ {
		if err := inlGStringText(expr, i); err != nil {
			return it, err
		}
		if expr[i] == '$' {
			return it, inlBadDollar(i)
		}
	}
	it.texts, it.bytes = []string{s}, int64(len(s))
	return it, nil
}

// inlSegmentValues is a segment value's alternatives: nil for null, the
// distinct strings of a list or range, else the value's string.
func inlSegmentValues(n *inlNode) ([]string, error) {
	switch {
	case n.closure:
		return nil, inlErrf(n.off, "a closure as a node list value is not supported (ShardingSphere writes the closure object, not its result)")
	case n.st == gNull:
		return nil, nil
	case n.st == gList:
		seen := make(map[string]bool, len(n.list))
		out := n.list[:0:0]
		for _, v := range n.list {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		return out, nil
	}
	return []string{n.lit.str()}, nil
}

// size computes it.bytes and checks the cap.
func (it *inlItem) size(off int) error {
	var texts int64
	for _, t := range it.texts {
		texts += int64(len(t))
	}
	it.bytes = texts * it.count
	for _, v := range it.vals {
		if len(v) == 0 {
			continue
		}
		var l int64
		for _, s := range v {
			l += int64(len(s))
		}
		it.bytes += l * (it.count / int64(len(v))) // each alternative appears count/len(v) times
		if it.bytes > maxInlineBytes {
			break
		}
	}
	if it.bytes > maxInlineBytes {
		return inlErrf(off, "expression expands to more than %d bytes of names", maxInlineBytes)
	}
	return nil
}

// expand appends the item's names: for each combination of the non-null
// values (the first outermost), text i followed by value i of the
// combination, as ShardingSphere's assemblySegment pairs them.
func (it *inlItem) expand(out []string) []string {
	var sets [][]string
	for _, v := range it.vals {
		if v != nil {
			sets = append(sets, v)
		}
	}
	idx := make([]int, len(sets))
	var b strings.Builder
	for {
		b.Reset()
		for i, t := range it.texts {
			b.WriteString(t)
			if i < len(sets) {
				b.WriteString(sets[i][idx[i]])
			}
		}
		out = append(out, b.String())
		k := len(idx) - 1
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < len(sets[k]) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return out
		}
	}
}

// list parses a list literal [a, b, ...] of a node list segment.
func (p *inlExprParser) list() (*inlNode, error) {
	open := p.tok.off
	if err := p.advance(); err != nil {
		return nil, err
	}
	var out []string
	for p.tok.kind != itkRBrack {
		el, err := p.expr()
		if err != nil {
			return nil, err
		}
		switch {
		case p.tok.kind == itkRange || p.tok.kind == itkRangeExcl:
			return nil, inlErrf(p.tok.off, "a range inside a list is not supported; write the range alone or list every value")
		case el.st == gNull:
			return nil, inlErrf(el.off, "null inside a list is not supported (ShardingSphere fails on it)")
		case el.closure || el.st == gList || el.cols != 0:
			return nil, inlErrf(el.off, "a list holds numbers and strings only")
		case len(out) >= maxInlineNames:
			return nil, inlErrf(el.off, "list has more than %d elements", maxInlineNames)
		}
		out = append(out, el.lit.str())
		switch p.tok.kind {
		case itkComma:
			if err := p.advance(); err != nil {
				return nil, err
			}
		case itkRBrack:
		default:
			return nil, inlErrf(p.tok.off, "expected ',' or ']' in list, found %s", p.tok.kind)
		}
	}
	if len(out) == 0 {
		return nil, inlErrf(open, "empty list")
	}
	return &inlNode{op: iopLit, off: open, st: gList, list: out}, p.advance()
}

// inlRangeNode builds the values of lo..hi or lo..<hi (rt).
func inlRangeNode(lo, hi *inlNode, rt inlTok) (*inlNode, error) {
	for _, n := range [...]*inlNode{lo, hi} {
		if n.closure || n.cols != 0 || n.st != gInt && n.st != gLong && n.st != gString {
			return nil, inlErrf(n.off, "a range runs between numbers or single characters")
		}
	}
	vals, err := inlExpandRange(lo, hi, rt)
	if err != nil {
		return nil, err
	}
	return &inlNode{op: iopLit, off: lo.off, st: gList, list: vals}, nil
}

// inlExpandRange expands Groovy's lo..hi (inclusive) or lo..<hi (excluding
// hi); a range runs downwards when lo > hi, as Groovy's does.
func inlExpandRange(lo, hi *inlNode, rt inlTok) ([]string, error) {
	loStr, hiStr := lo.st == gString, hi.st == gString
	if loStr != hiStr {
		return nil, inlErrf(rt.off, "range mixes a string and a number")
	}
	a, b := lo.lit.i, hi.lit.i
	if loStr {
		ra, rb := inlRangeChar(lo.lit.s), inlRangeChar(hi.lit.s)
		if ra < 0 || rb < 0 {
			return nil, inlErrf(lo.off, "a string range needs single characters, as in 'a'..'z'")
		}
		a, b = int64(ra), int64(rb)
		if min(a, b) < 0xD800 && max(a, b) > 0xDFFF {
			return nil, inlErrf(lo.off, "a string range may not cross the UTF-16 surrogates U+D800..U+DFFF")
		}
	}
	excl := rt.kind == itkRangeExcl
	if excl && a == b {
		return nil, inlErrf(rt.off, "empty range")
	}
	var n uint64
	if a <= b {
		n = uint64(b) - uint64(a) + 1
	} else {
		n = uint64(a) - uint64(b) + 1
	}
	if excl {
		n--
	}
	if n > maxInlineNames || n == 0 { // n == 0: the full int64 span wrapped
		return nil, inlErrf(lo.off, "range has more than %d values", maxInlineNames)
	}
	out := make([]string, 0, n)
	step := int64(1)
	if a > b {
		step = -1
	}
	for k, v := uint64(0), a; k < n; k, v = k+1, v+step {
		if loStr {
			out = append(out, string(rune(v)))
		} else {
			out = append(out, strconv.FormatInt(v, 10))
		}
	}
	return out, nil
}

// inlRangeChar returns the single character of s usable in a Groovy string
// range (a Java char: not a surrogate, within the BMP), or -1.
func inlRangeChar(s string) rune {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || n != len(s) || r == utf8.RuneError || r > 0xFFFF {
		return -1
	}
	return r
}
