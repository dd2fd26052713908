package gormplugin_test

import (
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/plugin/dbresolver"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// A refused db.Use closes the generator the plugin built from props, so a
// CACHED_UID's worker is free at once (not when garbage collected).
func TestRefusedPluginClosesTheGeneratorItBuilt(t *testing.T) {
	db, err := gorm.Open(sqlite.Open(filepath.Join(t.TempDir(), "a.db")), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Use(dbresolver.Register(dbresolver.Config{})); err != nil {
		t.Fatal(err)
	}
	scope := keygen.NewSequenceScope()
	clock := keygentest.NewClock(time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC))
	props := keygen.Props{"type": "CACHED_UID", "worker-id": "22", "worker-bits": "21", "sequence-bits": "10"}
	p := gormplugin.New(props, gormplugin.WithRules(rulesOf(t, tableRules)),
		gormplugin.WithKeyGenOptions(keygen.WithSequenceScope(scope), keygen.WithClock(clock)))
	if err := db.Use(p); !errors.Is(err, gormplugin.ErrDBResolver) {
		t.Fatalf("db.Use beside dbresolver = %v, want ErrDBResolver", err)
	}
	clock.Add(time.Hour) // past every second the generator filled
	uid, err := keygen.NewID("UID", keygen.Props{"worker-id": "22", "worker-bits": "21", "sequence-bits": "10"},
		keygen.WithSequenceScope(scope), keygen.WithClock(clock))
	if err != nil {
		t.Fatalf("the refused plugin's CACHED_UID still holds worker 22: %v", err)
	}
	if c, ok := uid.(io.Closer); ok {
		c.Close()
	}
}
