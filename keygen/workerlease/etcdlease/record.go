package etcdlease

import (
	"encoding/json"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// record is the value of a worker id's last key: what its holders
// wrote, kept without a lease so that it outlives them. Times are Unix
// milliseconds on the holders' clocks, rounded up.
type record struct {
	// LastMs is the latest time a key may have been issued with the id
	// that the holder knew of when it wrote the record.
	LastMs int64 `json:"last_ms"`
	// UntilMs is the end of the holder's validity, written before the
	// holder issues under it, so a holder that dies leaves a bound on
	// its keys; 0 once the id was released by Close (LastMs is exact
	// then).
	UntilMs int64 `json:"until_ms"`
	// Owner is the token of the holder that wrote the record.
	Owner string `json:"owner"`
}

// used is the latest time the id may have been used by the record's
// writer: the next holder issues nothing at or before it.
func (r record) used() int64 { return max(r.LastMs, r.UntilMs) }

func (r record) encode() string {
	b, _ := json.Marshal(r) // a struct of ints and a string always marshals
	return string(b)
}

// storedRecord is a record as read: a field that is absent stays nil.
type storedRecord struct {
	LastMs  *int64  `json:"last_ms"`
	UntilMs *int64  `json:"until_ms"`
	Owner   *string `json:"owner"`
}

// decodeRecord reads the record in kvs (one key or none: none is a
// worker id never used). A value this package did not write (null, {},
// a field missing or misspelled, no owner) is a *RecordError: read as
// zeros it would say the id was never used.
func decodeRecord(key string, kvs []*mvccpb.KeyValue) (record, error) {
	if len(kvs) == 0 {
		return record{}, nil
	}
	var sr storedRecord
	if err := json.Unmarshal(kvs[0].Value, &sr); err != nil {
		return record{}, &RecordError{Key: key, Err: err}
	}
	switch {
	case sr.LastMs == nil || sr.UntilMs == nil || sr.Owner == nil:
		return record{}, &RecordError{Key: key, Err: errors.New("last_ms, until_ms or owner missing")}
	case *sr.Owner == "":
		return record{}, &RecordError{Key: key, Err: errors.New("no owner")}
	case *sr.LastMs < 0 || *sr.UntilMs < 0:
		return record{}, &RecordError{Key: key, Err: errors.New("negative time")}
	}
	return record{LastMs: *sr.LastMs, UntilMs: *sr.UntilMs, Owner: *sr.Owner}, nil
}

// ceilMs is Unix nanoseconds as Unix milliseconds, rounded up so that a
// time within a millisecond is covered; 0 for times at or before 1970.
func ceilMs(ns int64) int64 {
	if ns <= 0 {
		return 0
	}
	ms := ns / int64(time.Millisecond)
	if ns%int64(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

// msTime converts Unix milliseconds to a time; 0 or less is the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
