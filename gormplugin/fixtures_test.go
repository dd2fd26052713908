package gormplugin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// twoByTwoRules is testdata/two_by_two.yaml for table: two data sources
// by user_id, two tables in each by id.
func twoByTwoRules(t *testing.T, table string) *shardconf.Router {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "two_by_two.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return rulesOf(t, strings.ReplaceAll(string(text), "TABLE", table))
}
