package workerlease_test

import (
	"context"
	"database/sql"
	"io"
	"log"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease"
)

// A service that scales up and down leases its worker id from the
// database it already has. (This example needs a PostgreSQL server, so it
// is compiled but not run; the package's tests run the same calls.)
func ExampleNew() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://app@127.0.0.1:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	src, err := workerlease.New(ctx, workerlease.Config{DB: db, Namespace: "orders", TTL: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	// worker-id: auto takes the lowest free slot; the generator renews it
	// every TTL/3 and stops issuing (keygen.ErrLeaseLost) if it cannot.
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(src))
	if err != nil {
		log.Fatal(err)
	}
	defer g.(io.Closer).Close() // releases the worker id

	id, err := g.NextID(ctx)
	if err != nil {
		log.Fatal(err)
	}
	log.Println(id)
}

// CACHED_UID borrows future seconds, so each run needs a worker id no run
// used before: Baidu's disposable ids, one row of a table per start.
func ExampleNewDisposable() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://app@127.0.0.1:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	src, err := workerlease.NewDisposable(ctx, workerlease.DisposableConfig{DB: db})
	if err != nil {
		log.Fatal(err)
	}
	g, err := keygen.NewID("CACHED_UID", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(src))
	if err != nil {
		log.Fatal(err)
	}
	defer g.(io.Closer).Close()
	id, _ := g.NextID(ctx)
	log.Println(id)
}
