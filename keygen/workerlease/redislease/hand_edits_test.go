package redislease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardkey/shardkey/keygen"
)

// TestHandEditedKeysFailClosed: keys of a namespace written by hand (or
// by another program) with the wrong type or unreadable fields make the
// claim fail (a script error) or skip the id, never hand out an id as
// free with a forgotten last use.
func TestHandEditedKeysFailClosed(t *testing.T) {
	c := sharedClient(t)
	ctx := context.Background()
	cases := map[string]func(s *Source) error{
		"id key without expiry": func(s *Source) error { return c.Set(ctx, s.idKey(0), "by-hand", 0).Err() },
		"id key is a hash":      func(s *Source) error { return c.HSet(ctx, s.idKey(0), "a", "b").Err() },
		"record is a string":    func(s *Source) error { return c.Set(ctx, s.recKey(0), "x", 0).Err() },
		"record exp unreadable": func(s *Source) error {
			return c.HSet(ctx, s.recKey(0), "owner", "someone/1", "exp", "soon", "last", "1").Err()
		},
		"record last unreadable": func(s *Source) error {
			return c.HSet(ctx, s.recKey(0), "owner", "", "exp", "1", "last", "yesterday").Err()
		},
		"record exp in the future": func(s *Source) error {
			return c.HSet(ctx, s.recKey(0), "owner", "someone/1", "exp", "99999999999999", "last", "1").Err()
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			s := newSource(t, c, Config{TTL: time.Second})
			if err := edit(s); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				c.Del(ctx, s.idKey(0), s.recKey(0), s.idKey(1), s.recKey(1), s.nsKey(), s.fenceKey(), s.idsKey())
			})
			l, err := s.Acquire(ctx, keygen.WorkerInfo{MaxWorker: 1})
			if err != nil {
				if errors.Is(err, ErrNoFreeWorker) || errors.Is(err, ErrQuarantine) {
					t.Fatalf("claim: %v, want worker 1 or a script error", err)
				}
				t.Logf("refused: %v", err)
				return
			}
			defer l.Close()
			if l.Worker() == 0 {
				t.Fatalf("worker 0 claimed after %s (LastUsed %v)", name, l.LastUsed())
			}
		})
	}
}

// TestErrorsNeverHoldThePassword: a client with a wrong password, or a
// URL holding one, fails a claim with an error (and logs) that never
// show the password.
func TestErrorsNeverHoldThePassword(t *testing.T) {
	r := privateRedis(t)
	if err := client(t, r.addr()).ConfigSet(context.Background(), "requirepass", "right-horse-battery").Err(); err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret-Wrong-P4ss"
	opts, err := redis.ParseURL("redis://user:" + secret + "@" + r.addr() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries = -1
	c := redis.NewClient(opts)
	defer c.Close()
	var logs strings.Builder
	s := newSource(t, c, Config{TTL: time.Second, Logger: slogTo(&logs)})
	_, err = s.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 1})
	if err == nil {
		t.Fatal("claim with a wrong password succeeded")
	}
	for _, out := range []string{err.Error(), logs.String()} {
		if strings.Contains(out, secret) {
			t.Fatalf("the password appears in %q", out)
		}
	}
	t.Logf("error: %v", err)
}
