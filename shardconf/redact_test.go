package shardconf

import (
	"strings"
	"testing"
)

func TestRedactedDSNNeverShowsThePassword(t *testing.T) {
	for _, tc := range []struct{ dsn, secret, want string }{
		{"postgres://app:s3cret@127.0.0.1:5432/shard0", "s3cret", "postgres://app:xxxxx@127.0.0.1:5432/shard0"},
		{"app:s3cret@tcp(127.0.0.1:3306)/shard1", "s3cret", "app:xxxxx@tcp(127.0.0.1:3306)/shard1"},
		// go-sql-driver/mysql ends the user info at the last '@' before the
		// database, so a password may hold '@' (and ':').
		{"app:p@s:w@rd9@tcp(127.0.0.1:3306)/shard1?parseTime=true", "rd9@tcp", "app:xxxxx@tcp(127.0.0.1:3306)/shard1?parseTime=true"},
		{"app:p@s9@tcp(127.0.0.1:3306)", "s9@", "app:xxxxx@tcp(127.0.0.1:3306)"},
		{"host=127.0.0.1 user=app password=s3cret dbname=x", "s3cret", "host=127.0.0.1 user=app password=xxxxx dbname=x"},
	} {
		got := DataSource{DSN: tc.dsn}.RedactedDSN()
		if got != tc.want {
			t.Errorf("RedactedDSN(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
		if strings.Contains(got, tc.secret) {
			t.Errorf("RedactedDSN(%q) = %q still holds %q", tc.dsn, got, tc.secret)
		}
	}
}
