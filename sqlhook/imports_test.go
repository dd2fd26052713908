package sqlhook

import (
	"os/exec"
	"strings"
	"testing"
)

// TestParsersAreLinkedOnlyByTheirDialectPackage: package sqlhook links no
// SQL parser, sqlhook/postgres and sqlhook/sqlite link no MySQL parser and
// sqlhook/mysql no PostgreSQL one, so a program links only the parsers of
// the dialects it imports.
func TestParsersAreLinkedOnlyByTheirDialectPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	mysqlParser := []string{"github.com/pingcap/"}
	pgParser := []string{"github.com/pganalyze/pg_query_go", "github.com/wasilibs/go-pgquery",
		"github.com/tetratelabs/wazero", "google.golang.org/protobuf"}
	for _, tc := range []struct {
		pkg    string
		forbid []string
	}{
		{".", append(append([]string{}, mysqlParser...), pgParser...)},
		{"./postgres", mysqlParser},
		{"./sqlite", mysqlParser},
		{"./mysql", pgParser},
	} {
		for _, cgo := range []string{"1", "0"} {
			cmd := exec.Command("go", "list", "-deps", tc.pkg)
			cmd.Env = append(cmd.Environ(), "CGO_ENABLED="+cgo)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tc.pkg, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range tc.forbid {
					if strings.HasPrefix(dep, f) {
						t.Errorf("%s (CGO_ENABLED=%s) links %s", tc.pkg, cgo, dep)
					}
				}
			}
		}
	}
}
