package merge

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// divisionCases are sums of many magnitudes and scales (NBASE digit
// boundaries included) with counts from 1 to 10^9.
func divisionCases() [][2]string {
	rng := rand.New(rand.NewPCG(3, 5))
	cases := [][2]string{
		{"9999", "1"}, {"10000", "1"}, {"9999", "9999"}, {"10000", "9999"}, {"0.0001", "1"}, {"0.00009999", "3"},
		{"99999999", "10000"}, {"1", "10000"}, {"1", "100000000"}, {"-7", "2"}, {"0", "7"}, {"0.000", "3"},
		{"123456789012345678901234567890.123456789", "7"}, {"5", "10"}, {"-5", "10"}, {"0.5", "1"},
	}
	for range 400 {
		var sb strings.Builder
		if rng.IntN(2) == 0 {
			sb.WriteByte('-')
		}
		sb.WriteString(strconv.FormatUint(rng.Uint64N(1<<(rng.IntN(63)+1)), 10))
		if sc := rng.IntN(12); sc > 0 {
			sb.WriteByte('.')
			for range sc {
				sb.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		count := strconv.FormatUint(1+rng.Uint64N(uint64(1)<<(rng.IntN(30)+1)), 10)
		cases = append(cases, [2]string{sb.String(), count})
	}
	return cases
}

// PostgreSQL's avg is numeric_div(sum, count): the same division over
// many magnitudes.
func TestPostgresNumericDivisionEqualsOurs(t *testing.T) {
	db, err := sql.Open("pgx", dbtest.Postgres(t, "merge_division"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range divisionCases() {
		var want string
		if err := db.QueryRow(fmt.Sprintf("SELECT (%s::numeric / %s::bigint)::text", c[0], c[1])).Scan(&want); err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseInt(c[1], 10, 64)
		if got := pgDivide(dec(t, c[0]), n).String(); got != want {
			t.Errorf("%s / %s: got %s, want %s", c[0], c[1], got, want)
		}
	}
}

// MariaDB's AVG divides at the argument's scale plus
// div_precision_increment, rounding half away from zero.
func TestMariaDBDecimalAvgEqualsOurs(t *testing.T) {
	db, err := sql.Open("mysql", dbtest.MySQL(t, "merge_division"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE one (x DECIMAL(38,11))"); err != nil {
		t.Fatal(err)
	}
	for _, c := range divisionCases()[:150] {
		if len(strings.TrimLeft(strings.Split(c[0], ".")[0], "-")) > 27 {
			continue // outside DECIMAL(38,11)
		}
		n, _ := strconv.ParseInt(c[1], 10, 64)
		if n > 2000 {
			n = n%2000 + 1
		}
		// AVG over n rows, all x but one 0: sum x, count n.
		if _, err := db.Exec("DELETE FROM one"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO one SELECT ? UNION ALL SELECT 0 FROM seq_1_to_"+strconv.FormatInt(n, 10)+" LIMIT ?", c[0], n); err != nil {
			t.Fatal(err)
		}
		var want, sum string
		var count int64
		if err := db.QueryRow("SELECT AVG(x), SUM(x), COUNT(*) FROM one").Scan(&want, &sum, &count); err != nil || count != n {
			t.Fatalf("%d rows of %d: %v", count, n, err)
		}
		if got := divRound(dec(t, sum), n, 15).String(); got != want {
			t.Errorf("AVG: %s / %d: got %s, want %s", sum, n, got, want)
		}
	}
}
