package keygen_test

import (
	"context"
	"fmt"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// Two generators of one worker share their sequence within a scope, so the
// second continues after the first; a generator in another scope starts
// afresh and repeats the first's ID (use separate scopes only where the
// IDs can never meet).
func ExampleWithSequenceScope() {
	clock := keygentest.NewClock(time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC))
	props := keygen.Props{"worker-id": "7", "max-vibration-offset": "0"}
	tenantA, tenantB := keygen.NewSequenceScope(), keygen.NewSequenceScope()
	ctx := context.Background()
	for _, scope := range []*keygen.SequenceScope{tenantA, tenantA, tenantB} {
		g, err := keygen.NewID("SNOWFLAKE", props, keygen.WithClock(clock), keygen.WithSequenceScope(scope))
		if err != nil {
			fmt.Println(err)
			return
		}
		id, _ := g.NextID(ctx)
		fmt.Println(id)
	}
	// Output:
	// 1330816588185628672
	// 1330816588185628673
	// 1330816588185628672
}
