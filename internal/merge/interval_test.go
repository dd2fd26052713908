package merge

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

func TestIntervalSpans(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // span in µs
	}{
		{"00:00:00", "0"},
		{"1 mon", "2592000000000"},
		{"30 days", "2592000000000"},
		{"1 year 2 mons -3 days +04:05:06.5", fmt.Sprint(int64(14*30-3)*86400_000_000 + (4*3600+5*60+6)*1_000_000 + 500_000)},
		{"-1 days +02:00:00", fmt.Sprint(-86400_000_000 + 2*3600_000_000)},
		{"-00:00:00.000001", "-1"},
		{"100:00:00", "360000000000"},
	} {
		got, err := intervalSpan(tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("%q: %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "P1Y2M", "1-2", "@ 1 year", "infinity", "1 fortnight", "1 day 2", "01:00:00 1 day"} {
		if _, err := intervalSpan(bad); err == nil {
			t.Errorf("%q read as an interval", bad)
		}
	}
}

// Intervals ordered, grouped and MIN/MAXed from per-range results equal
// PostgreSQL's own answers ('1 mon' equals '30 days').
func TestIntervalsMergeAsPostgreSQLComparesThem(t *testing.T) {
	dsn := dbtest.Postgres(t, "merge_interval")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(8, 9))
	var vals []string
	for id := range dialectRows {
		var v string
		switch rng.IntN(6) {
		case 0:
			v = "NULL"
		case 1: // mixed signs, equal spans written differently
			v = []string{"'1 mon'", "'30 days'", "'1 mon -30 days'", "'0'", "'-1 day 24:00:00'", "'720:00:00'"}[rng.IntN(6)]
		default:
			sign := 1 - 2*rng.IntN(2)
			v = fmt.Sprintf("make_interval(%d, %d, 0, %d, %d, 0, %d.%06d)", sign*rng.IntN(3), sign*rng.IntN(14), sign*rng.IntN(40),
				sign*rng.IntN(30), sign*rng.IntN(60), rng.IntN(1_000_000))
		}
		vals = append(vals, fmt.Sprintf("(%d, %d, %s)", id, id%7, v))
	}
	for _, q := range []string{"CREATE TABLE iv (id int PRIMARY KEY, g int, v interval)", "INSERT INTO iv VALUES " + strings.Join(vals, ", ")} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	d := &dialectDB{name: "postgres", dialect: PostgreSQL, drv: db.Driver(), dsn: dsn}
	for _, desc := range []bool{false, true} {
		dir := map[bool]string{false: "", true: " DESC"}[desc]
		order := "ORDER BY v" + dir + ", id"
		want := readAll(t, d.query(t, d.conn(t, 0), "SELECT id, v FROM iv "+order))
		p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 1, Desc: desc, NullsFirst: desc}, {Col: 0}}, Limit: -1}
		got, _, err := d.mergeShards(t, "SELECT id, v FROM iv WHERE id >= ? AND id < ? "+order, p)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, order, got, want, noFloats)
	}
	// Grouped by the span: counts and the least id of each group (the
	// text a group shows is PostgreSQL's choice among equal spans).
	want := readAll(t, d.query(t, d.conn(t, 0), "SELECT COUNT(*), MIN(id) FROM iv GROUP BY v ORDER BY MIN(id)"))
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{2},
		Aggs: []Agg{{Col: 0, Func: Count}, {Col: 1, Func: Min}}, OrderBy: []Key{{Col: 1}}, Limit: -1}
	got, _, err := d.mergeShards(t, "SELECT COUNT(*), MIN(id), v FROM iv WHERE id >= ? AND id < ? GROUP BY v", p)
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "GROUP BY v", got, want, noFloats)

	// MIN and MAX: the same spans.
	want = readAll(t, d.query(t, d.conn(t, 0), "SELECT MIN(v), MAX(v) FROM iv"))
	p = Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, Aggs: []Agg{{Col: 0, Func: Min}, {Col: 1, Func: Max}}, Limit: -1}
	got, _, err = d.mergeShards(t, "SELECT MIN(v), MAX(v) FROM iv WHERE id >= ? AND id < ?", p)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 2 {
		g, err1 := intervalSpan(got[0][c].(string))
		w, err2 := intervalSpan(want[0][c].(string))
		if err1 != nil || err2 != nil || g.Cmp(w) != 0 {
			t.Errorf("MIN/MAX column %d: got %v, want %v", c, got[0][c], want[0][c])
		}
	}
}
