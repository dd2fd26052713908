package entmixin_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/entmixin"
	ent "github.com/shardkey/shardkey/entmixin/internal/testent"
	"github.com/shardkey/shardkey/entmixin/internal/testent/order"
	_ "github.com/shardkey/shardkey/entmixin/internal/testent/runtime"
	"github.com/shardkey/shardkey/entmixin/internal/testent/user"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

const worker = 9

// useGenerators sets both generators the example schemas use, on a fake
// clock, and unsets them when the test ends.
func useGenerators(t testing.TB) keygen.IDGenerator {
	t.Helper()
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": fmt.Sprint(worker)},
		keygen.WithClock(keygentest.NewClock(time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))))
	if err != nil {
		t.Fatal(err)
	}
	entmixin.Use(gen)
	entmixin.UseNamed("orders", gen)
	t.Cleanup(func() {
		entmixin.Use(nil)
		entmixin.UseNamed("orders", nil)
	})
	return gen
}

// isKey checks id came from worker's SNOWFLAKE generator.
func isKey(t *testing.T, id int64) {
	t.Helper()
	l, err := keygen.LayoutFor("SNOWFLAKE", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(id)
	if err != nil || p.Worker != worker {
		t.Errorf("id %d is not a key of worker %d: %+v, %v", id, worker, p, err)
	}
}

type backend struct {
	name    string
	dialect string
	driver  string
	dsn     func(t *testing.T, name string) string
}

var backends = []backend{
	{"postgres", dialect.Postgres, "pgx", func(t *testing.T, name string) string { return dbtest.Postgres(t, name) }},
	{"mariadb", dialect.MySQL, "mysql", func(t *testing.T, name string) string { return dbtest.MySQL(t, name) }},
	{"sqlite", dialect.SQLite, "sqlite", func(t *testing.T, name string) string {
		return "file:" + filepath.Join(t.TempDir(), name+".db") + "?_pragma=foreign_keys(1)"
	}},
}

func openClient(t *testing.T, b backend, name string) (*ent.Client, *sql.DB) {
	t.Helper()
	db, err := sql.Open(b.driver, b.dsn(t, name))
	if err != nil {
		t.Fatal(err)
	}
	client := ent.NewClient(ent.Driver(entsql.OpenDB(b.dialect, db)))
	t.Cleanup(func() { client.Close() })
	if err := client.Schema.Create(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return client, db
}

// TestCRUD: migrations and every create path on each real database.
func TestCRUD(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			useGenerators(t)
			ctx := context.Background()
			client, db := openClient(t, b, "entmixin_crud")

			// The id column is a plain bigint: no identity, sequence or
			// AUTO_INCREMENT.
			checkNotIncrement(t, b, db)

			// Create: a generated key; edges carry the parent's key.
			ada, err := client.User.Create().SetName("Ada").SetEmail("ada@example.com").Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			isKey(t, ada.ID)
			post, err := client.Post.Create().SetTitle("Hi").SetAuthor(ada).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			isKey(t, post.ID)
			if author := post.QueryAuthor().OnlyIDX(ctx); author != ada.ID {
				t.Errorf("post's author %d, want %d", author, ada.ID)
			}
			// A parent created with its children in one go.
			bob, err := client.User.Create().SetName("Bob").SetEmail("bob@example.com").
				AddPosts(client.Post.Create().SetTitle("a").SaveX(ctx), client.Post.Create().SetTitle("b").SaveX(ctx)).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n := client.Post.Query().Where().CountX(ctx); n != 3 {
				t.Errorf("%d posts", n)
			}
			if n := bob.QueryPosts().CountX(ctx); n != 2 {
				t.Errorf("bob has %d posts", n)
			}

			// CreateBulk: a key per row, increasing.
			users, err := client.User.CreateBulk(
				client.User.Create().SetName("c").SetEmail("c@x"),
				client.User.Create().SetName("d").SetEmail("d@x"),
				client.User.Create().SetName("e").SetEmail("e@x"),
			).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i, u := range users {
				isKey(t, u.ID)
				if i > 0 && u.ID <= users[i-1].ID {
					t.Errorf("bulk keys not increasing: %d then %d", users[i-1].ID, u.ID)
				}
				if got := client.User.GetX(ctx, u.ID); got.Name != u.Name {
					t.Errorf("user %d reads back %q", u.ID, got.Name)
				}
			}

			// SetID is respected.
			fixed, err := client.User.Create().SetID(42).SetName("f").SetEmail("f@x").Save(ctx)
			if err != nil || fixed.ID != 42 {
				t.Fatalf("SetID: %v, %v", fixed, err)
			}
			if client.User.GetX(ctx, 42).Name != "f" {
				t.Error("SetID row not stored under 42")
			}

			// Upsert: a conflict on email updates the row, keeping its id.
			id, err := client.User.Create().SetName("Ada L.").SetEmail("ada@example.com").
				OnConflictColumns(user.FieldEmail).UpdateName().ID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if b.dialect != dialect.MySQL && id != ada.ID {
				// MySQL's ON DUPLICATE KEY UPDATE does not return the
				// existing row's id to ent; the row is still updated.
				t.Errorf("upsert id %d, want %d", id, ada.ID)
			}
			if got := client.User.GetX(ctx, ada.ID); got.Name != "Ada L." {
				t.Errorf("upsert left name %q", got.Name)
			}

			// A keygen.ID-typed key.
			o, err := client.Order.Create().SetUserID(ada.ID).SetAmount(5).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			isKey(t, int64(o.ID))
			if got := client.Order.Query().Where(order.ID(o.ID)).OnlyX(ctx); got.Amount != 5 {
				t.Errorf("order reads back %+v", got)
			}
		})
	}
}

