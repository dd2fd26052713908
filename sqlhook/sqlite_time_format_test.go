package sqlhook_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// modernc.org/sqlite writes a time.Time argument as t.String() unless the
// DSN says _time_format=sqlite: "2024-12-31 23:30:00 -0100 -0100", with
// " m=+0.5" after a monotonic clock reading. That spelling is the driver's
// storage format; SQLite orders and compares it as text, starting with the
// wall clock, which is also what INTERVAL routes a time.Time by. So over
// DSNs without _time_format, times in several zones, with fractions and
// monotonic readings, sharded by INTERVAL, read, range-route, order,
// group and aggregate exactly as one unsharded table written the same way,
// or are refused.
func TestSQLiteTimesInTheDriversDefaultFormatAnswerAsOneTable(t *testing.T) {
	dir := t.TempDir()
	var dsn [3]string
	var direct [3]*sql.DB
	for i := range dsn {
		dsn[i] = filepath.Join(dir, fmt.Sprintf("t%d.db", i)) // no _time_format
		db, err := sql.Open("sqlite", dsn[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		direct[i] = db
		tables := []string{"t_ev_2024", "t_ev_2025", "t_ev_2026", "t_ev_2027"}
		if i == 2 {
			tables = []string{"o_ev"}
		}
		for _, tb := range tables {
			if _, err := db.Exec(`CREATE TABLE ` + tb + ` (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, ts DATETIME, note TEXT)`); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, `
dataSources:
  ds_0: {driver: sqlite, dsn: %q}
  ds_1: {driver: sqlite, dsn: %q}
rules:
- !SHARDING
  tables:
    t_ev:
      actualDataNodes: ds_${0..1}.t_ev_${2024..2027}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: db_mod}
      tableStrategy:
        standard: {shardingColumn: ts, shardingAlgorithmName: yearly}
  shardingAlgorithms:
    db_mod: {type: MOD, props: {sharding-count: 2}}
    yearly:
      type: INTERVAL
      props: {datetime-pattern: "yyyy-MM-dd HH:mm:ss", datetime-lower: "2024-01-01 00:00:00", datetime-upper: "2027-12-31 23:59:59",
              sharding-suffix-pattern: yyyy, datetime-interval-unit: YEARS}
`, dsn[0], dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithScatter(), sqlhook.WithBinaryCollation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	oracle := direct[2]

	cet, minus130, plus14 := time.FixedZone("CET", 3600), time.FixedZone("", -90*60), time.FixedZone("", 14*3600)
	// A time within the rules' years that keeps time.Now's monotonic
	// reading (Add keeps it), whatever the year the test runs in.
	now := time.Now()
	mono := now.Add(time.Date(2026, 3, 1, 8, 0, 0, 123_000, time.UTC).Sub(now))
	times := []time.Time{
		time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 0, 500_000_000, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 0, 250_000_000, time.UTC),
		time.Date(2025, 1, 1, 0, 30, 0, 0, cet),         // 2024-12-31 23:30 UTC
		time.Date(2024, 12, 31, 23, 30, 0, 0, minus130), // 2025-01-01 01:00 UTC
		time.Date(2025, 1, 1, 0, 0, 0, 0, cet),
		time.Date(2025, 1, 1, 0, 0, 0, 0, plus14),
		time.Date(2025, 6, 30, 12, 0, 0, 1000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, minus130),
		time.Date(2024, 2, 29, 12, 0, 0, 0, cet),
		time.Date(2027, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		mono, // carries a monotonic clock reading
		mono.In(cet),
		mono.Round(0), // the same instant without it
	}
	ins := `INSERT INTO %s (id, user_id, ts, note) VALUES (?, ?, ?, ?)`
	for i := range 45 {
		ts := times[i%len(times)]
		args := []any{i + 1, i % 4, ts, fmt.Sprintf("n%d", i%4)}
		if _, err := db.Exec(fmt.Sprintf(ins, "t_ev"), args...); err != nil {
			t.Fatalf("insert %v through sqlhook: %v", ts, err)
		}
		if _, err := oracle.Exec(fmt.Sprintf(ins, "o_ev"), args...); err != nil {
			t.Fatal(err)
		}
	}
	var stored string
	if err := oracle.QueryRow(`SELECT CAST(ts AS TEXT) FROM o_ev WHERE id = 5`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, " +0100 CET") {
		t.Fatalf("the driver stored %q: not its default format (the test's premise)", stored)
	}

	if err := oracle.QueryRow(`SELECT CAST(ts AS TEXT) FROM o_ev WHERE id = 13`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, " m=") {
		t.Fatalf("the driver stored a time with a monotonic reading as %q, without it (the test's premise)", stored)
	}
	// The rows are spread over the years' tables of both data sources.
	for _, tb := range []string{"t_ev_2024", "t_ev_2025", "t_ev_2026", "t_ev_2027"} {
		for j := range 2 {
			var n int
			if err := direct[j].QueryRow(`SELECT COUNT(*) FROM ` + tb).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Errorf("ds_%d.%s holds no row; the routing under test was not exercised", j, tb)
			}
		}
	}

	bound := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	reads := []struct {
		q    string
		args []any
	}{
		{`SELECT id, ts FROM %s ORDER BY ts, id`, nil},
		{`SELECT id, ts FROM %s ORDER BY ts DESC, id DESC LIMIT 7`, nil},
		{`SELECT id FROM %s ORDER BY ts, id LIMIT 5 OFFSET 3`, nil},
		{`SELECT id, CAST(ts AS TEXT) FROM %s ORDER BY 2, 1`, nil},
		{`SELECT id FROM %s WHERE ts >= ? ORDER BY id`, []any{bound}},
		{`SELECT id FROM %s WHERE ts >= ? ORDER BY id`, []any{bound.In(cet)}},
		{`SELECT id FROM %s WHERE ts > ? ORDER BY id`, []any{bound.In(minus130)}},
		{`SELECT id FROM %s WHERE ts < ? ORDER BY id`, []any{bound}},
		{`SELECT id FROM %s WHERE ts <= ? ORDER BY id`, []any{times[4]}},
		{`SELECT id FROM %s WHERE ts BETWEEN ? AND ? ORDER BY id`, []any{times[0], times[2]}},
		{`SELECT id FROM %s WHERE ts = ? ORDER BY id`, []any{times[6]}},
		{`SELECT id FROM %s WHERE ts = ? ORDER BY id`, []any{times[1]}},
		{`SELECT id FROM %s WHERE ts IN (?, ?) ORDER BY id`, []any{times[4], times[5]}},
		{`SELECT id FROM %s WHERE ts = ? ORDER BY id`, []any{times[12]}},
		{`SELECT id FROM %s WHERE ts >= ? AND ts < ? ORDER BY id`, []any{times[13], times[11]}},
		{`SELECT id FROM %s WHERE ts >= '2025-01-01 00:00:00' ORDER BY id`, nil},
		{`SELECT id FROM %s WHERE ts < '2025-01-01 00:30:00 +0100 CET' ORDER BY id`, nil},
		{`SELECT MIN(ts), MAX(ts), COUNT(ts) FROM %s`, nil},
		{`SELECT MIN(ts), MAX(ts) FROM %s WHERE ts < ?`, []any{bound}},
		{`SELECT ts, COUNT(*) FROM %s GROUP BY ts ORDER BY ts`, nil},
		{`SELECT DISTINCT ts FROM %s ORDER BY ts DESC`, nil},
		{`SELECT COUNT(*) FROM %s WHERE ts > ?`, []any{bound}},
	}
	agreed, refused := 0, 0
	for _, r := range reads {
		want, err := timeRows(oracle.Query(fmt.Sprintf(r.q, "o_ev"), r.args...))
		if err != nil {
			t.Fatalf("oracle %s: %v", r.q, err)
		}
		got, err := timeRows(db.Query(fmt.Sprintf(r.q, "t_ev"), r.args...))
		if err != nil {
			if !errors.Is(err, sqlhook.ErrUnsupported) && !errors.Is(err, shardconf.ErrMissingShardingKey) && !errors.Is(err, shardconf.ErrNoRoute) {
				t.Errorf("%s %v: %v; want the oracle's answer or a refusal", r.q, r.args, err)
			}
			refused++
			t.Logf("refused: %s: %v", r.q, err)
			continue
		}
		if got != want {
			t.Errorf("%s %v:\n got %s\nwant %s", r.q, r.args, got, want)
		}
		agreed++
	}
	for _, w := range []struct {
		q    string
		args []any
	}{
		{`UPDATE %s SET note = 'u' WHERE ts < ?`, []any{bound}},
		{`UPDATE %s SET note = 'v' WHERE ts >= ? AND ts <= ?`, []any{bound.In(cet), times[8]}},
		{`DELETE FROM %s WHERE ts = ?`, []any{times[7]}},
		{`DELETE FROM %s WHERE ts > ?`, []any{times[9]}},
	} {
		want, err := oracle.Exec(fmt.Sprintf(w.q, "o_ev"), w.args...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Exec(fmt.Sprintf(w.q, "t_ev"), w.args...)
		if err != nil {
			t.Errorf("%s %v: %v", w.q, w.args, err)
			continue
		}
		wn, _ := want.RowsAffected()
		gn, _ := got.RowsAffected()
		if gn != wn {
			t.Errorf("%s %v: %d rows affected, want %d", w.q, w.args, gn, wn)
		}
	}
	all := `SELECT id, user_id, CAST(ts AS TEXT), note FROM %s ORDER BY id`
	want, err := timeRows(oracle.Query(fmt.Sprintf(all, "o_ev")))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := timeRows(db.Query(fmt.Sprintf(all, "t_ev"))); err != nil || got != want {
		t.Errorf("after the writes:\n got %s, %v\nwant %s", got, err, want)
	}
	t.Logf("%d reads agreed, %d refused", agreed, refused)
}

// timeRows renders a result as text, every value as the driver gave it.
func timeRows(rows *sql.Rows, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		for _, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%T(%v) ", v, v)
		}
		b.WriteString("| ")
	}
	return b.String(), rows.Err()
}
