package xa

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/internal/dialect"
)

// fakeBranch is a PostgreSQL branch whose statements are recorded.
type fakeBranch struct {
	mu    sync.Mutex
	stmts []string
}

func (fb *fakeBranch) branch(source string) Branch {
	return Branch{Source: source,
		Exec: func(_ context.Context, q string) error {
			fb.mu.Lock()
			defer fb.mu.Unlock()
			fb.stmts = append(fb.stmts, q)
			return nil
		},
		Local: func(bool) error { return nil }}
}

func (fb *fakeBranch) sent(prefix string) bool {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	for _, q := range fb.stmts {
		if strings.HasPrefix(q, prefix) {
			return true
		}
	}
	return false
}

// Commit is in doubt only when the log's COMMIT was sent and its outcome
// cannot be read back; an insert that failed before its COMMIT certainly
// logged nothing, and the transaction rolls back.
func TestCommitIsInDoubtOnlyWhenTheLogsCommitOutcomeIsUnknown(t *testing.T) {
	cases := []struct {
		name                 string
		insertFails, commits bool   // the insert statement fails; the log tx's COMMIT succeeds
		readBack             string // the read-back's outcome: "C", "" (no row) or "error"
		want                 string // "committed", "rolled back", "in doubt"
	}{
		{"insert refused", true, true, "", "rolled back"},
		{"insert refused, read fails", true, true, "error", "rolled back"},
		{"commit lost, row there", false, false, "C", "committed"},
		{"commit lost, read fails", false, false, "error", "in doubt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := fakeServer("10")
			pg := &fakeDB{r: func(q string, args []driver.NamedValue) (fakeResult, error) {
				switch {
				case strings.HasPrefix(q, "WITH durable AS") && args[0].Value != logIDKey && tc.insertFails:
					return fakeResult{}, errors.New("ERROR: refused by a trigger (SQLSTATE P0001)")
				case strings.HasPrefix(q, "SELECT outcome FROM"):
					if tc.readBack == "error" {
						return fakeResult{}, errors.New("connection reset")
					}
					res := fakeResult{cols: []string{"outcome"}}
					if tc.readBack != "" {
						res.rows = [][]driver.Value{{tc.readBack}}
					}
					return res, nil
				}
				return base(q, args)
			}}
			db := pg.open()
			defer db.Close()
			c, err := New(Config{Interval: -1}, []Source{{Name: "a", Dialect: dialect.Postgres, DB: db}, {Name: "b", Dialect: dialect.Postgres, DB: db}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !tc.commits {
				pg.commit = func() error { return errors.New("connection reset during COMMIT") }
			}
			tx, _ := c.NewTx()
			fa, fb := &fakeBranch{}, &fakeBranch{}
			err = tx.Commit(context.Background(), []Branch{fa.branch("a"), fb.branch("b")})
			got := map[bool]string{true: "committed"}[err == nil]
			switch {
			case errors.Is(err, ErrInDoubt):
				got = "in doubt"
			case errors.Is(err, ErrRolledBack):
				got = "rolled back"
			}
			if got != tc.want {
				t.Fatalf("Commit = %v (%s), want %s", err, got, tc.want)
			}
			if n := pg.count("WITH durable AS (SELECT pg_catalog.set_config('synchronous_commit', 'on', true)) INSERT INTO"); n < 1 {
				t.Errorf("the decision's insert does not set synchronous_commit on")
			}
			for _, f := range []*fakeBranch{fa, fb} {
				if tc.want == "rolled back" && !f.sent("ROLLBACK PREPARED") || tc.want == "committed" && !f.sent("COMMIT PREPARED") {
					t.Errorf("%s: branch statements %q", tc.want, f.stmts)
				}
				if tc.want == "in doubt" && (f.sent("ROLLBACK PREPARED") || f.sent("COMMIT PREPARED")) {
					t.Errorf("in doubt, yet a branch was ended: %q", f.stmts)
				}
			}
		})
	}
}
