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

// TestDSNPasswordNotPrinted: datasource.go's ensurePostgres wraps
// url.Parse's error, whose text quotes the whole URL, password included
// ("-dsn: parse \"postgres://app:s3cr%zzet@...\""); main prints it to
// stderr. A password with an unescaped '%' is enough. (gorm-keys, given the
// same DSN, goes through pgconn, which redacts it as "xxxxx".)
func TestDSNPasswordNotPrinted(t *testing.T) {
	err := run(context.Background(), config{dsn: "postgres://app:s3cr%zzet@127.0.0.1:1/q_{ds}", orders: 10, batch: 10, worker: 1}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "s3cr") {
		t.Errorf("the error shows the DSN's password: %v", err)
	}
}

// TestRulesWithOtherDataSourceNames: -rules "reads another file", but
// shop.go hard-codes the data source names ds_0/ds_1 (insert's
// s.dbs[fmt.Sprintf("ds_%d", ds)], readBack's and refused's s.dbs["ds_0"]):
// a rule file naming its data sources otherwise makes the program panic
// with a nil *gorm.DB instead of reporting an error.
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

// TestHugeBatchFlag: shop.insert allocates make([]Order, 0, batch)
// before looking at n, so `-n 10 -batch 9223372036854775807` panics
// ("makeslice: cap out of range") and `-batch 100000000` allocates ~6 GB
// for ten rows. The capacity should be min(batch, n).
func TestHugeBatchFlag(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("run panicked with -n 10 -batch MaxInt: %v", r)
		}
	}()
	var out bytes.Buffer
	if err := run(context.Background(), config{dir: t.TempDir(), orders: 10, batch: math.MaxInt, worker: 1}, &out); err != nil {
		t.Logf("err %v", err)
	}
}
