package entmixin_test

import (
	"context"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/DATA-DOG/go-sqlmock"

	"github.com/shardkey/shardkey/entmixin"
	ent "github.com/shardkey/shardkey/entmixin/internal/testent"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// twinKeys are the first n keys of a generator like the one the test
// installs: same props, its own clock at the same instant.
func twinKeys(t *testing.T, at time.Time, n int) []int64 {
	t.Helper()
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "11", "max-vibration-offset": "0"},
		keygen.WithClock(keygentest.NewClock(at)))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, n)
	if err := gen.NextIDs(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExactSQL pins the statements ent sends with the mixin: the key is an
// ordinary column value, bound like any other, in single and bulk creates.
func TestExactSQL(t *testing.T) {
	at := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		dialect      string
		single, bulk string
		returning    bool // the bulk INSERT reads the ids back (PostgreSQL)
	}{
		{dialect.Postgres,
			`INSERT INTO "users" ("name", "email", "id") VALUES ($1, $2, $3)`,
			`INSERT INTO "users" ("email", "id", "name") VALUES ($1, $2, $3), ($4, $5, $6) RETURNING "id"`, true},
		{dialect.MySQL,
			"INSERT INTO `users` (`name`, `email`, `id`) VALUES (?, ?, ?)",
			"INSERT INTO `users` (`email`, `id`, `name`) VALUES (?, ?, ?), (?, ?, ?)", false},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "11", "max-vibration-offset": "0"},
				keygen.WithClock(keygentest.NewClock(at)))
			if err != nil {
				t.Fatal(err)
			}
			entmixin.Use(gen)
			t.Cleanup(func() { entmixin.Use(nil) })
			keys := twinKeys(t, at, 3)

			db, mock, err := sqlmock.New(sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			client := ent.NewClient(ent.Driver(entsql.OpenDB(c.dialect, db)))
			mock.ExpectExec(c.single).WithArgs("Ada", "ada@x", keys[0]).WillReturnResult(sqlmock.NewResult(0, 1))
			if c.returning {
				mock.ExpectQuery(c.bulk).WithArgs("b@x", keys[1], "Bob", "c@x", keys[2], "Cy").
					WillReturnRows(sqlmock.NewRows([]string{"id"}).AddRow(keys[1]).AddRow(keys[2]))
			} else {
				mock.ExpectExec(c.bulk).WithArgs("b@x", keys[1], "Bob", "c@x", keys[2], "Cy").WillReturnResult(sqlmock.NewResult(0, 2))
			}

			ctx := context.Background()
			u, err := client.User.Create().SetName("Ada").SetEmail("ada@x").Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if u.ID != keys[0] {
				t.Errorf("created id %d, want %d", u.ID, keys[0])
			}
			us, err := client.User.CreateBulk(
				client.User.Create().SetName("Bob").SetEmail("b@x"),
				client.User.Create().SetName("Cy").SetEmail("c@x"),
			).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if us[0].ID != keys[1] || us[1].ID != keys[2] {
				t.Errorf("bulk ids %d %d, want %d %d", us[0].ID, us[1].ID, keys[1], keys[2])
			}
			if err := mock.ExpectationsWereMet(); err != nil {
				t.Error(err)
			}
		})
	}
}
