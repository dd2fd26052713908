package merge

import (
	"cmp"
	"database/sql/driver"
	"fmt"
	"io"
)

// concat returns the shards' rows one shard after another.
type concat struct {
	r   *Rows
	cur int
	buf []driver.Value
}

func (c *concat) next() ([]driver.Value, int, error) {
	for c.cur < len(c.r.shards) {
		ok, err := c.r.pull(c.cur, c.buf)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			return c.buf, c.cur, nil
		}
		c.cur++
	}
	return nil, 0, io.EOF
}

// heapMerge is a k-way merge of shards whose rows arrive sorted: a binary
// heap of the shards by their current row. A shard is read again only when
// the caller asks for the row after the one it returned, so a row handed
// out stays valid until then (drivers reuse their buffers on Next) and no
// row is copied. Rows that compare equal come in shard order.
type heapMerge struct {
	r       *Rows
	bufs    [][]driver.Value
	k0      []int64 // each shard's first sort key, when k0ok: an int64
	k0ok    []bool
	prev    [][]driver.Value // each shard's previous row's sort keys
	prevBuf [][][]byte       // copies of prev's []byte keys (drivers reuse theirs)
	prevOK  []bool
	h       []int // shard indexes; h[0] holds the least row
	started bool
	top     bool  // h[0]'s row was returned: read its shard before the next row
	err     error // the first comparison error
}

func newHeapMerge(r *Rows) *heapMerge {
	m := &heapMerge{r: r, bufs: make([][]driver.Value, len(r.shards)), h: make([]int, 0, len(r.shards)),
		k0: make([]int64, len(r.shards)), k0ok: make([]bool, len(r.shards))}
	n, nk := len(r.names), len(r.p.OrderBy)
	flat := make([]driver.Value, len(r.shards)*(n+nk)) // one allocation for all
	m.prev, m.prevBuf, m.prevOK = make([][]driver.Value, len(r.shards)), make([][][]byte, len(r.shards)), make([]bool, len(r.shards))
	bufs := make([][]byte, len(r.shards)*nk)
	for s := range m.bufs {
		m.bufs[s] = flat[s*n : (s+1)*n : (s+1)*n]
		m.prev[s] = flat[len(r.shards)*n+s*nk : len(r.shards)*n+(s+1)*nk : len(r.shards)*n+(s+1)*nk]
		m.prevBuf[s] = bufs[s*nk : (s+1)*nk : (s+1)*nk]
	}
	return m
}

func (m *heapMerge) next() ([]driver.Value, int, error) {
	if err := m.advance(); err != nil {
		return nil, 0, err
	}
	if m.err != nil {
		return nil, 0, m.err
	}
	if len(m.h) == 0 {
		return nil, 0, io.EOF
	}
	m.top = true
	s := m.h[0]
	return m.bufs[s], s, nil
}

// advance reads the shard whose row went out last (or every shard, the
// first time) and restores the heap.
func (m *heapMerge) advance() error {
	if !m.started {
		m.started = true
		for s := range m.r.shards {
			ok, err := m.pull(s)
			if err != nil {
				return err
			}
			if ok {
				m.h = append(m.h, s)
			}
		}
		for i := len(m.h)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
		return nil
	}
	if !m.top || len(m.h) == 0 {
		return nil
	}
	m.top = false
	ok, err := m.pull(m.h[0])
	if err != nil {
		return err
	}
	if !ok {
		last := len(m.h) - 1
		m.h[0] = m.h[last]
		m.h = m.h[:last]
	}
	if len(m.h) > 0 {
		m.down(0)
	}
	return nil
}

func (m *heapMerge) down(i int) {
	n := len(m.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && m.less(m.h[r], m.h[l]) {
			j = r
		}
		if !m.less(m.h[j], m.h[i]) {
			return
		}
		m.h[i], m.h[j] = m.h[j], m.h[i]
		i = j
	}
}

// pull reads shard s's next row and caches its first key when it is an
// int64, the common case, compared without interfaces.
func (m *heapMerge) pull(s int) (bool, error) {
	ok, err := m.r.pull(s, m.bufs[s])
	if !ok || err != nil {
		return ok, err
	}
	m.k0[s], m.k0ok[s] = m.bufs[s][m.r.p.OrderBy[0].Col].(int64)
	return true, m.checkOrder(s)
}

