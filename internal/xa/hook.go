package xa

import "context"

type testHookKey struct{}

// WithTestHook returns ctx carrying h, which Commit calls at each Stage
// when Config.Hook is nil, as it would call Config.Hook. For tests only:
// it lets a test inject faults into transactions that reach xa through
// sqlhook or gormplugin, which pass their BeginTx context on.
func WithTestHook(ctx context.Context, h func(stage Stage, gtrid string) error) context.Context {
	return context.WithValue(ctx, testHookKey{}, h)
}

func testHook(ctx context.Context) func(Stage, string) error {
	h, _ := ctx.Value(testHookKey{}).(func(Stage, string) error)
	return h
}
