package ir

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
type Edit struct {
	Start, End int
	Seg        Segment
}

// BuildTemplate cuts text at the edits (which must not overlap).
func BuildTemplate(text string, edits []Edit) []Segment {
	slices.SortStableFunc(edits, func(a, b Edit) int { return a.Start - b.Start })
	var out []Segment
	pos := 0
	for _, e := range edits {
		if e.Start > pos {
			out = append(out, Segment{Text: text[pos:e.Start]})
		}
		out = append(out, e.Seg)
		pos = max(pos, e.End)
	}
	if pos < len(text) {
		out = append(out, Segment{Text: text[pos:]})
	}
	return out
}

// argSrc says where one output placeholder's value comes from.
type argSrc struct {
	Kind srcKind
	I    int // caller argument index, or INSERT row for SrcKey
}

type srcKind uint8

const (
	SrcArg   srcKind = iota
	SrcKey           // the generated key of row i
	SrcLimit         // the merged LIMIT (limit + offset)
)

// RenderSpec is what a target changes in a template.
type RenderSpec struct {
	Phys      []string // physical name per plan table
	Rows      []int    // INSERT rows to write; nil writes all
	AddKey    bool     // the INSERT gains the key column
	MergeTail bool     // merged from several targets: LIMIT becomes the merge's per-target limit and OFFSET 0, the merge edits apply
}

type Rendered struct {
	SQL      string
	Src      []argSrc
	Identity bool // src is the caller's arguments in order, nothing generated
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

func (p *Plan) RenderFor(d Dialect, spec RenderSpec) *Rendered {
	simple := spec.Rows == nil && !spec.AddKey
	var key string
	if simple {
		key = strings.Join(spec.Phys, "\x00")
		if spec.MergeTail {
			key += "\x01"
		}
		if r, ok := p.render.m.Load(key); ok {
			return r.(*Rendered)
		}
	}
	r := p.renderNew(d, spec)
	if simple {
		p.render.m.Store(key, r)
	}
	return r
}

func (p *Plan) renderNew(d Dialect, spec RenderSpec) *Rendered {
	t := dialectText{d}
	var b strings.Builder
	r := &Rendered{}
	param := func(s argSrc) {
		r.Src = append(r.Src, s)
		t.placeholder(&b, len(r.Src))
	}
	var emit func(segs []Segment, row int)
	emit = func(segs []Segment, row int) {
		for _, s := range segs {
			switch s.Hole {
			case holeNone:
				b.WriteString(s.Text)
			case HoleTable:
				t.quote(&b, spec.Phys[s.I])
			case HoleTableAs:
				t.quote(&b, spec.Phys[s.I])
				b.WriteString(" AS ")
				b.WriteString(s.Text)
			case HoleParam:
				param(argSrc{Kind: SrcArg, I: s.I})
			case HoleIndexName:
				t.quote(&b, p.IndexName+"_"+spec.Phys[s.I])
			case HoleKeyCol:
				if spec.AddKey {
					b.WriteString(", ")
					t.quote(&b, p.Ins.KeyCol)
				}
			case HoleValues:
				rows := spec.Rows
				if rows == nil {
					rows = make([]int, len(p.Ins.Items))
					for i := range rows {
						rows[i] = i
					}
				}
				for n, ri := range rows {
					if n > 0 {
						b.WriteString(", ")
					}
					b.WriteByte('(')
					for j, item := range p.Ins.Items[ri] {
						if j > 0 {
							b.WriteString(", ")
						}
						if j == p.Ins.KeyIdx && p.Ins.KeyNull[ri] {
							param(argSrc{Kind: SrcKey, I: ri})
							continue
						}
						emit(item, ri)
					}
					if spec.AddKey {
						b.WriteString(", ")
						param(argSrc{Kind: SrcKey, I: ri})
					}
					b.WriteByte(')')
				}
			case holeMergeAdd:
				if spec.MergeTail {
					emit(s.sub, row)
				}
			case holeMergeDrop:
				if !spec.MergeTail {
					emit(s.sub, row)
				}
			case HoleLimit:
				if spec.MergeTail {
					param(argSrc{Kind: SrcLimit})
				} else {
					emit([]Segment{{Text: s.Text, Hole: holeFromText(s), I: s.I}}, -1)
				}
			case HoleOffset:
				if spec.MergeTail {
					b.WriteString("0")
				} else {
					emit([]Segment{{Text: s.Text, Hole: holeFromText(s), I: s.I}}, -1)
				}
			}
		}
	}
	emit(p.Tmpl, -1)
	r.SQL = b.String()
	r.Identity = len(r.Src) == p.NParams
	for i, s := range r.Src {
		if s.Kind != SrcArg || s.I != i {
			r.Identity = false
			break
		}
	}
	return r
}

// holeFromText: a LIMIT or OFFSET hole keeps what was written, a literal
// (i < 0) or the caller's placeholder i.
func holeFromText(s Segment) HoleKind {
	if s.I >= 0 {
		return HoleParam
	}
	return holeNone
}
