// Package etcdlease hands Snowflake-family generators their worker id
// through etcd v3 leases. It implements keygen.WorkerSource:
//
//	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"etcd-0:2379"}})
//	src, err := etcdlease.New(etcdlease.Config{Client: cli, Namespace: "orders"})
//	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
//	defer gen.(io.Closer).Close() // releases the worker id
//
// The application builds the *clientv3.Client (endpoints, TLS,
// credentials) and closes it after its generators; the package never
// dials, closes or logs the client's settings.
//
// # Keys
//
// Under Config.Prefix (default /shardkey/worker/) each namespace has two
// keys per worker id that was ever claimed:
//
//	<prefix><namespace>/held/<id>  the holder's owner token, attached to its etcd lease
//	<prefix><namespace>/last/<id>  the id's record, no lease: {"last_ms":…,"until_ms":…,"owner":…}
//
// An id is held while its held key exists. Acquire lists the held keys and
// the records and claims the lowest free id in [0, MaxWorker] by a
// transaction that creates the held key only if its create revision is 0
// (it does not exist), so two claimants can never both create it; a
// claimant that loses the race tries the next free id. Free ids whose
// record is later than the claimant's clock (left by a holder whose clock
// ran ahead) are tried last, soonest usable first, so that one such
// holder does not make every new generator wait or refuse to start. The record keeps, in Unix milliseconds on the
// holders' clocks, the latest issued time a holder knew of (last_ms) and
// the end of the validity it was issuing under (until_ms, 0 after a clean
// release).
//
// # Promise
//
// Leases fail closed. Two processes never hold the same worker id at once
// (within the caveats below), and a new holder of a worker id never issues
// keys at or before a time the previous holder may have used:
//
//   - A lease is valid, on the generator's own clock, until the reading
//     taken just before the grant or keep-alive request was sent, plus TTL,
//     minus SafeGuard. etcd starts the lease's TTL when it handles the
//     request, after it was sent, and deletes the held key only when the
//     TTL has run out on the leader's clock; SafeGuard absorbs the
//     difference between the two clocks' rates (and late readings). The
//     same validity also ends on Go's monotonic clock, so a generator's
//     clock that steps back does not stretch it by the step.
//   - A keep-alive counts only once a transaction has checked that the held
//     key still names the lease's owner token and etcd lease, and has
//     stored the new validity's end in the record; only then does the
//     validity move; the end stored in the record never moves back, even
//     when a clock that stepped back gives a lower one. A lease whose key
//     was deleted or taken over, or whose etcd lease expired, is lost for
//     good (owner tokens are drawn per lease, so not even the same
//     instance can renew it): the generator stops issuing
//     (keygen.ErrLeaseLost).
//   - A lease whose keep-alives fail (etcd unreachable, no leader) stays
//     valid until its last validity ends; the generator then refuses keys.
//     When etcd answers again and still has the lease, the next renewal
//     succeeds and the generator resumes. etcd restarts keep leases (a
//     restarted or new leader gives every lease a fresh TTL), so a holder
//     that stopped issuing during a restart can resume after it.
//   - LastUsed, for an id released by Close, is the later of its holder's
//     last issued time and its clock's reading when Close ended the
//     validity (a key in flight then may take a time up to that reading);
//     for an id whose holder died or lost its lease, the end of the last
//     validity that holder recorded, which is no earlier than any key it
//     issued. The generator issues nothing
//     at or before LastUsed: it waits when its clock is a little behind
//     and refuses to start when it is behind by more than its tolerance.
//   - A record that cannot be read, or that this package did not write
//     (null, {}, a field missing or misspelled, no owner), refuses the
//     claim (a *RecordError) rather than read it as an id never used.
//
// The record is also a second line of defence. A holder moves its validity
// only after a transaction stored the new end, and a claimant reads the
// record in the transaction that claims the id, so whatever etcd does with
// the lease (an early expiry by a faulty leader, say), a new holder's
// LastUsed is no earlier than any key time the previous holder could use:
// keys of the two can never be equal, even if both held the id at once. A
// new holder whose clock is behind that end by more than its tolerance
// refuses to start instead.
//
// # Caveats
//
//   - Clock rates: exclusive use of the id assumes the generator's clock
//     does not run slower than the etcd leader's by more than SafeGuard
//     over a TTL (default TTL/5, 20%; real clocks differ by parts per
//     million). A machine suspended with its clock stopped does not meet
//     it. Keys stay unique even then: see the record above.
//   - Hands off the keys: deleting a held key by hand frees the id at once,
//     while its holder issues until its next renewal finds the key gone.
//     The record still keeps the two holders' keys apart (the new holder
//     waits, or refuses to start), but the id is held twice meanwhile.
//   - A partitioned member: requests carry etcd's require-leader flag, so
//     a member cut off from the quorum refuses them and the lease runs out
//     on the holder's side; so do requests to a client cut off from etcd.
//     A leader cut off from the quorum may answer a keep-alive until it
//     steps down (etcd's check-quorum, about an election timeout); the new
//     leader restarts every lease's TTL at its election, plus an election
//     timeout, so the id stays held past the holder's validity. The
//     transaction that follows each keep-alive needs the quorum in any
//     case. etcd has had bugs where a stuck leader revoked leases early
//     (etcd-io/etcd#15247): run a current patch release; the record above
//     still keeps keys apart then.
//   - Reconnecting: while etcd cannot be reached, the client's requests
//     wait for a connection until each renewal's timeout ((TTL-SafeGuard)/3).
//     After an outage grpc-go redials with a backoff that grows to 120s by
//     default; a holder that gets through only after etcd expired its
//     lease has lost it for good. Bound the backoff in the client
//     (clientv3.Config.DialOptions with grpc.WithConnectParams, MaxDelay
//     well under TTL) and set DialKeepAliveTime so that a silent network
//     is noticed. A generator whose lease is lost keeps refusing: build a
//     new one, which claims a worker id again.
//   - The generator's clock may step back (keygen.SystemClock never
//     does; an injected one may): the validity then ends by the monotonic
//     clock, ValidUntil reading math.MinInt64+1 until a renewal succeeds,
//     and the record keeps the earlier, later end. A generator whose clock
//     stepped back by more than its tolerance after issuing refuses keys
//     itself.
//   - etcd's data: a cluster restored from an older snapshot, or replaced
//     by an empty one, forgets held keys and records; no coordinator's
//     lease survives losing its data.
//   - Close releases the id at once; when etcd cannot be reached, or the
//     client was closed first, it returns an error (at once for a closed
//     client) and the id frees when the etcd lease expires. Acquire on a
//     closed client fails at once.
//   - etcd raises a TTL shorter than its minimum (2s with the default
//     election timeout): the id is then held longer than the holder uses
//     it, never shorter.
package etcdlease
