package zklease_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestLeafNodesCreatedConcurrentlyWithGoClaimsNeverShareAnID: Leaf
// processes creating their nodes while Go processes (other addresses)
// claim theirs at the same moment: every worker id is distinct.
func TestLeafNodesCreatedConcurrentlyWithGoClaimsNeverShareAnID(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	c := connect(t, server)
	createLeafNode(t, c, name, "10.16.0.0", "1", time.Now().UnixMilli()) // the parents exist
	const n = 12
	var (
		mu  sync.Mutex
		ids = map[int64]string{}
		wg  sync.WaitGroup
	)
	add := func(id int64, who string) {
		mu.Lock()
		defer mu.Unlock()
		if prev, dup := ids[id]; dup {
			t.Errorf("worker %d given to %s and to %s", id, prev, who)
		}
		ids[id] = who
	}
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			ip := fmt.Sprintf("10.16.1.%d", i)
			data := fmt.Sprintf(`{"ip":%q,"port":"1","timestamp":%d}`, ip, time.Now().UnixMilli())
			<-start
			// As Leaf creates its node (see createLeafNode).
			p, err := c.Create("/snowflake/"+name+"/forever/"+ip+":1-", []byte(data), zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				t.Error(err)
				return
			}
			id, err := strconv.ParseInt(p[len(p)-10:], 10, 64)
			if err != nil {
				t.Error(err)
				return
			}
			add(id, "Leaf "+ip)
		})
		wg.Go(func() {
			s, err := zklease.New(zklease.Config{Servers: []string{server}, Name: name, Addr: fmt.Sprintf("10.16.2.%d:1", i),
				SessionTimeout: testSessionTimeout})
			if err != nil {
				t.Error(err)
				return
			}
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			l, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { l.Close() })
			add(l.Worker(), fmt.Sprintf("Go 10.16.2.%d:1", i))
		})
	}
	close(start)
	wg.Wait()
	if len(ids) != 2*n {
		t.Fatalf("%d distinct ids for %d claimants", len(ids), 2*n)
	}
}
