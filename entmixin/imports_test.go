package entmixin_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyKeygenAndEnt keeps the packages' dependency direction:
// entmixin builds on keygen (with the standard-library-only internal
// packages keygen uses) and ent, and on no router, driver or other ORM.
func TestImportsOnlyKeygenAndEnt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "github.com/shardkey/shardkey/entmixin", dep == "github.com/shardkey/shardkey/keygen",
			dep == "github.com/shardkey/shardkey/internal/dialect",
			strings.HasPrefix(dep, "entgo.io/ent/"):
		case strings.HasPrefix(dep, "github.com/shardkey/"), strings.Contains(dep, "gorm"),
			strings.Contains(dep, "pgx"), strings.Contains(dep, "mysql"), strings.Contains(dep, "sqlite"):
			t.Errorf("entmixin depends on %s", dep)
		}
	}
}
