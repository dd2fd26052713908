package keygen_test

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// TestPropErrorUnknownTellsRefusedPropsFromBadValues: a type refusing a
// key it does not take is told apart from a bad value of a key it takes.
func TestPropErrorUnknownTellsRefusedPropsFromBadValues(t *testing.T) {
	_, err := keygen.New("SEGMENT", keygen.Props{"biz-tag": "t", "worker-id": "7"})
	var pe *keygen.PropError
	if !errors.As(err, &pe) || pe.Key != "worker-id" || !pe.Unknown() {
		t.Fatalf("SEGMENT with worker-id: got %v, want an unknown-prop error for worker-id", err)
	}
	_, err = keygen.New("SNOWFLAKE", keygen.Props{"worker-id": "x"})
	if !errors.As(err, &pe) || pe.Key != "worker-id" || pe.Unknown() {
		t.Fatalf("SNOWFLAKE with worker-id x: got %v, want a bad-value error that is not Unknown", err)
	}
}
