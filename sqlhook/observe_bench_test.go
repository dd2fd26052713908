package sqlhook_test

import (
	"testing"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/sqlhook"
)

// BenchmarkRoutedStatementObserved is BenchmarkRoutedStatement with an
// observer that does nothing (observe.Base): what reporting itself
// costs, the observer's own work aside.
func BenchmarkRoutedStatementObserved(b *testing.B) {
	benchRoutedStatement(b, sqlhook.WithObserver(observe.Base{}))
}
