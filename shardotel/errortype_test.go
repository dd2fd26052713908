package shardotel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"testing"
)

// TestErrorTypeIsTheInnermostTypedError: error.type names the innermost
// error of the chain with a type of its own, the context's errors by
// name, and falls back to _OTHER for errors.New and fmt.Errorf values.
func TestErrorTypeIsTheInnermostTypedError(t *testing.T) {
	op := &net.OpError{Op: "read", Err: errors.New("reset")}
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("plain"), "_OTHER"},
		{fmt.Errorf("a: %w", errors.New("b")), "_OTHER"},
		{op, "*net.OpError"},
		{fmt.Errorf("ds_1: %w", op), "*net.OpError"},
		{fmt.Errorf("x: %w", &fs.PathError{Op: "open", Err: op}), "*net.OpError"},
		{errors.Join(errors.New("a"), op), "_OTHER"},
		{errors.Join(op, errors.New("a")), "*net.OpError"},
		{fmt.Errorf("q: %w", context.Canceled), "canceled"},
		{fmt.Errorf("q: %w", context.DeadlineExceeded), "timeout"},
	} {
		if got := errorType(c.err); got != c.want {
			t.Errorf("errorType(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
