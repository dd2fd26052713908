package zklease_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestStoredValidityIsNotShorterThanTheHoldersWhenNotWholeMilliseconds: a
// granted session timeout of 4001 ms gives 3/4 of it, 3000.75 ms, which is
// not whole milliseconds; the validity the holder record stores for the
// next holder is never shorter than the one the holder keeps (on a clock
// that does not move, ValidUntil minus the clock's reading).
func TestStoredValidityIsNotShorterThanTheHoldersWhenNotWholeMilliseconds(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	addr := "10.13.0.1:8080"
	cfg := zklease.Config{Servers: []string{server}, Name: name, Addr: addr,
		SessionTimeout: 4001 * time.Millisecond, CacheFile: filepath.Join(t.TempDir(), "workerID.properties")}
	clk := keygentest.NewClock(time.Now())
	l, err := newSource(t, cfg).Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	held := time.Duration(l.ValidUntil() - clk.Now().UnixNano())
	c := connect(t, server)
	stored := func() time.Duration {
		t.Helper()
		b, _, err := c.Get("/snowflake/" + name + "/shardkey/" + addr)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			ValidityMs int64 `json:"validity_ms"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		return time.Duration(rec.ValidityMs) * time.Millisecond
	}
	if s := stored(); s < held || held <= 0 {
		t.Fatalf("the holder record stores a validity of %v; the holder keeps %v", s, held)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if s := stored(); s < held {
		t.Fatalf("after Close the holder record stores a validity of %v; the holder kept %v", s, held)
	}
}
