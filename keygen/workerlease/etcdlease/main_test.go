package etcdlease

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine outlives the tests: a lease's
// renewal goroutine must end with its Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
