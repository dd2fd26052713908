package xa

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/keygen"
	"go.uber.org/goleak"
)

// fakeSources are a PostgreSQL and a MySQL data source on fake servers.
func fakeSources(t *testing.T, maxPrepared string) ([]Source, *fakeDB, *fakeDB) {
	t.Helper()
	pg, my := &fakeDB{r: fakeServer(maxPrepared)}, &fakeDB{r: fakeServer(maxPrepared)}
	pgDB, myDB := pg.open(), my.open()
	t.Cleanup(func() { pgDB.Close(); myDB.Close() })
	return []Source{{Name: "pg0", Dialect: dialect.Postgres, DB: pgDB}, {Name: "my0", Dialect: dialect.MySQL, DB: myDB}}, pg, my
}

type noDecompose struct{ keygen.IDGenerator }

func TestNewRefusesBadConfiguration(t *testing.T) {
	srcs, _, _ := fakeSources(t, "10")
	lite := Source{Name: "lite", Dialect: dialect.SQLite}
	snow, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]struct {
		cfg  Config
		srcs []Source
	}{
		"no sources":         {Config{}, nil},
		"duplicate":          {Config{}, []Source{srcs[0], srcs[0]}},
		"name with a space":  {Config{}, []Source{{Name: "a b", Dialect: dialect.Postgres, DB: srcs[0].DB}}},
		"name with a colon":  {Config{}, []Source{{Name: "a:b", Dialect: dialect.MySQL, DB: srcs[1].DB}}},
		"name of 65 bytes":   {Config{}, []Source{{Name: strings.Repeat("n", 65), Dialect: dialect.Postgres, DB: srcs[0].DB}}},
		"no DB":              {Config{}, []Source{{Name: "pg", Dialect: dialect.Postgres}}},
		"unknown log source": {Config{LogSource: "nope"}, srcs},
		"SQLite log":         {Config{LogSource: "lite"}, append([]Source{lite}, srcs...)},
		"SQLite first":       {Config{}, append([]Source{lite}, srcs...)},
		"log table quote":    {Config{LogTable: "log'; DROP"}, srcs},
		"log table 3 parts":  {Config{LogTable: "a.b.c"}, srcs},
		"negative timeout":   {Config{Timeout: -time.Second}, srcs},
		"tiny timeout":       {Config{Timeout: time.Millisecond}, srcs},
	}
	for name, tc := range bad {
		if c, err := New(tc.cfg, tc.srcs); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidConfig", name, c, err)
		}
	}
	good := map[string]struct {
		cfg  Config
		srcs []Source
	}{
		"defaults":             {Config{}, srcs},
		"SQLite beside":        {Config{}, append(srcs, Source{Name: "bad name is fine for SQLite", Dialect: dialect.SQLite})},
		"no timer":             {Config{Interval: -1}, srcs},
		"qualified log table":  {Config{LogTable: "ops.xa_log", LogSource: "my0"}, srcs},
		"snowflake generator":  {Config{IDs: snow}, srcs},
		"any id generator":     {Config{IDs: noDecompose{snow}}, srcs},
		"unknown dialect side": {Config{}, append(srcs, Source{Name: "x", Dialect: ""})},
	}
	for name, tc := range good {
		c, err := New(tc.cfg, tc.srcs)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		c.Close()
	}
}

func TestStartRefusesPostgreSQLWithoutPreparedTransactionsNamingSourceAndFix(t *testing.T) {
	srcs, _, _ := fakeSources(t, "0")
	c, err := New(Config{Interval: -1}, srcs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Start(context.Background())
	var ue *UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) || ue.Source != "pg0" || ue.Dialect != dialect.Postgres {
		t.Fatalf("Start = %v, want *UnavailableError for pg0", err)
	}
	if !strings.Contains(err.Error(), "set max_prepared_transactions > 0 in postgresql.conf and restart") || !strings.Contains(err.Error(), `"pg0"`) {
		t.Errorf("message does not name the source and the fix: %v", err)
	}
	if _, err := c.NewTx(); !errors.Is(err, ErrNotStarted) {
		t.Errorf("NewTx after a failed Start = %v, want ErrNotStarted", err)
	}
}

