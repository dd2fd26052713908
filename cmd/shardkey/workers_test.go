package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease"
)

func TestWorkersListAndRelease(t *testing.T) {
	dsn := dbtest.Postgres(t, "cli_workers")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	src, err := workerlease.New(context.Background(), workerlease.Config{DB: db, Namespace: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(src))
	if err != nil {
		t.Fatal(err)
	}
	defer g.(interface{ Close() error }).Close()

	var out, errOut bytes.Buffer
	if code := run([]string{"workers", "list", "-dsn", dsn, "-namespace", "cli", "-o", "json"}, &out, &errOut); code != exitOK {
		t.Fatalf("list: exit %d: %s", code, errOut.String())
	}
	var rows []struct {
		Worker int64  `json:"worker"`
		Owner  string `json:"owner"`
		Held   bool   `json:"held"`
	}
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(rows) != 1 || !rows[0].Held || rows[0].Owner == "" {
		t.Fatalf("list: %+v", rows)
	}
	out.Reset()
	if code := run([]string{"workers", "release", "-dsn", dsn, "-namespace", "cli", "0"}, &out, &errOut); code != exitOK {
		t.Fatalf("release: exit %d: %s", code, errOut.String())
	}
	out.Reset()
	run([]string{"workers", "list", "-dsn", dsn, "-namespace", "cli"}, &out, &errOut)
	if !strings.Contains(out.String(), "false") {
		t.Errorf("after release the slot is still held:\n%s", out.String())
	}
	// release -o json: what it released.
	out.Reset()
	if code := run([]string{"workers", "release", "-o", "json", "-dsn", dsn, "-namespace", "cli", "0"}, &out, &errOut); code != exitOK {
		t.Fatalf("release -o json: exit %d: %s", code, errOut.String())
	}
	var rel struct {
		Released  *int64 `json:"released"`
		Namespace string `json:"namespace"`
	}
	if err := json.Unmarshal(out.Bytes(), &rel); err != nil || rel.Released == nil || *rel.Released != 0 || rel.Namespace != "cli" {
		t.Errorf("release -o json: %v %s", err, out.String())
	}
	// Usage errors exit 2 and never echo the DSN.
	errOut.Reset()
	if code := run([]string{"workers", "drop", "-dsn", "postgres://u:s3cret@127.0.0.1:1/x"}, &out, &errOut); code != exitUsage {
		t.Errorf("unknown subcommand: exit %d", code)
	}
	errOut.Reset()
	if code := run([]string{"workers", "list", "-dsn", "postgres://u:s3cret@127.0.0.1:1/x"}, &out, &errOut); code != exitRuntime {
		t.Errorf("unreachable database: exit %d", code)
	}
	if strings.Contains(errOut.String(), "s3cret") {
		t.Errorf("the password reached the output: %s", errOut.String())
	}
}
