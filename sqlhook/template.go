package sqlhook

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A template is the statement's text cut at the spans a target changes:
// only identifiers the parser placed in table position and placeholders
// are holes, so string literals, comments and other identifiers are copied
// byte for byte.

// edit replaces text[start:end] with a hole.
type edit struct {
	start, end int
	seg        segment
}

// buildTemplate cuts text at the edits (which must not overlap).
func buildTemplate(text string, edits []edit) []segment {
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })
	var out []segment
	pos := 0
	for _, e := range edits {
		if e.start > pos {
			out = append(out, segment{text: text[pos:e.start]})
		}
		out = append(out, e.seg)
		pos = max(pos, e.end)
	}
	if pos < len(text) {
		out = append(out, segment{text: text[pos:]})
	}
	return out
}

// argSrc says where one output placeholder's value comes from.
type argSrc struct {
	kind srcKind
	i    int // caller argument index, or INSERT row for srcKey
}

type srcKind uint8

const (
	srcArg   srcKind = iota
	srcKey           // the generated key of row i
	srcLimit         // the merged LIMIT (limit + offset)
)

// renderSpec is what a target changes in a template.
type renderSpec struct {
	phys      []string // physical name per plan table
	rows      []int    // INSERT rows to write; nil writes all
	addKey    bool     // the INSERT gains the key column
	mergeTail bool     // merged from several targets: LIMIT becomes the merge's per-target limit and OFFSET 0, the merge edits apply
}

type rendered struct {
	sql      string
	src      []argSrc
	identity bool // src is the caller's arguments in order, nothing generated
}

// renderCache keeps the rendering of each set of physical names for
// statements whose rendering depends on nothing else.
type renderCache struct{ m sync.Map }

type dialectText struct {
	d Dialect
}

func (t dialectText) quote(b *strings.Builder, name string) {
	q := byte('"')
	if t.d == MySQL {
		q = '`'
	}
	b.WriteByte(q)
	for i := 0; i < len(name); i++ {
		if name[i] == q {
			b.WriteByte(q)
		}
		b.WriteByte(name[i])
	}
	b.WriteByte(q)
}

func (t dialectText) placeholder(b *strings.Builder, n int) {
	if t.d == PostgreSQL {
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		return
	}
	b.WriteByte('?')
}

func (p *plan) renderFor(d Dialect, spec renderSpec) *rendered {
	simple := spec.rows == nil && !spec.addKey
	var key string
	if simple {
		key = strings.Join(spec.phys, "\x00")
		if spec.mergeTail {
			key += "\x01"
		}
		if r, ok := p.render.m.Load(key); ok {
			return r.(*rendered)
		}
	}
	r := p.renderNew(d, spec)
	if simple {
		p.render.m.Store(key, r)
	}
	return r
}

func (p *plan) renderNew(d Dialect, spec renderSpec) *rendered {
	t := dialectText{d}
	var b strings.Builder
	r := &rendered{}
	param := func(s argSrc) {
		r.src = append(r.src, s)
		t.placeholder(&b, len(r.src))
	}
	var emit func(segs []segment, row int)
	emit = func(segs []segment, row int) {
		for _, s := range segs {
			switch s.hole {
			case holeNone:
				b.WriteString(s.text)
			case holeTable:
				t.quote(&b, spec.phys[s.i])
			case holeTableAs:
				t.quote(&b, spec.phys[s.i])
				b.WriteString(" AS ")
				b.WriteString(s.text)
			case holeParam:
				param(argSrc{kind: srcArg, i: s.i})
			case holeIndexName:
				t.quote(&b, p.indexName+"_"+spec.phys[s.i])
			case holeKeyCol:
				if spec.addKey {
					b.WriteString(", ")
					t.quote(&b, p.ins.keyCol)
				}
			case holeValues:
				rows := spec.rows
				if rows == nil {
					rows = make([]int, len(p.ins.items))
					for i := range rows {
						rows[i] = i
					}
				}
				for n, ri := range rows {
					if n > 0 {
						b.WriteString(", ")
					}
					b.WriteByte('(')
					for j, item := range p.ins.items[ri] {
						if j > 0 {
							b.WriteString(", ")
						}
						if j == p.ins.keyIdx && p.ins.keyNull[ri] {
							param(argSrc{kind: srcKey, i: ri})
							continue
						}
						emit(item, ri)
					}
					if spec.addKey {
						b.WriteString(", ")
						param(argSrc{kind: srcKey, i: ri})
					}
					b.WriteByte(')')
				}
			case holeMergeAdd:
				if spec.mergeTail {
					emit(s.sub, row)
				}
			case holeMergeDrop:
				if !spec.mergeTail {
					emit(s.sub, row)
				}
			case holeLimit:
				if spec.mergeTail {
					param(argSrc{kind: srcLimit})
				} else {
					emit([]segment{{text: s.text, hole: holeFromText(s), i: s.i}}, -1)
				}
			case holeOffset:
				if spec.mergeTail {
					b.WriteString("0")
				} else {
					emit([]segment{{text: s.text, hole: holeFromText(s), i: s.i}}, -1)
				}
			}
		}
	}
	emit(p.tmpl, -1)
	r.sql = b.String()
	r.identity = len(r.src) == p.nparams
	for i, s := range r.src {
		if s.kind != srcArg || s.i != i {
			r.identity = false
			break
		}
	}
	return r
}

// holeFromText: a LIMIT or OFFSET hole keeps what was written, a literal
// (i < 0) or the caller's placeholder i.
func holeFromText(s segment) holeKind {
	if s.i >= 0 {
		return holeParam
	}
	return holeNone
}
