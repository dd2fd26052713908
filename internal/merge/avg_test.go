package merge

import (
	"database/sql/driver"
	"errors"
	"math/big"
	"testing"
)

func dec(t *testing.T, s string) decimal {
	t.Helper()
	n, ok, err := numOf(s, clsNumber)
	if err != nil || !ok {
		t.Fatalf("%q: %v", s, err)
	}
	return n.dec()
}

func TestPostgresAvgScaleFollowsNumericDivision(t *testing.T) {
	for _, tc := range []struct {
		sum   string
		count int64
		want  string
	}{
		{"3", 2, "1.5000000000000000"},
		{"5", 3, "1.6666666666666667"},
		{"-5", 3, "-1.6666666666666667"},
		{"100000", 3, "33333.333333333333"},
		{"0.001", 3, "0.00033333333333333333"},
		{"9999", 10000, "0.99990000000000000000"},
		{"10000", 10000, "1.00000000000000000000"},
		{"2.50", 1, "2.5000000000000000"},
		{"1.123456789012345678901", 7, "0.160493827001763668414"},
		{"0", 5, "0.00000000000000000000"},
		{"NaN", 2, "NaN"},
		{"-Infinity", 2, "-Infinity"},
	} {
		if got := pgDivide(dec(t, tc.sum), tc.count).String(); got != tc.want {
			t.Errorf("%s/%d = %s, want %s", tc.sum, tc.count, got, tc.want)
		}
	}
}

func TestNBaseLeadingDigit(t *testing.T) {
	for _, tc := range []struct {
		u             int64
		scale, w, dig int
	}{
		{1, 0, 0, 1}, {9999, 0, 0, 9999}, {10000, 0, 1, 1}, {123456, 0, 1, 12},
		{1, 3, -1, 10}, {5, 1, -1, 5000}, {1, 4, -1, 1}, {1, 5, -2, 1000}, {0, 0, 0, 0},
	} {
		w, d := nbaseLead(big.NewInt(tc.u), tc.scale)
		if w != tc.w || d != tc.dig {
			t.Errorf("%d e-%d: weight %d digit %d, want %d %d", tc.u, tc.scale, w, d, tc.w, tc.dig)
		}
	}
}

func TestMySQLAvgRoundsHalfAwayFromZeroAtTheColumnScale(t *testing.T) {
	for _, tc := range []struct {
		sum   string
		count int64
		scale int
		want  string
	}{
		{"5", 3, 4, "1.6667"},
		{"-5", 3, 4, "-1.6667"},
		{"1", 8, 2, "0.13"},
		{"-1", 8, 2, "-0.13"},
		{"1.005", 1, 7, "1.0050000"},
		{"12345.678", 1000, 7, "12.3456780"},
	} {
		if got := divRound(dec(t, tc.sum), tc.count, tc.scale).String(); got != tc.want {
			t.Errorf("%s/%d@%d = %s, want %s", tc.sum, tc.count, tc.scale, got, tc.want)
		}
	}
}

func TestAvgMergesSumsAndCountsInTheDialectsType(t *testing.T) {
	mk := func(types []string, rows ...[]driver.Value) *fakeRows {
		s := shard([]string{"avg", "sum", "count"}, types, rows...)
		s.prec = map[int][2]int64{0: {14, 4}}
		return s
	}
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Avg, Args: []int{1, 2}}}, Limit: -1}
	pg := []string{"NUMERIC", "INT8", "INT8"}
	expect(t, run(t, p, mk(pg, row("1.5", int64(3), int64(2))), mk(pg, row("2", int64(2), int64(1)))), `["1.6666666666666667"]`)
	expect(t, run(t, p, mk(pg, row(nil, nil, int64(0)))), `[NULL]`)

	p.Dialect = MySQL
	my := []string{"DECIMAL", "DECIMAL", "BIGINT"}
	expect(t, run(t, p, mk(my, row([]byte("1.5000"), []byte("3"), []byte("2"))), mk(my, row([]byte("2.0000"), []byte("2"), []byte("1")))), `[b"1.6667"]`)
	myf := []string{"DOUBLE", "DOUBLE", "BIGINT"}
	expect(t, run(t, p, mk(myf, row(0.5, 0.5, int64(1))), mk(myf, row(1.0, 2.0, int64(2)))), `[f0.8333333333333334]`)

	p.Dialect = SQLite
	sq := []string{"", "", ""}
	expect(t, run(t, p, mk(sq, row(1.5, int64(3), int64(2))), mk(sq, row(2.0, int64(2), int64(1)))), `[f1.6666666666666667]`)
}

func TestAvgOfAnUnsupportedTypeIsRefused(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Avg, Args: []int{1, 2}}}, Limit: -1}
	s := shard([]string{"avg", "sum", "count"}, []string{"INTERVAL", "INTERVAL", "INT8"})
	if _, err := runErr(t, p, s); err == nil {
		t.Error("AVG of an interval merged")
	}
}

func TestDecimalAvgOfFloatSumsIsRefused(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Avg, Args: []int{1, 2}}}, Limit: -1}
	s := shard([]string{"avg", "sum", "count"}, []string{"NUMERIC", "FLOAT8", "INT8"}, row("1.5", 3.0, int64(2)))
	if _, err := runErr(t, p, s); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("err %v", err)
	}
}
