package keygen

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Props are a generator's properties, as ShardingSphere writes them in
// keyGenerators.<name>.props. Keys are matched loosely so that rule files
// from every ShardingSphere generation load: the 5.x kebab form
// (worker-id), the 4.x dotted form (worker.id) and Baidu's camelCase form
// (workerId) all name the same prop. A key that no form matches, a prop
// given twice under two spellings, and a bad value are errors (*PropError).
type Props map[string]string

// ParseProps parses "k=v,k=v" (the CLI's -props form). Whitespace around
// keys and values is trimmed; an empty string gives empty Props.
func ParseProps(s string) (Props, error) {
	p := Props{}
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, &PropError{Key: kv, Reason: "not of the form key=value", Allowed: "key=value[,key=value...]"}
		}
		if _, dup := p[k]; dup {
			return nil, &PropError{Key: k, Value: v, Reason: "given twice", Allowed: "each key once"}
		}
		p[k] = v
	}
	return p, nil
}

// String renders the props sorted by key, in ParseProps's form.
func (p Props) String() string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(p[k])
	}
	return b.String()
}

// propAliases maps normalized spellings to the canonical key.
var propAliases = map[string]string{
	"seq-bits":  "sequence-bits",
	"epoch-str": "epoch",
}

// CanonicalPropKey is the 5.x kebab spelling of a prop key, however it
// was written: worker.id, workerId, worker_id and WORKER-ID all give
// worker-id. Other packages reading ShardingSphere props (algorithm props)
// match keys with it too.
func CanonicalPropKey(k string) string { return normalizePropKey(k) }

// normalizePropKey turns worker.id, workerId, worker_id and WORKER-ID into
// worker-id.
func normalizePropKey(k string) string {
	var b strings.Builder
	rs := []rune(strings.TrimSpace(k))
	for i, r := range rs {
		switch {
		case r == '.' || r == '_' || r == '-' || r == ' ':
			b.WriteByte('-')
		case unicode.IsUpper(r):
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])) {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	n := b.String()
	if c, ok := propAliases[n]; ok {
		return c
	}
	return n
}

// propReader reads a generator's props, collecting every problem.
type propReader struct {
	typ  string
	raw  map[string]string // canonical key -> key as given
	vals map[string]string // canonical key -> value
	used map[string]bool
	errs []error
}

// readProps checks that every key of p is one of allowed (canonical keys)
// and given once.
func readProps(typ string, p Props, allowed ...string) *propReader {
	r := &propReader{typ: typ, raw: map[string]string{}, vals: map[string]string{}, used: map[string]bool{}}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic error order
	for _, k := range keys {
		c := normalizePropKey(k)
		if !ok[c] {
			r.errs = append(r.errs, &PropError{Type: typ, Key: k, Value: p[k], Reason: reasonUnknownProp,
				Allowed: strings.Join(allowed, ", ")})
			continue
		}
		if prev, dup := r.raw[c]; dup {
			r.errs = append(r.errs, &PropError{Type: typ, Key: k, Value: p[k],
				Reason: fmt.Sprintf("given twice (also as %q)", prev), Allowed: "one spelling of " + c})
			continue
		}
		r.raw[c], r.vals[c] = k, strings.TrimSpace(p[k])
	}
	return r
}

func (r *propReader) has(key string) bool { _, ok := r.vals[key]; return ok }

func (r *propReader) fail(key, reason, allowed string) {
	k := key
	if raw, ok := r.raw[key]; ok {
		k = raw
	}
	r.errs = append(r.errs, &PropError{Type: r.typ, Key: k, Value: r.vals[key], Reason: reason, Allowed: allowed})
}

// int reads an integer in [lo, hi]. A missing key gives def, or an error
// when required.
func (r *propReader) int(key string, lo, hi, def int64, required bool) int64 {
	allowed := fmt.Sprintf("an integer %d..%d", lo, hi)
	v, ok := r.vals[key]
	if !ok {
		if required {
			r.fail(key, "required", allowed)
		}
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		r.fail(key, "out of range or not an integer", allowed)
		return def
	}
	return n
}

// epoch reads an instant: RFC 3339, a date (YYYY-MM-DD, midnight UTC), or
// Unix milliseconds.
func (r *propReader) epoch(key string, def time.Time) time.Time {
	v, ok := r.vals[key]
	if !ok {
		return def
	}
	t, err := parseEpoch(v)
	if err != nil {
		r.fail(key, err.Error(), "RFC 3339 (2016-11-01T00:00:00+08:00), a date (2016-05-20, UTC) or Unix milliseconds")
		return def
	}
	return t
}

func parseEpoch(v string) (time.Time, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return time.Time{}, errors.New("before 1970")
		}
		return time.UnixMilli(n).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("not a time")
}

// unit reads a time unit: ms, s, or a Go duration that is a whole number
// of milliseconds up to one second (10ms, 100ms).
func (r *propReader) unit(key string, def time.Duration) time.Duration {
	v, ok := r.vals[key]
	if !ok {
		return def
	}
	allowed := "ms, s, or a whole number of milliseconds up to 1s (e.g. 10ms)"
	switch strings.ToLower(v) {
	case "ms", "millisecond", "milliseconds":
		return time.Millisecond
	case "s", "second", "seconds":
		return time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Millisecond || d > time.Second || d%time.Millisecond != 0 {
		r.fail(key, "not a supported unit", allowed)
		return def
	}
	return d
}

// oneOf reads a value from a fixed set (case-insensitive).
func (r *propReader) oneOf(key, def string, set ...string) string {
	v, ok := r.vals[key]
	if !ok {
		return def
	}
	for _, s := range set {
		if strings.EqualFold(v, s) {
			return s
		}
	}
	r.fail(key, "not one of the allowed values", strings.Join(set, ", "))
	return def
}

func (r *propReader) err() error { return errors.Join(r.errs...) }
