package keygen_test

import (
	"testing"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0", "-1", "9223372036854775807", "9223372036854775808", "+5", " 1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := keygen.ParseID(s)
		if err != nil {
			return
		}
		if back, err := keygen.ParseID(id.String()); err != nil || back != id {
			t.Fatalf("round trip of %q: %d, %v", s, back, err)
		}
	})
}

func FuzzParseBase62(f *testing.F) {
	for _, s := range []string{"0", "-1", "AzL8n0Y58m7", "AzL8n0Y58m8", "-AzL8n0Y58m8", "zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := keygen.ParseBase62(s)
		if err != nil {
			return
		}
		if back, err := keygen.ParseBase62(id.Base62()); err != nil || back != id {
			t.Fatalf("round trip of %q: %d, %v", s, back, err)
		}
	})
}

func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`"1"`, `1`, `null`, `"`, `""`, `"-9223372036854775808"`, `1e3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var id keygen.ID
		if err := id.UnmarshalJSON(b); err != nil {
			return
		}
		out, _ := id.MarshalJSON()
		var back keygen.ID
		if err := back.UnmarshalJSON(out); err != nil || back != id {
			t.Fatalf("round trip of %q: %d, %v", b, back, err)
		}
	})
}

// FuzzProps feeds arbitrary props to every built-in type: an error or a
// working generator, never a panic.
func FuzzProps(f *testing.F) {
	for _, s := range []string{"worker-id=1", "worker.id=1,time-bits=30,time-unit=s", "workerId=2,epochStr=2020-01-01",
		"worker-id=1,clock-back-bits=3,datacenter-bits=2,datacenter-id=3", "version=7", "worker-id=1,sequence-bits=62,time-bits=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := keygen.ParseProps(s)
		if err != nil {
			return
		}
		for _, typ := range []string{"SNOWFLAKE", "SNOWFLAKE_JS", "UID", "UUID"} {
			g, err := keygen.New(typ, p, keygen.WithClock(keygentest.NewClock(t0)))
			if err != nil {
				continue
			}
			if _, err := g.NextKey(ctx); err != nil {
				t.Fatalf("%s %v: NextKey: %v", typ, p, err)
			}
		}
	})
}
