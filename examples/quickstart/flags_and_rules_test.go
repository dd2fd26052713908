package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDSNPasswordNotPrinted: url.Parse's error quotes the whole URL,
// password included ("parse \"postgres://app:s3cr%zzet@...\""), and a
// password with an unescaped '%' is enough to get one; the error run
// returns, which main prints, never shows the password.
func TestDSNPasswordNotPrinted(t *testing.T) {
	err := run(context.Background(), config{dsn: "postgres://app:s3cr%zzet@127.0.0.1:1/q_{ds}", orders: 10, batch: 10, worker: 1}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "s3cr") {
		t.Errorf("the error shows the DSN's password: %v", err)
	}
}

// TestRulesWithOtherDataSourceNames: -rules reads another file, whose
// data sources may have other names than ds_0/ds_1; the tour runs on them
// (and never looks a data source up by a name of its own).
func TestRulesWithOtherDataSourceNames(t *testing.T) {
	rules := strings.NewReplacer("ds_0", "shard0", "ds_1", "shard1", "ds_${", "shard${").Replace(string(defaultRules))
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("run panicked with data sources shard0/shard1: %v", r)
		}
	}()
	var out bytes.Buffer
	if err := run(context.Background(), config{rules: path, dir: t.TempDir(), orders: 20, batch: 10, worker: 1}, &out); err != nil ||
		!strings.Contains(out.String(), "shard1.t_order_3") {
		t.Errorf("data sources shard0/shard1: %v\n%s", err, out.String())
	}
}

// TestHugeBatchFlagAllocatesOnlyForTheRows: a batch is allocated for at
// most the rows to write (min(batch, n)), so `-n 10 -batch MaxInt` writes
// ten rows instead of panicking ("makeslice: cap out of range") or
// allocating gigabytes.
func TestHugeBatchFlagAllocatesOnlyForTheRows(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("run panicked with -n 10 -batch MaxInt: %v", r)
		}
	}()
	var out bytes.Buffer
	if err := run(context.Background(), config{dir: t.TempDir(), orders: 10, batch: math.MaxInt, worker: 1}, &out); err != nil {
		t.Errorf("-n 10 -batch MaxInt: %v", err)
	}
}
