package shardconf_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// FuzzParse: any input gives a Config or errors that are all positioned
// *ConfigError values, never a panic; a Config that compiles routes
// without panicking.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(base))
	f.Add([]byte("rules: [!SHARDING {tables: {t: {actualDataNodes: 'ds.t_${0..1}'}}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := shardconf.Parse(data)
		if err != nil {
			checkConfigErrors(t, err)
			return
		}
		r, err := shardconf.NewRouter(cfg)
		if err != nil {
			checkConfigErrors(t, err)
			return
		}
		for _, table := range r.Tables() {
			_, _ = r.Route(table, shardconf.Eq("id", 1), shardconf.Eq("user_id", -7), shardconf.Eq("order_id", "x"))
			_, _ = r.Scatter(table, shardconf.Between("order_id", 1, 100))
			_, _ = r.Targets(table)
		}
	})
}

func checkConfigErrors(t *testing.T, err error) {
	if !errors.Is(err, shardconf.ErrInvalidConfig) {
		t.Fatalf("error without ErrInvalidConfig: %v", err)
	}
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if _, ok := e.(*shardconf.ConfigError); !ok {
			t.Fatalf("not a *ConfigError: %T %v", e, e)
		}
	}
	walk(err)
}
