package etcdlease

import (
	"context"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// A record this package did not write (a hand edit, another tool, a
// truncated restore) says nothing reliable about the id's last use: the
// claim is refused, never read as "never used".
func TestRecordNotWrittenByAHolderRefusesClaim(t *testing.T) {
	cli := sharedEtcd(t)
	for name, value := range map[string]string{
		"null":          `null`,
		"empty object":  `{}`,
		"misspelled":    `{"lastMs":1893456000000,"owner":"x/1"}`,
		"no owner":      `{"last_ms":1,"until_ms":0}`,
		"empty owner":   `{"last_ms":1,"until_ms":0,"owner":""}`,
		"no until":      `{"last_ms":1,"owner":"x/1"}`,
		"negative":      `{"last_ms":-1,"until_ms":0,"owner":"x/1"}`,
		"empty":         ``,
		"trailing data": `{"last_ms":1,"until_ms":0,"owner":"x/1"} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			ns := testNamespace(t, cli)
			src := newSource(t, cli, ns, Config{})
			if _, err := cli.Put(context.Background(), src.lastKey(0), value); err != nil {
				t.Fatal(err)
			}
			l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0})
			if err == nil {
				l.Close()
				t.Fatalf("record %q accepted: LastUsed %v", value, l.LastUsed())
			}
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("Acquire with record %q: %v, want a *RecordError", value, err)
			}
			if _, err := src.List(context.Background()); !errors.As(err, &re) {
				t.Fatalf("List with record %q: %v, want a *RecordError", value, err)
			}
		})
	}
	// What this package writes is read back.
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, Config{})
	if _, err := cli.Put(context.Background(), src.lastKey(0), `{"last_ms":1,"until_ms":0,"owner":"x/1"}`); err != nil {
		t.Fatal(err)
	}
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0})
	if err != nil {
		t.Fatalf("Acquire with a well-formed record: %v", err)
	}
	l.Close()
}
