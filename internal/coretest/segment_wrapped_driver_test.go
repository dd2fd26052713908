package coretest_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"testing"

	"github.com/XSAM/otelsql"
	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/keygen"
)

// TestSegmentWorksOverAnOtelsqlWrappedDriverWithTheDialectProp: otelsql's
// driver keeps the one it wraps to itself, so SEGMENT cannot tell the
// dialect. Without the dialect prop it refuses the database (a *PropError
// for dialect); with it, it reserves ranges whose keys never meet those of
// a generator on an unwrapped *sql.DB sharing the biz_tag.
func TestSegmentWorksOverAnOtelsqlWrappedDriverWithTheDialectProp(t *testing.T) {
	spelling := map[string]string{"postgres": "postgresql", "mysql": "mariadb"}
	for _, d := range segDBs {
		t.Run(d.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			dsn := d.dsn(t, "segment_wrapped")
			wrapped, err := otelsql.Open(d.driver, dsn)
			if err != nil {
				t.Fatalf("otelsql.Open(%s): %v", d.driver, err)
			}
			defer wrapped.Close()
			plain := openSegDB(t, d, dsn)
			defer plain.Close()
			tag := "wrapped_" + d.name

			_, err = keygen.NewID("SEGMENT", keygen.Props{"biz-tag": tag}, keygen.WithDB(wrapped))
			var pe *keygen.PropError
			if !errors.As(err, &pe) || pe.Key != "dialect" || !errors.Is(err, keygen.ErrInvalidProps) {
				t.Fatalf("no dialect prop over otelsql: %v; want a *PropError for dialect", err)
			}

			props := keygen.Props{"biz-tag": tag, "step": "10", "min-step": "10", "max-step": "10"}
			wprops := keygen.Props{"dialect": spelling[d.name]}
			for k, v := range props {
				wprops[k] = v
			}
			gw := newSegment(t, wrapped, wprops)
			defer gw.(io.Closer).Close()
			gp := newSegment(t, plain, props)
			defer gp.(io.Closer).Close()

			ctx := context.Background()
			seen := map[int64]string{}
			var last int64
			for i := range 60 { // 30 keys each, three 10-key ranges or more, alternating
				g, who := gw, "wrapped"
				if i%2 == 1 {
					g, who = gp, "plain"
				}
				id, err := g.NextID(ctx)
				if err != nil {
					t.Fatalf("%s NextID: %v", who, err)
				}
				if prev, dup := seen[id]; dup {
					t.Fatalf("key %d from %s and %s", id, prev, who)
				}
				seen[id] = who
				if who == "wrapped" {
					if id <= last {
						t.Fatalf("wrapped generator went from %d to %d", last, id)
					}
					last = id
				}
			}
			if top := maxID(t, plain, d, tag); last >= top {
				t.Fatalf("key %d not below the table's max_id %d", last, top)
			}
		})
	}
}

// TestSegmentDialectPropContradictingTheDriverIsRefused: with a driver
// SEGMENT recognises, a dialect prop naming another dialect is a mistake,
// refused before any statement.
func TestSegmentDialectPropContradictingTheDriverIsRefused(t *testing.T) {
	for driverName, wrong := range map[string]string{"pgx": "mysql", "mysql": "postgres"} {
		db, err := sql.Open(driverName, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "x", "dialect": wrong}, keygen.WithDB(db))
		db.Close()
		var pe *keygen.PropError
		if !errors.As(err, &pe) || pe.Key != "dialect" || pe.Value != wrong {
			t.Errorf("%s with dialect %s: %v; want a *PropError for dialect", driverName, wrong, err)
		}
	}
}
