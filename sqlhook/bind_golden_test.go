package sqlhook

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir/irtest"
)

// TestBindsStatementsAsGolden binds the statements of testdata/bind/*.txt
// to their arguments (@args) and compares the statements each data source
// receives (routing, INSERT rows split by target, generated keys, LIMIT of
// a merged read, broadcast copies) or the refusal with the text written
// beside them; go test -update rewrites it. No database is reached: bind
// decides everything before a statement runs.
func TestBindsStatementsAsGolden(t *testing.T) {
	irtest.RunFunc(t, "testdata/bind/*.txt", bindSummary)
}

func bindSummary(t *testing.T, c *irtest.Case) string {
	d := PostgreSQL
	switch c.Dialect {
	case "", "postgres":
	case "mysql":
		d = MySQL
	case "sqlite":
		d = SQLite
	default:
		t.Fatalf("%s: unknown @dialect %s", c.Name, c.Dialect)
	}
	// A stopped clock and a sequence scope of the case's own: the keys
	// generated are the same in every run.
	clock := keygentest.NewClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	r := irtest.Router(t, c.Rules, shardconf.WithKeyGenOptions(keygen.WithClock(clock),
		keygen.WithSequenceScope(keygen.NewSequenceScope())))
	var opts []Option
	if c.Scatter {
		opts = append(opts, WithScatter())
	}
	if c.Binary {
		opts = append(opts, WithBinaryCollation())
	}
	h, err := newHook(r, r.DataSources(), r.DataSources()[0], d, buildOptions(opts))
	if err != nil {
		t.Fatal(err)
	}
	args, err := parseArgs(c.Args)
	if err != nil {
		t.Fatalf("%s: @args: %v", c.Name, err)
	}
	ctx := context.Background()
	for _, hint := range c.Hints {
		f := strings.Fields(hint)
		if len(f) != 3 {
			t.Fatalf("%s: @hint wants table database-value table-value, not %q", c.Name, hint)
		}
		var hv shardconf.Hint
		for i, v := range f[1:] {
			if v == "-" {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: @hint value %q: %v", c.Name, v, err)
			}
			if i == 0 {
				hv.Database = []any{n}
			} else {
				hv.Table = []any{n}
			}
		}
		ctx = shardconf.WithHint(ctx, f[0], hv)
	}
	rt, err := h.routeContext(ctx, c.SQL, args)
	if err != nil {
		return "refused: " + err.Error()
	}
	var b strings.Builder
	switch {
	case rt.passthrough:
		b.WriteString("passthrough\n")
	case rt.copies:
		b.WriteString("every copy of a broadcast table (the caller sees one)\n")
	}
	if rt.merge.merge != nil && len(rt.units) > 1 {
		fmt.Fprintf(&b, "merged: offset %d, limit %d\n", rt.merge.offset, rt.merge.limit)
	}
	for _, u := range rt.units {
		fmt.Fprintf(&b, "%s: %s\n", u.ds, u.sql)
		if len(u.args) > 0 {
			var vs []string
			for _, a := range u.args {
				v := fmt.Sprintf("%#v", a.Value)
				if a.Name != "" {
					v = a.Name + "=" + v
				}
				vs = append(vs, v)
			}
			fmt.Fprintf(&b, "  args: %s\n", strings.Join(vs, ", "))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// parseArgs reads @args: integers, "strings" (Go syntax), NULL, and
// name=value for sql.Named, comma-separated.
func parseArgs(s string) ([]driver.NamedValue, error) {
	var out []driver.NamedValue
	for s = strings.TrimSpace(s); s != ""; {
		var name string
		if i := strings.IndexAny(s, "=,\""); i > 0 && s[i] == '=' {
			name, s = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		}
		var tok string
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
			}
			tok, s = q, s[len(q):]
		} else if i := strings.IndexByte(s, ','); i >= 0 {
			tok, s = s[:i], s[i:]
		} else {
			tok, s = s, ""
		}
		tok = strings.TrimSpace(tok)
		var v driver.Value
		switch {
		case tok == "NULL":
		case strings.HasPrefix(tok, `"`):
			v, _ = strconv.Unquote(tok)
		default:
			n, err := strconv.ParseInt(tok, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer, a quoted string or NULL", tok)
			}
			v = n
		}
		out = append(out, driver.NamedValue{Name: name, Ordinal: len(out) + 1, Value: v})
		s = strings.TrimPrefix(strings.TrimSpace(s), ",")
		s = strings.TrimSpace(s)
	}
	return out, nil
}
