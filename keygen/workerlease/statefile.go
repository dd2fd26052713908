package workerlease

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// StateFile wraps a WorkerSource so that a service can start while the
// database is unreachable, as Meituan Leaf's workerID.properties does:
// every worker id Source grants is written to a local file, and when
// Source fails the id in the file is used instead, for as long as the
// generator lives.
//
// The risk, which is why this is opt-in: a worker id taken from the file
// holds no lease. If this host's last lease has expired, the database may
// grant the same id to another process while this one runs, and both
// issue the same keys. Use it only where starting matters more than that
// guarantee, on a host whose file nobody copies, and keep the outage
// short.
type StateFile struct {
	Source keygen.WorkerSource
	Path   string
}

var _ keygen.WorkerSource = StateFile{}

// stateRecord is the file's content.
type stateRecord struct {
	Type      string    `json:"type"`
	MaxWorker int64     `json:"max_worker"`
	Worker    int64     `json:"worker"`
	LastUsed  time.Time `json:"last_used"`
}

// Acquire asks Source, recording its grant, and falls back to the file.
func (f StateFile) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	l, err := f.Source.Acquire(ctx, info)
	if err == nil {
		rec := stateRecord{Type: info.Type, MaxWorker: info.MaxWorker, Worker: l.Worker(), LastUsed: l.LastUsed()}
		if werr := f.write(rec); werr != nil {
			l.Close()
			return nil, werr
		}
		return &recordingLease{Lease: l, f: f, rec: rec}, nil
	}
	b, rerr := os.ReadFile(f.Path)
	if rerr != nil {
		return nil, fmt.Errorf("%w (and no state file: %v)", err, rerr)
	}
	var rec stateRecord
	if jerr := json.Unmarshal(b, &rec); jerr != nil || rec.Type != info.Type || rec.MaxWorker != info.MaxWorker {
		return nil, fmt.Errorf("%w (and state file %s does not fit a %s generator with %d workers)", err, f.Path, info.Type, info.MaxWorker+1)
	}
	if info.Logger != nil {
		info.Logger.Warn("workerlease: worker id source failed; using the state file's worker id without a lease",
			"file", f.Path, "worker", rec.Worker, "err", err)
	}
	return &recordingLease{Lease: fileLease{rec}, f: f, rec: rec}, nil
}

// write replaces the file atomically.
func (f StateFile) write(rec stateRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".workerid-*")
	if err != nil {
		return fmt.Errorf("workerlease: state file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("workerlease: state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("workerlease: state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("workerlease: state file: %w", err)
	}
	return nil
}

// recordingLease writes the last issued time to the file on Close, so a
// later start from the file begins after it.
type recordingLease struct {
	keygen.Lease
	f     StateFile
	rec   stateRecord
	mu    sync.Mutex
	track func() time.Time
}

func (l *recordingLease) Track(last func() time.Time) {
	l.mu.Lock()
	l.track = last
	l.mu.Unlock()
	l.Lease.Track(last)
}

func (l *recordingLease) Close() error {
	err := l.Lease.Close()
	l.mu.Lock()
	track := l.track
	l.mu.Unlock()
	if track != nil {
		if t := track(); t.After(l.rec.LastUsed) {
			l.rec.LastUsed = t
		}
		if werr := l.f.write(l.rec); err == nil {
			err = werr
		}
	}
	return err
}

// fileLease is a worker id from the state file: no expiry, the file's
// history.
type fileLease struct{ rec stateRecord }

func (l fileLease) Worker() int64        { return l.rec.Worker }
func (l fileLease) LastUsed() time.Time  { return l.rec.LastUsed }
func (fileLease) ValidUntil() int64      { return math.MaxInt64 }
func (fileLease) Track(func() time.Time) {}
func (fileLease) Close() error           { return nil }
