package zklease_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// waitUntil polls cond every 10ms for up to d, failing the test with what
// when it never holds; it returns when cond first held.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Now()
}

// TestReportAfterAClockStepBackSetsTheValidityFromItsOwnReading: each
// report's validity runs from that report, as the session's expiry on the
// server does; a clock stepped back an hour does not keep the validity an
// earlier reading gave.
func TestReportAfterAClockStepBackSetsTheValidityFromItsOwnReading(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	clock := keygentest.NewClock(time.Now())
	src := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.26.0.1:1", ReportInterval: 100 * time.Millisecond})
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	clock.Add(-time.Hour)
	stats := l.(keygen.LeaseStats)
	renewed := stats.Renewals()
	waitUntil(t, 5*time.Second, "two reports after the step", func() bool { return stats.Renewals() >= renewed+2 })
	// testSessionTimeout's validity is 3/4 of it.
	if left := time.Duration(l.ValidUntil() - clock.Now().UnixNano()); left > testSessionTimeout*3/4 {
		t.Fatalf("after a step back of 1h the lease is valid for %v more by its clock (validity %v)", left, testSessionTimeout*3/4)
	}
}

// TestValidityEndsOnTheMonotonicClockAndALaterReportRenewsIt: with the
// generator's clock standing still (its readings never reach the end of
// the validity), a holder cut off from ZooKeeper still stops (ValidUntil
// math.MinInt64) once the validity has passed on Go's monotonic clock; a
// report that succeeds later, within the session, makes it valid again.
func TestValidityEndsOnTheMonotonicClockAndALaterReportRenewsIt(t *testing.T) {
	z := startPrivateZK(t)
	name := uniqueName(t, z.addr)
	proxy := dbtest.StartProxy(t, z.addr)
	const session = 10 * time.Second // the private server's largest (20 ticks of 500 ms)
	validity := session * 3 / 4
	clock := keygentest.NewClock(time.Now())
	src := newSource(t, zklease.Config{Servers: []string{proxy.Addr()}, Name: name, Addr: "10.27.0.1:1",
		SessionTimeout: session, ReportInterval: 100 * time.Millisecond})
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stats := l.(keygen.LeaseStats)
	renewed := stats.Renewals()
	waitUntil(t, 5*time.Second, "a report", func() bool { return stats.Renewals() > renewed })
	proxy.Cut()
	cut := time.Now()
	ended := waitUntil(t, validity+2*time.Second, "the validity's end with the clock standing still",
		func() bool { return l.ValidUntil() == math.MinInt64 })
	// The last report went out at most an interval (and a slow reply)
	// before the cut.
	if ended.Sub(cut) < validity-time.Second {
		t.Fatalf("the validity ended %v after the cut, before the last report's validity %v could pass", ended.Sub(cut), validity)
	}
	proxy.Resume()
	renewedAt := waitUntil(t, session, "a report after the cut ended", func() bool { return l.ValidUntil() > clock.Now().UnixNano() })
	t.Logf("cut at 0: validity ended at %v (validity %v), valid again at %v; failed reports %d",
		ended.Sub(cut), validity, renewedAt.Sub(cut), stats.Failures())
	if stats.Failures() == 0 {
		t.Fatalf("no report failed during the cut")
	}
}

// TestValidityFollowsASessionTimeoutRenegotiatedDown: a server restarted
// with a smaller largest session timeout (a tick of 200 ms: at most 4s)
// renegotiates the session's timeout down when the client reconnects, and
// expires it that much sooner; the reports after that give 3/4 of the new
// timeout, not of the one granted at the claim.
func TestValidityFollowsASessionTimeoutRenegotiatedDown(t *testing.T) {
	z := startPrivateZK(t)
	name := uniqueName(t, z.addr)
	clock := keygentest.NewClock(time.Now()) // standing still: ValidUntil-now is the validity
	src := newSource(t, zklease.Config{Servers: []string{z.addr}, Name: name, Addr: "10.28.0.1:1",
		SessionTimeout: 10 * time.Second, ReportInterval: 100 * time.Millisecond})
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if left := time.Duration(l.ValidUntil() - clock.Now().UnixNano()); left != 7500*time.Millisecond {
		t.Fatalf("validity at the claim %v, want 7.5s (10s granted)", left)
	}
	z.stop()
	z.restartWithTick(200)
	stats := l.(keygen.LeaseStats)
	renewed := stats.Renewals()
	waitUntil(t, 8*time.Second, "two reports after the restart", func() bool { return stats.Renewals() >= renewed+2 })
	if left := time.Duration(l.ValidUntil() - clock.Now().UnixNano()); left > 3*time.Second {
		t.Fatalf("validity after the session timeout was renegotiated to at most 4s: %v, want at most 3s", left)
	}
}
