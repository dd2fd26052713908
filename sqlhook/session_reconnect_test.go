package sqlhook

import (
	"context"
	"database/sql/driver"
	"slices"
	"testing"
)

// ResetSession of a conn carrying session state replaces its data source
// conns with a fresh default one (no state left, nothing refused), and a
// statement prepared before is prepared again on the new conns rather
// than run on the closed ones.
func TestSessionResetReconnectsAndRepreparesStatements(t *testing.T) {
	ctx := context.Background()
	log := &fkLog{}
	sources, _, _ := fakeSources(log, true)
	db := openRouted(t, sources, spRoute("ds_0"), WithDialect(MySQL))
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.PrepareContext(ctx, "ds_1: SELECT q")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	query := func() {
		t.Helper()
		rows, err := st.QueryContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	query()
	if _, err := conn.ExecContext(ctx, "SET @u := 1"); err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error {
		c, _ := hookConn(dc)
		if err := dc.(driver.SessionResetter).ResetSession(ctx); err != nil {
			return err
		}
		if len(c.session) != 0 || len(c.conns) != 1 || c.bad {
			t.Errorf("after ResetSession: %d session statements, %d conns, bad %v; want a fresh default conn", len(c.session), len(c.conns), c.bad)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ResetSession of a conn with session state: %v", err)
	}
	before := log.count("ds_1 prepare SELECT q")
	query()
	if got := log.count("ds_1 prepare SELECT q"); got != before+1 {
		t.Errorf("the statement was prepared %d more times on ds_1 after the reset, want 1 (it ran on the closed conn)", got-before)
	}
	if got := log.of("ds_1"); !slices.Contains(got, "close") || slices.Contains(got[slices.Index(got, "close"):], "exec SET @u := 1") {
		t.Errorf("ds_1 events %q: want the old conn closed and no session replayed on the new one", got)
	}
}