// checkOrder fails when shard s's row sorts before its previous one: the
// shard sorted otherwise than the plan compares (a collation, NULL
// placement or direction the plan got wrong), and merging would give a
// plausible wrong order. It then keeps the row's keys for the next check.
func (m *heapMerge) checkOrder(s int) error {
	row, prev := m.bufs[s], m.prev[s]
	if m.prevOK[s] {
		for i, k := range m.r.p.OrderBy {
			c, err := m.r.compareKey(k, prev[i], s, row[k.Col], s)
			if err != nil {
				return err
			}
			if c > 0 {
				return m.r.colErr(k.Col, fmt.Errorf("%w: shard %d returned %v after %v", ErrOrder, s, row[k.Col], prev[i]))
			}
			if c < 0 {
				break
			}
		}
	}
	for i, k := range m.r.p.OrderBy {
		v := row[k.Col]
		if b, ok := v.([]byte); ok {
			m.prevBuf[s][i] = append(m.prevBuf[s][i][:0], b...)
			v = m.prevBuf[s][i]
		}
		prev[i] = v
	}
	m.prevOK[s] = true
	return nil
}

// less orders shards by their current rows, then by shard index.
func (m *heapMerge) less(a, b int) bool {
	if m.k0ok[a] && m.k0ok[b] {
		if x, y := m.k0[a], m.k0[b]; x != y {
			return (x < y) != m.r.p.OrderBy[0].Desc
		}
		if len(m.r.p.OrderBy) == 1 {
			return a < b
		}
	}
	c, err := m.r.compareRows(m.bufs[a], a, m.bufs[b], b)
	if err != nil && m.err == nil {
		m.err = err
	}
	if c != 0 {
		return c < 0
	}
	return a < b
}

// compareRows orders two rows by Plan.OrderBy; sa and sb are the shards
// whose column classes read them.
func (r *Rows) compareRows(x []driver.Value, sa int, y []driver.Value, sb int) (int, error) {
	for _, k := range r.p.OrderBy {
		c, err := r.compareKey(k, x[k.Col], sa, y[k.Col], sb)
		if err != nil || c != 0 {
			return c, err
		}
	}
	return 0, nil
}

// compareKey orders two values as key k places them in the output.
func (r *Rows) compareKey(k Key, a driver.Value, sa int, b driver.Value, sb int) (int, error) {
	if x, ok := a.(int64); ok { // the common case, without a call
		if y, ok := b.(int64); ok {
			c := cmp.Compare(x, y)
			if k.Desc {
				c = -c
			}
			return c, nil
		}
	}
	switch {
	case a == nil && b == nil:
		return 0, nil
	case a == nil:
		if k.NullsFirst {
			return -1, nil
		}
		return 1, nil
	case b == nil:
		if k.NullsFirst {
			return 1, nil
		}
		return -1, nil
	}
	c, err := compareValues(a, b, r.cls[sa][k.Col], r.cls[sb][k.Col], k.Text)
	if err != nil {
		return 0, r.colErr(k.Col, err)
	}
	if k.Desc {
		c = -c
	}
	return c, nil
}

// distinct drops rows whose visible values equal an earlier row's
// (SELECT DISTINCT without grouping): a set of the rows seen, bounded by
// MaxGroups. It keeps the first of equal rows, so over a merge ordered by
// visible keys it streams in order.
type distinct struct {
	r    *Rows
	in   source
	seen map[string]struct{}
	key  []byte
}

func (d *distinct) next() ([]driver.Value, int, error) {
	for {
		row, s, err := d.in.next()
		if err != nil {
			return nil, 0, err
		}
		if d.key, err = d.r.rowKey(d.key[:0], row, s); err != nil {
			return nil, 0, err
		}
		if _, dup := d.seen[string(d.key)]; dup {
			continue
		}
		if len(d.seen) >= d.r.max {
			return nil, 0, tooMany(d.r.max)
		}
		d.seen[string(d.key)] = struct{}{}
		return row, s, nil
	}
}

// rowKey appends the DISTINCT key of row's visible values.
func (r *Rows) rowKey(buf []byte, row []driver.Value, s int) ([]byte, error) {
	for c := 0; c < r.p.Visible; c++ {
		var err error
		if buf, err = appendKey(buf, row[c], r.cls[s][c], r.distinctText(c)); err != nil {
			return buf, r.colErr(c, err)
		}
	}
	return buf, nil
}

func (r *Rows) distinctText(c int) Text {
	if c < len(r.p.DistinctText) {
		return r.p.DistinctText[c]
	}
	return TextRefused
}
