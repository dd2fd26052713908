package entmixin_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardkey/shardkey/entmixin"
	"github.com/shardkey/shardkey/keygen"
)

// int64Keys is a custom generator with only NextKey: int64 keys from
// start up, or strings when strs is set.
type int64Keys struct {
	next atomic.Int64
	strs bool
}

func (g *int64Keys) Type() string { return "TEST_ENT_INT64_KEYS" }

func (g *int64Keys) NextKey(context.Context) (any, error) {
	n := g.next.Add(1) - 1
	if g.strs {
		return "k", nil
	}
	return n, nil
}

var registerInt64Keys = sync.OnceValue(func() error {
	return keygen.Register("TEST_ENT_INT64_KEYS", func(keygen.Props, keygen.Options) (keygen.Generator, error) {
		g := &int64Keys{}
		g.next.Store(7_000)
		return g, nil
	})
})

// TestCustomGeneratorInt64KeysAreEntIDs: a generator registered with
// keygen.Register that implements only NextKey, returning int64, is taken
// by Use and UseNamed and gives each create its id (int64 and keygen.ID
// fields), on SQLite, PostgreSQL and MariaDB; one returning strings fails
// the create with keygen.ErrNotInt64, and so does a UUID generator.
func TestCustomGeneratorInt64KeysAreEntIDs(t *testing.T) {
	if err := registerInt64Keys(); err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			gen, err := keygen.New("TEST_ENT_INT64_KEYS", nil)
			if err != nil {
				t.Fatal(err)
			}
			entmixin.Use(gen)
			entmixin.UseNamed("orders", gen)
			t.Cleanup(func() {
				entmixin.Use(nil)
				entmixin.UseNamed("orders", nil)
			})
			client, _ := openClient(t, b, "entmixin_custom")
			u, err := client.User.Create().SetName("Ada").SetEmail("ada@example.com").Save(ctx)
			if err != nil || u.ID != 7_000 {
				t.Fatalf("user id %d, %v; want 7000", u.ID, err)
			}
			o, err := client.Order.Create().SetUserID(u.ID).Save(ctx)
			if err != nil || int64(o.ID) != 7_001 {
				t.Fatalf("order id %d, %v; want 7001", o.ID, err)
			}
			if got := client.User.GetX(ctx, 7_000); got.Name != "Ada" {
				t.Fatalf("stored user %+v", got)
			}

			entmixin.Use(&int64Keys{strs: true})
			_, err = client.User.Create().SetName("Bob").SetEmail("bob@example.com").Save(ctx)
			if !errors.Is(err, keygen.ErrNotInt64) {
				t.Fatalf("string keys: %v, want keygen.ErrNotInt64", err)
			}
			uuid, err := keygen.New("UUID", nil)
			if err != nil {
				t.Fatal(err)
			}
			entmixin.Use(uuid)
			_, err = client.User.Create().SetName("Cy").SetEmail("cy@example.com").Save(ctx)
			if !errors.Is(err, keygen.ErrNotInt64) {
				t.Fatalf("UUID: %v, want keygen.ErrNotInt64", err)
			}
			if n := client.User.Query().CountX(ctx); n != 1 {
				t.Fatalf("%d users stored, want 1", n)
			}
		})
	}
}
