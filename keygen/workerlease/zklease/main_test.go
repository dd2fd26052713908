package zklease_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no report goroutine or ZooKeeper connection
// outlives the leases the tests closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
