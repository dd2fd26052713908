package difftest

import (
	"context"

	"github.com/shardkey/shardkey/internal/xa"
)

// tpHookAvailable: xa's stages can be broken from here, through the test
// hook carried by BeginTx's context (sqlhook and gormplugin pass it on to
// xa's Commit).
const tpHookAvailable = true

func tpWithHook(ctx context.Context, h func(xa.Stage, string) error) context.Context {
	return xa.WithTestHook(ctx, h)
}
