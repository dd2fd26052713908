package gormplugin_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/libtnb/sqlite"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestWithKeyGenOptionsReachTheGeneratorBuiltFromProps: the clock and
// worker source given with WithKeyGenOptions are the ones the generator New
// builds from props uses (the stored key carries their time and worker);
// without a source, worker-id auto is refused at db.Use.
func TestWithKeyGenOptionsReachTheGeneratorBuiltFromProps(t *testing.T) {
	at := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	props := keygen.Props{"worker-id": "auto"}
	db := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "o.db")))
	kfUse(t, db, gormplugin.New(props, gormplugin.WithKeyGenOptions(
		keygen.WithClock(keygentest.NewClock(at)),
		keygen.WithWorkerSource(keygen.StaticWorker(5)),
		keygen.WithSequenceScope(keygen.NewSequenceScope()))))
	if err := db.AutoMigrate(&KfUser{}); err != nil {
		t.Fatal(err)
	}
	u := KfUser{Name: "a"}
	if err := db.Create(&u).Error; err != nil {
		t.Fatal(err)
	}
	// Any SNOWFLAKE of the default layout decomposes the key.
	dec, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "0"}, keygen.WithSequenceScope(keygen.NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := dec.(keygen.Decomposer).Decompose(u.ID)
	if err != nil || p.Worker != 5 || !p.Time.Equal(at) {
		t.Fatalf("key %d decomposes to worker %d at %v (%v), want worker 5 at %v", u.ID, p.Worker, p.Time, err, at)
	}

	bare := kfOpen(t, "sqlite", sqlite.Open(filepath.Join(t.TempDir(), "b.db")))
	if err := bare.Use(gormplugin.New(props)); err == nil {
		t.Fatal("worker-id auto without a worker source was accepted")
	}
}
