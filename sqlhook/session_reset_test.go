package sqlhook_test

import (
	"slices"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// A pooled conn that carried session state starts again from fresh
// data source conns when it is next handed out: the session state is
// gone on every data source, and a statement prepared through the pool
// before still runs (prepared again on the new conns) and routes
// correctly.
func TestSessionResetKeepsPreparedStatementsWorking(t *testing.T) {
	for _, b := range txBackends(t, "tadv_reset")[:2] { // PostgreSQL, MariaDB
		t.Run(b.name, func(t *testing.T) {
			seedOrders(t, b)
			db := b.open(t, sqlhook.WithScatter())
			db.SetMaxOpenConns(1)
			st, err := db.Prepare(b.q(`SELECT order_id FROM t_order WHERE user_id = ? ORDER BY order_id`))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ids := func(u int) []int64 {
				t.Helper()
				rows, err := st.Query(u)
				if err != nil {
					t.Fatalf("user %d: %v", u, err)
				}
				defer rows.Close()
				var out []int64
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						t.Fatal(err)
					}
					out = append(out, id)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				return out
			}
			if got := ids(0); !slices.Equal(got, []int64{2, 4}) {
				t.Errorf("user 0: %v", got)
			}
			set, read := `SET @u := 9`, `@u`
			if b.name == "postgres" {
				set, read = `SET app.u = '9'`, `current_setting('app.u', true)`
			}
			for range 3 {
				if _, err := db.Exec(set); err != nil {
					t.Fatal(err)
				}
				if got := ids(1); !slices.Equal(got, []int64{3, 5}) {
					t.Errorf("user 1 after a session reset: %v", got)
				}
				if got := ids(0); !slices.Equal(got, []int64{2, 4}) {
					t.Errorf("user 0 after a session reset: %v", got)
				}
			}
			if _, err := db.Exec(set); err != nil {
				t.Fatal(err)
			}
			conn, err := db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			want := "NULL"
			if b.name == "postgres" {
				want = "" // current_setting(missing_ok) of a reset custom setting
			}
			for id, v := range scatterValues(t, conn, read) {
				if v != want && !(b.name == "postgres" && v == "NULL") {
					t.Errorf("order %d sees %s = %q after the session reset, want it unset", id, read, v)
				}
			}
		})
	}
}
