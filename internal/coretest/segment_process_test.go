package coretest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

const (
	segChildEnv    = "SHARDKEY_SEGMENT_CHILD"
	segChildDriver = "SHARDKEY_SEGMENT_DRIVER"
	segChildDSN    = "SHARDKEY_SEGMENT_DSN"
)

// TestSegmentChildProcess is a child of TestSegmentEightProcesses: 8
// goroutines draw keys from one biz_tag and print them.
func TestSegmentChildProcess(t *testing.T) {
	if os.Getenv(segChildEnv) == "" {
		t.Skip("child process of TestSegmentEightProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv(segChildEnv))
	db := openSegDB(t, segDB{driver: os.Getenv(segChildDriver)}, os.Getenv(segChildDSN))
	defer db.Close()
	g := newSegment(t, db, keygen.Props{"biz-tag": "procs", "step": "500", "min-step": "500", "max-step": "500"})
	defer g.(io.Closer).Close()
	keys := make([][]int64, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / 8 {
				id, err := g.NextID(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				keys[i] = append(keys[i], id)
			}
		}()
	}
	wg.Wait()
	w := bufio.NewWriter(os.Stdout)
	for _, ks := range keys {
		for _, id := range ks {
			fmt.Fprintln(w, id)
		}
	}
	w.Flush()
}

// TestSegmentEightProcesses: 8 processes × 8 goroutines draw from one
// biz_tag at once, with ranges small enough to be refilled many times: no
// key is issued twice, none is zero, and max_id accounts for every range.
func TestSegmentEightProcesses(t *testing.T) {
	if os.Getenv(segChildEnv) != "" {
		t.Skip("in a child process")
	}
	for _, d := range segDBs {
		t.Run(d.name, func(t *testing.T) {
			dsn := d.dsn(t, "segment_procs_"+d.name)
			const procs, per = 8, 8000
			outs := make([][]int64, procs)
			var wg sync.WaitGroup
			for i := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command(os.Args[0], "-test.run=^TestSegmentChildProcess$", "-test.count=1")
					cmd.Env = append(os.Environ(), segChildEnv+"="+strconv.Itoa(per), segChildDriver+"="+d.driver, segChildDSN+"="+dsn)
					var stderr strings.Builder
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if err != nil {
						t.Errorf("process %d: %v\n%s", i, err, stderr.String())
						return
					}
					for _, line := range strings.Fields(string(out)) {
						if id, err := strconv.ParseInt(line, 10, 64); err == nil {
							outs[i] = append(outs[i], id)
						}
					}
				}()
			}
			wg.Wait()
			seen := map[int64]bool{}
			var top int64
			for i, ks := range outs {
				if len(ks) != per {
					t.Fatalf("process %d printed %d keys, want %d", i, len(ks), per)
				}
				for _, id := range ks {
					if id <= 0 || seen[id] {
						t.Fatalf("key %d zero or issued twice", id)
					}
					seen[id] = true
					top = max(top, id)
				}
			}
			db := openSegDB(t, d, dsn)
			defer db.Close()
			var maxID int64
			if err := db.QueryRow("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'procs'").Scan(&maxID); err != nil {
				t.Fatal(err)
			}
			if top >= maxID {
				t.Errorf("key %d at or beyond max_id %d", top, maxID)
			}
		})
	}
}
