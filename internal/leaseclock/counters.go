package leaseclock

import "sync/atomic"

// Counters counts a lease's renewals for keygen.LeaseStats. The zero value
// counts from 0; it is safe for concurrent use.
type Counters struct {
	renewals atomic.Uint64
	failures atomic.Uint64
}

// Renewed counts a successful renewal.
func (c *Counters) Renewed() { c.renewals.Add(1) }

// Failed counts a renewal that failed to reach the server.
func (c *Counters) Failed() { c.failures.Add(1) }

// Renewals is the number of successful renewals.
func (c *Counters) Renewals() uint64 { return c.renewals.Load() }

// Failures is the number of failed renewals.
func (c *Counters) Failures() uint64 { return c.failures.Load() }
