package keygen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// A fixed clock keeps the examples' output stable; real code omits WithClock.
var exampleClock = keygentest.NewClock(time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC))

func ExampleNew() {
	g, err := keygen.New("SNOWFLAKE", keygen.Props{
		"worker-id": "7",
		"max-tolerate-time-difference-milliseconds": "10",
	}, keygen.WithClock(exampleClock))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, _ := g.NextKey(context.Background())
	fmt.Println(g.Type(), key)
	// Output: SNOWFLAKE 1330816588185628672
}

func ExampleNew_missingWorkerID() {
	_, err := keygen.New("SNOWFLAKE", keygen.Props{"max-vibration-offset": "3"})
	fmt.Println(err)
	// Output: keygen: SNOWFLAKE prop "worker-id": required; allowed: an integer 0..1023
}

func ExampleNewID() {
	g, _ := keygen.NewID("SNOWFLAKE_JS", keygen.Props{"worker-id": "3"}, keygen.WithClock(exampleClock))
	ids := make([]int64, 3)
	_ = g.NextIDs(context.Background(), ids)
	fmt.Println(ids, ids[2] < 1<<53)
	// Output: [522083893444608 522083893444609 522083893444610] true
}

func ExampleLayout_Decompose() {
	g, _ := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "7"}, keygen.WithClock(exampleClock))
	p, _ := g.(keygen.Decomposer).Decompose(1330816588185628673)
	fmt.Println(p.Time.Format(time.RFC3339Nano), p.Worker, p.Sequence)
	// Output: 2026-11-21T08:30:00Z 7 1
}

func ExampleID_MarshalJSON() {
	type Order struct {
		ID keygen.ID `json:"id"`
	}
	b, _ := json.Marshal(Order{ID: 1330816588185628673})
	fmt.Println(string(b))
	var o Order
	_ = json.Unmarshal([]byte(`{"id":"1330816588185628673"}`), &o)
	fmt.Println(o.ID.Base62())
	// Output:
	// {"id":"1330816588185628673"}
	// 1aJ9YKdUZxh
}

func ExampleLayout_Diagram() {
	fmt.Println(keygen.JSLayout.Diagram())
	// Output:
	// | zero | time (s) | backup | worker | sequence |
	// | 11   | 32       | 1      | 4      | 16       |
}
