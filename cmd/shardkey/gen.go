package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/shardkey/shardkey/keygen"
)

// maxGen is the most keys one gen invocation issues.
const maxGen = 1_000_000

var genCmd = &command{
	name:     "gen",
	synopsis: "[-type T] [-props k=v,...] [-n N] [-format dec|base62|json] [-o text|json]",
	summary:  "generate keys",
	details: `Gen builds a generator of the given type from props and prints n keys,
one per line, or as a JSON array with -o json (int64 IDs as decimal
strings, which JavaScript reads without losing digits).

Every Snowflake-family type (SNOWFLAKE, SNOWFLAKE_JS, UID, LEAF_SNOWFLAKE) requires
worker-id: two processes sharing a worker id issue duplicate keys.
-format applies to int64 keys: dec (decimal), base62 (compact, URL-safe;
pass it to decode with a b62: prefix) or json (a quoted decimal string).
`,
	examples: `  shardkey gen -props worker-id=1
  shardkey gen -type SNOWFLAKE -props worker-id=1,max-vibration-offset=3 -n 10
  shardkey gen -props worker-id=1,datacenter-bits=3,datacenter-id=2 -o json
  shardkey gen -type SNOWFLAKE_JS -props worker-id=3 -format base62
  shardkey gen -type UID -props worker-id=42 -n 5
  shardkey gen -type UUID -props version=7 -n 3
`,
	setup: func(fs *flag.FlagSet) action {
		g := addGeneratorFlags(fs)
		n := fs.Int("n", 1, fmt.Sprintf("number of keys, 1..%d", maxGen))
		format := choiceFlag(fs, "format", "`encoding` of int64 keys: dec, base62 or json", "dec", "base62", "json")
		out := outputFlag(fs)
		return func(args []string, stdout io.Writer) error {
			if len(args) > 0 {
				return usageErrorf("unexpected argument %q", args[0])
			}
			if *n < 1 || *n > maxGen {
				return usageErrorf("-n must be 1..%d, got %d", maxGen, *n)
			}
			return gen(stdout, g, *n, format.value, out.value)
		}
	},
}

func gen(stdout io.Writer, gf generatorFlags, n int, format, out string) error {
	props, err := gf.parse()
	if err != nil {
		return err
	}
	g, err := keygen.New(*gf.typ, props)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	if idg, ok := g.(keygen.IDGenerator); ok {
		err = genIDs(w, idg, n, format, out)
	} else {
		err = genKeys(w, g, n, format, out)
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

// genIDs writes n int64 keys of g.
func genIDs(w *bufio.Writer, g keygen.IDGenerator, n int, format, out string) error {
	ctx := context.Background()
	ids := make([]int64, n)
	var err error
	if n == 1 {
		ids[0], err = g.NextID(ctx)
	} else {
		err = g.NextIDs(ctx, ids) // reserves sequence ranges in bulk
	}
	if err != nil {
		return err
	}
	return writeIDs(w, ids, format, out)
}

// genKeys writes n keys of g that are not int64 (UUID strings).
func genKeys(w *bufio.Writer, g keygen.Generator, n int, format, out string) error {
	if format == "base62" {
		return usageErrorf("-format base62 needs int64 keys; %s keys are not", g.Type())
	}
	ctx := context.Background()
	keys := make([]any, n)
	for i := range keys {
		var err error
		if keys[i], err = g.NextKey(ctx); err != nil {
			return err
		}
	}
	if out == "json" {
		return writeJSON(w, keys)
	}
	for _, k := range keys {
		if format == "json" {
			b, err := json.Marshal(k)
			if err != nil {
				return err
			}
			w.Write(b)
		} else {
			fmt.Fprint(w, k)
		}
		w.WriteByte('\n')
	}
	return nil
}

func writeIDs(w *bufio.Writer, ids []int64, format, out string) error {
	if out == "json" {
		if format == "base62" {
			s := make([]string, len(ids))
			for i, id := range ids {
				s[i] = keygen.ID(id).Base62()
			}
			return writeJSON(w, s)
		}
		s := make([]keygen.ID, len(ids))
		for i, id := range ids {
			s[i] = keygen.ID(id) // MarshalJSON: a quoted decimal string
		}
		return writeJSON(w, s)
	}
	var buf []byte
	for _, id := range ids {
		buf = buf[:0]
		switch format {
		case "base62":
			buf = append(buf, keygen.ID(id).Base62()...)
		case "json":
			b, err := keygen.ID(id).MarshalJSON()
			if err != nil {
				return err
			}
			buf = append(buf, b...)
		default:
			buf = strconv.AppendInt(buf, id, 10)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON writes v as indented JSON and a newline, with <, > and &
// as themselves (SQL and conditions are not HTML).
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
