package entmixin_test

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/shardkey/shardkey/entmixin"
	ent "github.com/shardkey/shardkey/entmixin/internal/testent"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// A schema with entmixin.ID{} gets its key from the generator set with
// Use; the clock is fixed here so the output is too.
func Example() {
	gen, _ := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "7", "max-vibration-offset": "0"},
		keygen.WithClock(keygentest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))))
	entmixin.Use(gen)
	defer entmixin.Use(nil)

	db, _ := sql.Open("sqlite", "file:example?mode=memory&_pragma=foreign_keys(1)")
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, db)))
	defer client.Close()
	ctx := context.Background()
	if err := client.Schema.Create(ctx); err != nil {
		fmt.Println(err)
		return
	}
	u, err := client.User.Create().SetName("Ada").SetEmail("ada@example.com").Save(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := gen.(keygen.Decomposer).Decompose(u.ID)
	fmt.Println(u.ID, p.Time.UTC().Format(time.RFC3339), "worker", p.Worker)
	// Output: 1331231824281628672 2026-11-22T12:00:00Z worker 7
}
