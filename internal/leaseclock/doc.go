// Package leaseclock holds the bookkeeping that the worker-id leases
// (keygen/workerlease and its etcdlease, redislease and zklease modules)
// share word for word: the generator's tracked last-issued time, the
// renewal counters of keygen.LeaseStats, and a validity that also ends on
// Go's monotonic clock.
//
// It exists so that those mechanics, on which "a worker id is never used
// past its lease" rests, are written and tested once. Only what is
// identical lives here: where a lease's semantics differ (etcdlease keeps
// a lost state apart from an expired one and records its end before
// moving the validity; zklease orders its validity under a mutex and
// follows the smallest session timeout granted) the lease keeps its own
// code and uses only the pieces that match.
package leaseclock
