// Package redislease hands Snowflake-family generators their worker id
// through leases kept in a single Redis server. It implements
// keygen.WorkerSource:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	src, err := redislease.New(redislease.Config{Client: rdb, Namespace: "orders"})
//	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
//	defer gen.(io.Closer).Close() // releases the worker id
//
// The caller opens and closes the client (github.com/redis/go-redis/v9;
// Config.Client is a redis.Scripter, which *redis.Client is). Everything the
// package writes, it writes in Lua scripts that run atomically on the
// server and read the server's clock, never the client's. Written for Redis
// 7 (tested with 7.0); scripts call INFO and TIME, which needs 5.0 or later
// and a server that has not renamed or disabled INFO. LastUsed and the
// record's times are the server's clock, so a generator's Clock must read
// about the real time (a fake clock in tests starts at time.Now()).
//
// # Promise
//
// On a single Redis server that does not evict keys without expiry and
// whose clock is not stepped, leases fail closed: two processes never
// hold the same worker id at once, and a new holder of a worker id never
// issues keys at or before a time the previous holder may have used.
//
//   - A claim is one script: it picks the lowest id in [0, MaxWorker]
//     whose key is absent and whose record shows it released or run out,
//     sets the key to the lease's owner token with PX TTL, and takes a
//     fencing token from INCR (Lease.Fence). The owner token is
//     Config.Instance followed by a random suffix drawn for each lease.
//     Free ids whose last use is later than the server's clock (left by a
//     holder whose clock ran ahead) are claimed last, the soonest usable
//     first, so that one such holder does not make every new generator
//     wait or refuse to start while other ids are free.
//   - A lease is valid, on the generator's own clock, until the reading
//     taken just before the claim or renewal was sent, plus TTL, minus
//     SafeGuard. Redis runs the script after it was sent, so the key
//     outlives the validity by at least SafeGuard, which absorbs
//     clock-rate differences: the generator stops (keygen.ErrLeaseLost)
//     before the key can expire and another process claim the id.
//   - The validity also ends on Go's monotonic clock, TTL - SafeGuard
//     after the claim or renewal was sent, whatever the generator's clock
//     reads: a clock stepped back while Redis cannot be reached does not
//     stretch the validity by the step. Each successful renewal sets the
//     validity to its own end (not the larger of it and the previous
//     one); until one succeeds after such an expiry, ValidUntil is
//     math.MinInt64.
//   - Renewal (every RenewInterval) extends the key only while it still
//     holds the lease's own token. A lease whose key is gone or names
//     another holder is lost for good and never renews again, even when
//     the same instance took the id.
//   - A lease whose renewals fail (Redis unreachable) stays valid until
//     its last validity ends; the generator then stops issuing. If a
//     renewal reaches Redis while the key is still the lease's, the
//     generator resumes.
//   - Each id has a record without expiry holding the last issued time
//     the holder reported at each renewal and at Close. LastUsed is, for
//     an id released by Close, that time; for an id whose holder ran out
//     without release, no earlier than when its lease could have run out
//     on the server's clock (the record's expiry) and on the holder's own:
//     each claim and renewal records the end of the validity it gives, on
//     the holder's clock, so the last keys of a holder whose clock ran
//     ahead of the server's are covered too. The generator issues nothing at or before
//     LastUsed, waiting within its clock tolerance and refusing to start
//     beyond it, so a restart with the clock set back is refused or waits.
//   - A record whose lease has not run out keeps its id held even if the
//     key vanished (deleted by hand, evicted by a volatile-* policy); its
//     holder, finding the key gone, stops.
//   - Close releases the id: it deletes the key, only if it still holds
//     the lease's token, and records the last issued time.
//
// # When Redis loses data
//
// Redis keeps leases in memory. A server restarted without persistence
// forgets every lease, every last issued time and the fencing counter; one
// restarted from an RDB snapshot or an AOF file may come back with older
// state than it had; a replica promoted by failover may lack the latest
// writes. The package does not let such a loss hand out a held id:
//
//   - A holder whose renewal reaches the new state finds its key gone and
//     stops at once. A holder that cannot reach it stops when its validity
//     ends, at most TTL - SafeGuard after its last renewal, which reached
//     the old state before the loss.
//   - Claims wait out a quarantine of TTL + SafeGuard. It starts when a
//     claim first finds the namespace without its state (the base:ns
//     hash: a restart without persistence, FLUSHDB, FLUSHALL, a DEL), or
//     with state written by another server (its recorded run_id is not
//     the server's: a snapshot, an AOF file, a promoted replica). Every
//     lease granted before has ended by then. Only on a server that
//     surely started less than TTL + SafeGuard ago does a missing state's
//     quarantine start at the server's start (read from INFO's uptime,
//     rounded up to the second): no lease of that server's run can have
//     been granted in the namespace yet. Acquire waits, or fails with a
//     *QuarantineError (ErrQuarantine) when its context would end first;
//     a generator's construction gives up after 30 s, which the default
//     TTL's quarantine (11 s) fits in; with a TTL above about 27 s the
//     first generator after a loss fails and must be built again.
//   - The last issued times are gone or stale, so LastUsed after a loss
//     is no earlier than the start of the quarantine plus TTL, by the
//     server's clock: the latest a previous holder with a clock within
//     SafeGuard of the server's could have issued. A previous holder whose
//     clock ran ahead of the server's by more than SafeGuard may have
//     issued later keys; keep hosts on NTP.
//   - The fencing counter restarts above the server's clock in
//     microseconds, so fencing tokens keep increasing across the loss.
//
// The first use of a namespace waits the same quarantine, and its first
// claims get the same LastUsed floor (about SafeGuard before the claim, by
// the server's clock): Redis cannot tell a new namespace from a forgotten
// one, and a holder of a forgotten one may still be issuing until its
// next renewal finds its key gone.
//
// # Caveats
//
// Single node only. What is promised above holds for one Redis server.
//
//   - Redis Cluster: all keys of a namespace share one hash tag,
//     {prefix:namespace}, so they live in one slot and the scripts run
//     there. But replication is asynchronous: a primary can acknowledge a
//     claim and fail before its replica has it, and the promoted replica
//     then hands the id out again. When some of the namespace's state
//     had reached the replica, the run_id check above puts the namespace
//     in quarantine on it, which covers holders that reach the new
//     primary; when none had (a namespace first used moments before),
//     nothing tells the replica. And a holder still talking to the old
//     primary (a partition) keeps renewing there while the new primary
//     hands its id to another. The same holds for Sentinel failover and
//     for any client reading from replicas. min-replicas-to-write narrows
//     the window; it does not close it.
//   - Eviction: a server whose maxmemory-policy is an allkeys-* policy
//     may evict the records that prove an id is held; every claim reads
//     the policy and refuses such a server (ErrEvictingServer), and every
//     renewal reads it too: a policy switched to allkeys-* after the claim
//     ends the lease as lost (the generator stops issuing; the id frees
//     when its key expires). An eviction between the switch and the next
//     renewal is not detected. Use noeviction (the default) or a
//     volatile-* policy.
//   - The server's clock: Redis expires keys, and reports its uptime, by
//     its wall clock. A clock stepped forward frees keys early, as it
//     does for any Redis lock; run NTP in slewing mode on the server.
//   - Deleting a namespace's state wholesale (FLUSHALL, FLUSHDB, DEL of
//     the base:ns hash) while generators run starts the quarantine above.
//     Deleting an id's key and its record by hand while base:ns stays is
//     not detected: the id can be claimed again before its holder's next
//     renewal finds its key gone. Delete base:ns with them, or only the
//     key (its record then keeps the id held until the lease runs out).
//   - Every process of a namespace should use the same TTL and SafeGuard:
//     the quarantine after a loss is the claimant's own.
//
// # Keys
//
// With base = {Prefix:Namespace} (default {shardkey:worker:default}):
//
//	base:id:W    string: the holder's owner token, PX TTL; the lock
//	base:rec:W   hash, no expiry: owner, exp, last, fence, prev (Unix ms)
//	base:ids     sorted set of every id ever claimed (for List)
//	base:fence   fencing token counter
//	base:ns      hash: since, run (the quarantine's start and run_id)
//
// List (and Source.List) report every id ever claimed in a namespace:
// holder, remaining TTL, expiry, fencing token and last issued time.
// Namespaces finds the namespaces under a prefix.
package redislease
