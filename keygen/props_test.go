package keygen_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

var regRuns int

func TestPropsSpellings(t *testing.T) {
	for _, p := range []keygen.Props{
		{"worker-id": "7", "max-tolerate-time-difference-milliseconds": "10", "max-vibration-offset": "2"},
		{"worker.id": "7", "max.tolerate.time.difference.milliseconds": "10", "max.vibration.offset": "2"},
		{"workerId": "7", "maxTolerateTimeDifferenceMilliseconds": "10", "maxVibrationOffset": "2"},
	} {
		g, _ := newFake(t, "snowflake", p)
		if w := decompose(t, g, next(t, g)).Worker; w != 7 {
			t.Errorf("%v: worker %d", p, w)
		}
	}
}

func TestPropErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props keygen.Props
		key   string
		value string
		want  string // in the message
	}{
		{"missing worker id", keygen.Props{}, "worker-id", "", "required"},
		{"worker id out of range", keygen.Props{"worker-id": "1024"}, "worker-id", "1024", "0..1023"},
		{"not a number", keygen.Props{"worker.id": "seven"}, "worker.id", "seven", "0..1023"},
		{"unknown key", keygen.Props{"worker-id": "1", "wroker-id": "2"}, "wroker-id", "2", "allowed: worker-id, max-tolerate"},
		{"two spellings", keygen.Props{"worker-id": "1", "worker.id": "2"}, "worker.id", "2", "given twice"},
		{"vibration range", keygen.Props{"worker-id": "1", "max-vibration-offset": "4096"}, "max-vibration-offset", "4096", "0..4095"},
		{"bad epoch", keygen.Props{"worker-id": "1", "epoch": "yesterday"}, "epoch", "yesterday", "RFC 3339"},
		{"bad unit", keygen.Props{"worker-id": "1", "time-unit": "minute"}, "time-unit", "minute", "ms, s"},
		{"clock-back bits", keygen.Props{"worker-id": "1", "clock-back-bits": "4"}, "clock-back-bits", "4", "0..3"},
		{"datacenter id required", keygen.Props{"worker-id": "1", "datacenter-bits": "2"}, "datacenter-id", "", "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keygen.New("SNOWFLAKE", tc.props)
			var pe *keygen.PropError
			if !errors.Is(err, keygen.ErrInvalidProps) || !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a PropError", err)
			}
			if pe.Key != tc.key || pe.Value != tc.value || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (key %q value %q), want key %q value %q containing %q", err, pe.Key, pe.Value, tc.key, tc.value, tc.want)
			}
		})
	}
	// Every problem is reported, not only the first.
	_, err := keygen.New("SNOWFLAKE", keygen.Props{"worker-id": "x", "bogus": "1"})
	if msg := err.Error(); !strings.Contains(msg, `"bogus"`) || !strings.Contains(msg, `"worker-id"`) {
		t.Fatalf("err = %v, want both problems", err)
	}
}

func TestParseProps(t *testing.T) {
	p, err := keygen.ParseProps(" worker-id=1, epoch=2016-11-01T00:00:00+08:00 ")
	if err != nil || p["worker-id"] != "1" || p["epoch"] != "2016-11-01T00:00:00+08:00" || len(p) != 2 {
		t.Fatalf("ParseProps = %v, %v", p, err)
	}
	if p.String() != "epoch=2016-11-01T00:00:00+08:00,worker-id=1" {
		t.Fatalf("String = %q", p.String())
	}
	for _, bad := range []string{"worker-id", "=1", "a=1,a=2"} {
		if _, err := keygen.ParseProps(bad); !errors.Is(err, keygen.ErrInvalidProps) {
			t.Errorf("ParseProps(%q) err = %v", bad, err)
		}
	}
}

type constGen struct{}

func (constGen) Type() string                           { return "CONST" }
func (constGen) NextKey(context.Context) (any, error)   { return "k", nil }
func (constGen) NextID(context.Context) (int64, error)  { return 42, nil }
func (constGen) NextIDs(context.Context, []int64) error { return nil }

func TestRegistry(t *testing.T) {
	if got := keygen.Types(); !slices.Contains(got, "SNOWFLAKE") || !slices.Contains(got, "SNOWFLAKE_JS") ||
		!slices.Contains(got, "UID") || !slices.Contains(got, "UUID") || !slices.IsSorted(got) {
		t.Fatalf("Types = %v", got)
	}
	if _, err := keygen.New("NOPE", nil); !errors.Is(err, keygen.ErrUnknownType) {
		t.Fatalf("unknown type err = %v", err)
	}
	var seen keygen.Options
	// A name of this run's own: the registry is process-wide and -count
	// reruns the test.
	regRuns++
	name := fmt.Sprintf("const-test-%d", regRuns)
	err := keygen.Register(name, func(p keygen.Props, o keygen.Options) (keygen.Generator, error) {
		seen = o
		return constGen{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := keygen.Register(strings.ToUpper(name), func(keygen.Props, keygen.Options) (keygen.Generator, error) { return nil, nil }); !errors.Is(err, keygen.ErrDuplicateType) {
		t.Fatalf("duplicate Register err = %v", err)
	}
	clk := keygentest.NewClock(t0)
	g, err := keygen.NewID(strings.ToUpper(name[:1])+name[1:], nil, keygen.WithClock(clk)) // names match case-insensitively
	if err != nil || next(t, g) != 42 || seen.Clock != clk || seen.Logger == nil {
		t.Fatalf("custom generator: %v %v", err, seen)
	}
	if err := keygen.Register("SNOWFLAKE", func(keygen.Props, keygen.Options) (keygen.Generator, error) { return nil, nil }); !errors.Is(err, keygen.ErrDuplicateType) {
		t.Fatalf("Register over a built-in: %v", err)
	}
}

// TestImportsStandardLibraryOnly keeps the packages' dependency rule:
// keygen is the bottom layer and imports nothing outside the standard
// library but internal/dialect (SEGMENT's driver detection), which is
// standard library only itself: -deps lists its imports too.
func TestImportsStandardLibraryOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/shardkey/shardkey/keygen" && dep != "github.com/shardkey/shardkey/internal/dialect" {
			t.Errorf("keygen depends on %s", dep)
		}
	}
}
