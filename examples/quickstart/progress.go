package main

import (
	"fmt"
	"io"
	"strings"
)

// progress draws a one-line bar, redrawn in place with \r, at most once
// per percent.
type progress struct {
	w      io.Writer
	total  int
	shown  int // percent last drawn; -1 before the first
	active bool
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, shown: -1, active: w != nil && total > 0}
}

func (p *progress) set(done int) {
	if !p.active {
		return
	}
	pct := done * 100 / p.total
	if pct == p.shown {
		return
	}
	p.shown = pct
	const width = 40
	fill := pct * width / 100
	fmt.Fprintf(p.w, "\rinserting [%s%s] %3d%% %d/%d", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, done, p.total)
}

func (p *progress) finish() {
	if p.active {
		fmt.Fprintln(p.w)
	}
}
