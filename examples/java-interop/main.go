// Command java-interop loads the rule file a ShardingSphere (Java) fleet
// uses, sharding.yaml, and shows that the Go side reads its keys and routes
// its rows as the JVMs do: it decodes a SNOWFLAKE key with ShardingSphere's
// layout (41 bits of milliseconds since 2016-11-01, 10 bits of worker id,
// 12 bits of sequence), issues one key of its own, and routes sample values
// with MOD and HASH_MOD (Java's hashCode). See README.md for the settings
// both sides must share; main_test.go checks the same values against numbers
// computed with Java 17.
//
//	go run ./examples/java-interop
//	go run ./examples/java-interop -epoch 2016-11-01T00:00:00+08:00   # JVMs running in +08:00
//	go run ./examples/java-interop -decode 975375734832918570
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

//go:embed sharding.yaml
var rules []byte

// KnownID is a ShardingSphere SNOWFLAKE key composed by hand from the
// documented layout: worker 7, sequence 42, issued 2024-03-15T12:34:56.789Z
// by a JVM whose time zone is UTC:
//
//	(1710506096789 - 1477958400000) << 22 | 7 << 12 | 42 = 975375734832918570
const KnownID = 975375734832918570

func main() {
	worker := flag.String("worker-id", "900", "this Go process's worker id (keep it out of the JVMs' range)")
	epoch := flag.String("epoch", "2016-11-01T00:00:00Z", "SNOWFLAKE epoch: 2016-11-01 00:00 in the JVMs' time zone")
	decode := flag.Int64("decode", KnownID, "a ShardingSphere key to decode")
	flag.Parse()
	if err := run(context.Background(), *worker, *epoch, *decode, os.Stdout); err != nil {
		slog.Error("example failed", "err", err)
		os.Exit(1)
	}
}

// newRouter compiles the shared rule file with this process's worker id
// and epoch added to its key generator.
func newRouter(worker, epoch string, opts ...keygen.Option) (*shardconf.Router, error) {
	cfg, err := shardconf.Parse(rules)
	if err != nil {
		return nil, err
	}
	return shardconf.NewRouter(cfg,
		shardconf.WithKeyGenProps(keygen.Props{"worker-id": worker, "epoch": epoch}),
		shardconf.WithKeyGenOptions(opts...))
}

func run(ctx context.Context, worker, epoch string, decode int64, stdout io.Writer) error {
	r, err := newRouter(worker, epoch)
	if err != nil {
		return err
	}
	layout, err := keygen.LayoutFor("SNOWFLAKE", keygen.Props{"epoch": epoch})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "layout: %s, epoch %s\n", layout, layout.Epoch.Format(time.RFC3339))

	p, err := layout.Decompose(decode)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "decode %d: time %s, worker %d, sequence %d\n",
		decode, p.Time.UTC().Format(time.RFC3339Nano), p.Worker, p.Sequence)

	if err := newKey(ctx, r, layout, stdout); err != nil {
		return err
	}
	return hashRoutes(r, stdout)
}

// newKey issues a key from t_order's generator, decodes it with the Java
// layout and routes it.
func newKey(ctx context.Context, r *shardconf.Router, layout keygen.Layout, stdout io.Writer) error {
	col, gen, ok := r.KeyGenerator("t_order")
	if !ok {
		return fmt.Errorf("t_order has no key generator")
	}
	key, err := gen.NextKey(ctx)
	if err != nil {
		return err
	}
	id := key.(int64)
	q, err := layout.Decompose(id)
	if err != nil {
		return err
	}
	ts, err := r.Route("t_order", shardconf.Eq("user_id", int64(7)), shardconf.Eq(col, id))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "new %s %d: time %s, worker %d, sequence %d; user_id 7 -> %v\n",
		col, id, q.Time.UTC().Format(time.RFC3339Nano), q.Worker, q.Sequence, ts)
	return nil
}

// hashRoutes routes strings and longs by HASH_MOD and MOD, as a Java
// ShardingSphere fleet routes them.
func hashRoutes(r *shardconf.Router, stdout io.Writer) error {
	for _, c := range []struct {
		table, col string
		v          any
	}{
		{"t_user", "email", "alice@example.com"},
		{"t_user", "email", "李雷@example.cn"},
		{"t_user", "email", "polygenelubricants"}, // String.hashCode is Integer.MIN_VALUE
		{"t_account", "account_id", int64(-5)},
		{"t_account", "account_id", int64(KnownID)},
	} {
		ts, err := r.Route(c.table, shardconf.Eq(c.col, c.v))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s=%v -> %v\n", c.table, c.col, c.v, ts)
	}
	return nil
}
