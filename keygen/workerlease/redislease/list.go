package redislease

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Slot is one worker id of a namespace as List reports it: every id ever
// claimed there, held or not.
type Slot struct {
	Worker int64
	// Key is the Redis key holding the id while it is held.
	Key string
	// Held says the key exists: a lease holds the id now.
	Held bool
	// Owner is the holder's owner token (instance name, "/", a random
	// suffix) while held; for an id not held, the token of its last claim
	// when that lease ran out without release, "" when it was released.
	Owner string
	// TTL is the key's remaining time to live (Redis's PTTL) while held,
	// 0 otherwise.
	TTL time.Duration
	// ExpiresAt is when the last claim or renewal runs out, by the
	// server's clock; for a released id, when it was released.
	ExpiresAt time.Time
	// Fence is the fencing token of the id's last claim.
	Fence int64
	// LastUsed is the latest issued time the holder reported at its last
	// renewal or release; zero when none.
	LastUsed time.Time
}

// List returns every worker id ever claimed in the namespace of cfg (its
// Client, Prefix and Namespace; the other fields are not read), by worker
// id, read in one script so the listing is a consistent snapshot. It
// claims and writes nothing. `shardkey workers` uses it.
func List(ctx context.Context, cfg Config) ([]Slot, error) {
	if cfg.Client == nil {
		return nil, errors.New("redislease: Config.Client is nil")
	}
	prefix, namespace := cfg.Prefix, cfg.Namespace
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	if strings.ContainsAny(prefix, "{}") || strings.ContainsAny(namespace, "{}:") {
		return nil, fmt.Errorf("redislease: prefix %q holds '{' or '}', or namespace %q holds '{', '}' or ':'", prefix, namespace)
	}
	return list(ctx, cfg.Client, baseOf(prefix, namespace), namespace)
}

// List returns every worker id ever claimed in the source's namespace, as
// the function List does.
func (s *Source) List(ctx context.Context) ([]Slot, error) {
	return list(ctx, s.client, s.base, s.namespace)
}

func list(ctx context.Context, c redis.Scripter, base, namespace string) ([]Slot, error) {
	res, err := listScript.Run(ctx, c, []string{base + ":ids"}, base).Slice()
	if err != nil {
		return nil, fmt.Errorf("redislease: list %q: %w", namespace, err)
	}
	var out []Slot
	for _, r := range res[1:] {
		row, ok := r.([]any)
		if !ok || len(row) != 7 {
			return nil, fmt.Errorf("redislease: list %q: unexpected reply %v", namespace, r)
		}
		w := integer(row, 0)
		sl := Slot{
			Worker:    w,
			Key:       idKey(base, w),
			Owner:     reply(row, 1),
			ExpiresAt: msTime(integer(row, 4)),
			LastUsed:  msTime(integer(row, 5)),
			Fence:     integer(row, 6),
		}
		sl.Held = sl.Owner != ""
		if sl.Held {
			if pttl := integer(row, 2); pttl > 0 {
				sl.TTL = time.Duration(pttl) * time.Millisecond
			}
		} else {
			sl.Owner = reply(row, 3)
		}
		out = append(out, sl)
	}
	return out, nil
}

// Scanner is the part of a go-redis client Namespaces needs (a
// *redis.Client is one). On a Redis Cluster SCAN reads one node only.
type Scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
}

// Namespaces returns the namespaces under prefix ("" is DefaultPrefix) in
// which an id was ever claimed, sorted, found by SCAN (which does not
// block the server). For `shardkey workers` without a namespace.
func Namespaces(ctx context.Context, c Scanner, prefix string) ([]string, error) {
	if c == nil {
		return nil, errors.New("redislease: nil client")
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if strings.ContainsAny(prefix, "{}") {
		return nil, fmt.Errorf("redislease: prefix %q holds '{' or '}'", prefix)
	}
	head, tail := "{"+prefix+":", "}:ids"
	match := globEscape(head) + "*" + globEscape(tail)
	seen := map[string]bool{}
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, match, 500).Result()
		if err != nil {
			return nil, fmt.Errorf("redislease: scan namespaces under %q: %w", prefix, err)
		}
		for _, k := range keys {
			if ns, ok := strings.CutPrefix(k, head); ok {
				if ns, ok = strings.CutSuffix(ns, tail); ok && ns != "" && !strings.ContainsAny(ns, "{}:") {
					seen[ns] = true
				}
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out, nil
}

// globEscape quotes the characters SCAN's MATCH pattern treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