func checkNotIncrement(t *testing.T, b backend, db *sql.DB) {
	t.Helper()
	var q string
	switch b.dialect {
	case dialect.Postgres:
		q = `SELECT count(*) FROM information_schema.columns WHERE table_name = 'users' AND column_name = 'id'
			AND (is_identity = 'YES' OR column_default IS NOT NULL)`
	case dialect.MySQL:
		q = `SELECT count(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'users'
			AND column_name = 'id' AND extra LIKE '%auto_increment%'`
	default:
		q = `SELECT count(*) FROM sqlite_master WHERE name = 'users' AND upper(sql) LIKE '%AUTOINCREMENT%'`
	}
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("users.id is an auto-increment column on %s", b.name)
	}
}

// TestNoGenerator: a create before Use is ErrNoGenerator from Save.
func TestNoGenerator(t *testing.T) {
	b := backends[2]
	gen := useGenerators(t)
	client, _ := openClient(t, b, "entmixin_nogen")
	entmixin.Use(nil)
	_, err := client.User.Create().SetName("x").SetEmail("x@x").Save(context.Background())
	if !errors.Is(err, entmixin.ErrNoGenerator) {
		t.Fatalf("Save without a generator: %v, want ErrNoGenerator", err)
	}
	entmixin.UseNamed("orders", nil)
	if _, err := client.Order.Create().SetUserID(1).Save(context.Background()); !errors.Is(err, entmixin.ErrNoGenerator) {
		t.Fatalf("Save without the orders generator: %v", err)
	}
	// Set later, at call time: the same client now works.
	entmixin.Use(gen)
	if _, err := client.User.Create().SetName("x").SetEmail("x@x").Save(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestJSONStrings: JSONString and KeyType both give JavaScript-safe JSON.
func TestJSONStrings(t *testing.T) {
	u := ent.User{ID: 1331088364845142017, Name: "Ada"}
	o := ent.Order{ID: keygen.ID(1331088364845142018)}
	for _, c := range []struct {
		v    any
		want string
	}{{u, `"id":"1331088364845142017"`}, {o, `"id":"1331088364845142018"`}} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s lacks %s", b, c.want)
		}
	}
	var back ent.User
	if err := json.Unmarshal([]byte(`{"id":"1331088364845142017"}`), &back); err != nil || back.ID != u.ID {
		t.Errorf("round trip: %d, %v", back.ID, err)
	}
}
