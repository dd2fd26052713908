package merge

import (
	"errors"
	"testing"
)

// Groups split across every shard are counted once each: exactly
// MaxGroups groups (plus the distinct values held for COUNT(DISTINCT))
// merge, one more fails with ErrTooManyGroups rather than drop a group.
func TestGroupsSplitAcrossAllShardsMergeUpToMaxGroups(t *testing.T) {
	const shards, groups = 16, 500
	mk := func() []*fakeRows {
		out := make([]*fakeRows, shards)
		for s := range out {
			out[s] = ints([]string{"g", "n", "v"})
			for g := 0; g < groups; g++ {
				out[s].rows = append(out[s].rows, row(int64((g*7+s)%groups), int64(1), int64(s%2)))
			}
		}
		return out
	}
	count := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0}, Aggs: []Agg{{Col: 1, Func: Count}},
		OrderBy: []Key{{Col: 0}}, Limit: -1, MaxGroups: groups}
	got := run(t, count, mk()...)
	if len(got) != groups {
		t.Fatalf("%d groups", len(got))
	}
	for i, r := range got {
		if r[0] != int64(i) || r[1] != int64(shards) {
			t.Fatalf("group %d: %v", i, r)
		}
	}
	count.MaxGroups = groups - 1
	if _, err := runErr(t, count, mk()...); !errors.Is(err, ErrTooManyGroups) {
		t.Errorf("MaxGroups %d: %v", count.MaxGroups, err)
	}
	// Each group holds two distinct values of v: groups*3 entries in all.
	distinct := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0},
		Aggs: []Agg{{Col: 1, Func: CountDistinct, Args: []int{2}}}, Limit: -1, MaxGroups: groups * 3}
	got = run(t, distinct, mk()...)
	for _, r := range got {
		if r[1] != int64(2) {
			t.Fatalf("group %v", r)
		}
	}
	distinct.MaxGroups--
	if _, err := runErr(t, distinct, mk()...); !errors.Is(err, ErrTooManyGroups) {
		t.Errorf("MaxGroups %d: %v", distinct.MaxGroups, err)
	}
	// SELECT DISTINCT without grouping: the same bound on distinct rows.
	rows := Plan{Dialect: PostgreSQL, Visible: 1, Distinct: true, Limit: -1, MaxGroups: groups}
	if got := run(t, rows, mk()...); len(got) != groups {
		t.Errorf("%d distinct rows", len(got))
	}
	rows.MaxGroups--
	if _, err := runErr(t, rows, mk()...); !errors.Is(err, ErrTooManyGroups) {
		t.Errorf("distinct, MaxGroups %d: %v", rows.MaxGroups, err)
	}
}