func TestCoordinatorLifecycleAndTimerStopOnClose(t *testing.T) {
	srcs, pg, my := fakeSources(t, "10")
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the pools close at cleanup
	c, err := New(Config{Interval: time.Millisecond}, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewTx(); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("NewTx before Start = %v", err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pg.count("CREATE TABLE IF NOT EXISTS shardkey_xa_log") != 1 || my.count("CREATE") != 0 {
		t.Error("the log table is not created once, in the first source")
	}
	tx, err := c.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(fakeLogID + "\x00app.public.shardkey_xa_log"))
	if want := "sk1:" + hex.EncodeToString(sum[:8]) + ":"; !strings.HasPrefix(tx.GTRID(), want) || c.BranchPrefix() != want {
		t.Errorf("GTRID %s, BranchPrefix %s, want prefix %s", tx.GTRID(), c.BranchPrefix(), want)
	}
	if tx.XAStart("my0") != "XA START "+mysqlXID(tx.GTRID(), "my0") || tx.XAStart("pg0") != "" || tx.XAStart("nope") != "" {
		t.Errorf("XAStart: %q %q", tx.XAStart("my0"), tx.XAStart("pg0"))
	}
	// The timer runs recovery again and again (the first run is Start's).
	for deadline := time.Now().Add(10 * time.Second); my.count("XA RECOVER") < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the recovery timer did not run")
		}
		time.Sleep(time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.NewTx(); !errors.Is(err, ErrClosed) {
		t.Errorf("NewTx after Close = %v", err)
	}
	if _, err := c.Recover(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Recover after Close = %v", err)
	}
	if err := c.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
}

// A transaction may not span SQLite: Commit refuses before preparing, and
// rolls every branch back.
func TestCommitRefusesToSpanSQLiteAndRollsBackTheOthers(t *testing.T) {
	srcs, pg, _ := fakeSources(t, "10")
	c, err := New(Config{Interval: -1}, append(srcs, Source{Name: "lite", Dialect: dialect.SQLite}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !c.CanTwoPhase("pg0") || !c.CanTwoPhase("my0") || c.CanTwoPhase("lite") || c.CanTwoPhase("nope") {
		t.Error("CanTwoPhase")
	}
	tx, _ := c.NewTx()
	var mu sync.Mutex
	var ended []string
	local := func(name string) func(bool) error {
		return func(commit bool) error {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, name+map[bool]string{true: "+commit", false: "+rollback"}[commit])
			return nil
		}
	}
	exec := func(context.Context, string) error { return errors.New("no statement expected") }
	err = tx.Commit(context.Background(), []Branch{
		{Source: "pg0", Exec: exec, Local: local("pg0")},
		{Source: "lite", Exec: exec, Local: local("lite")},
	})
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Source != "lite" || errors.Is(err, ErrInDoubt) {
		t.Fatalf("Commit = %v, want *UnavailableError naming lite", err)
	}
	if strings.Join(ended, ",") != "pg0+rollback,lite+rollback" && strings.Join(ended, ",") != "lite+rollback,pg0+rollback" {
		t.Errorf("branches ended: %q, want both rolled back", ended)
	}
	if pg.count("PREPARE") != 0 {
		t.Error("a branch was prepared")
	}
	if err := tx.Rollback(context.Background(), nil); !errors.Is(err, ErrTxDone) {
		t.Errorf("Rollback after Commit = %v", err)
	}
}

// Start warns about a MySQL source that may lose acknowledged commits or
// prepared branches in a crash.
func TestStartWarnsAboutAMySQLSourceThatIsNotDurable(t *testing.T) {
	base := fakeServer("10")
	my := &fakeDB{r: func(q string, args []driver.NamedValue) (fakeResult, error) {
		if q == mysqlDurability {
			return fakeResult{cols: []string{"f", "b", "s"}, rows: [][]driver.Value{{"2", "1", "0"}}}, nil
		}
		return base(q, args)
	}}
	db := my.open()
	defer db.Close()
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	c, err := New(Config{Interval: -1, Logger: logger}, []Source{{Name: "my0", Dialect: dialect.MySQL, DB: db}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "innodb_flush_log_at_trx_commit=2") || !strings.Contains(out, "source=my0") {
		t.Errorf("no durability warning naming the source and the setting:\n%s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
