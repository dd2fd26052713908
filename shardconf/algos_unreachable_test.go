package shardconf

import (
	"slices"
	"testing"
)

// atGaps compiles an algorithm whose partitions are partly without a
// target and checks that it loads and reports exactly want.
func atGaps(t *testing.T, typ string, props map[string]string, targets []string, want ...string) shardFunc {
	t.Helper()
	var got []string
	f, err := atTrySpec(algoSpec{typ: typ, props: props, targets: targets, unreachable: func(p string) { got = append(got, p) }})
	if err != nil {
		t.Fatalf("%s %v over %d targets: %v; want it loaded with unreachable partitions", typ, props, len(targets), err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s %v: unreachable\n  %q\nwant\n  %q", typ, props, got, want)
	}
	return f
}
