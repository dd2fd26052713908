package gormplugin_test

import (
	"testing"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/observe"
)

// What an observer costs when given: the statements of
// routed_bench_test.go reported to observe.Base, which does nothing, so
// that only the plugin's side (the statement's description, contexts,
// clock readings) is measured. Without WithObserver see
// BenchmarkRoutedPointRead and BenchmarkRoutedCreate.

func BenchmarkObservedPointRead(b *testing.B) {
	benchPointRead(b, gormplugin.WithObserver(observe.Base{}))
}
func BenchmarkObservedCreate(b *testing.B) { benchCreate(b, gormplugin.WithObserver(observe.Base{})) }
