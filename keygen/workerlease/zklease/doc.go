// Package zklease hands Snowflake-family generators their worker id from
// ZooKeeper, in the node layout Meituan Leaf's SnowflakeZookeeperHolder
// uses, so a Go service can join a Leaf fleet's worker-id space without
// ever sharing an id with it. It implements keygen.WorkerSource:
//
//	src, err := zklease.New(zklease.Config{Servers: []string{"zk1:2181"}, Name: "orders", Port: "8080"})
//	gen, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
//	defer gen.(io.Closer).Close() // releases the lock, records the last time used
//
// # Leaf's layout
//
// Every process has an address, ip:port (Leaf's listen address; here
// Config.IP, default the host's first non-loopback IPv4 address as Leaf
// picks it, and Config.Port, default "0"). Its worker id is the sequence of
// a persistent sequential node
//
//	/snowflake/{Name}/forever/{ip}:{port}-0000000005
//
// created the first time that address starts (ZooKeeper appends the
// 10-digit sequence; the id here is 5) and reused by every later start
// with the same address. The node's data is Leaf's Endpoint, exactly as
// Leaf's Jackson writes and reads it (Leaf refuses unknown properties):
//
//	{"ip":"10.0.0.5","port":"8080","timestamp":1764230000000}
//
// timestamp being the holder's clock in Unix milliseconds, rewritten every
// ReportInterval (Leaf: 3 s). A start whose clock reads before the node's
// timestamp is refused with a *ClockBehindError (ErrClockBehind), as Leaf
// refuses it. Where Leaf reads a missing timestamp as 0, an id never used,
// zklease refuses data without ip, port and a positive timestamp (null,
// {}, a hand edit) with a *NodeError (ErrUnreadableNode). zklease writes
// nothing else under forever, and never a name Leaf cannot read: New
// refuses an ip or port containing '-' (Leaf splits node names at '-').
// Leaf processes and zklease processes of one Name therefore get distinct
// ids from ZooKeeper's sequence, whoever came first, and a Go process
// given a Leaf node's ip:port takes over that node's id.
//
// # Promise
//
// With ZooKeeper reachable, two zklease processes never hold the same
// worker id at once, and a new holder never issues keys at or before a time
// the previous one may have used:
//
//   - An id belongs to the address in its node's name; ZooKeeper's sequence
//     never repeats, so two addresses never get the same id from it. A
//     node made by hand can still name an id another node has (Leaf reads
//     "ip:port-5", "ip:port-+5" or other scripts' digits as 5, as its
//     Integer.parseInt does): a claim is refused with a *SharedIDError
//     (ErrSharedID) while another node under forever names the claimed
//     id, read as Leaf reads it, and a node just created for it is removed
//     again. zklease claims only names ending in ZooKeeper's exact 10-digit
//     sequence; a node of its ip:port named otherwise refuses the claim
//     (ErrUnreadableNode).
//   - Two processes with the same address are fenced by a lock Leaf does
//     not have: an ephemeral sequential node
//     /snowflake/{Name}/shardkey/{ip}:{port}/lock-NNNNNNNNNN, the lowest
//     holding it. A second process waits for the first (Acquire's context
//     bounds the wait: ErrHeld) and only then reads or creates the node.
//   - The lease lives as long as the ZooKeeper session that made the lock.
//     Each report is one transaction that checks the lock node still
//     exists and writes the timestamp; after it succeeds the lease is valid,
//     on the generator's clock, until the reading taken before sending it
//     plus 3/4 of the session timeout the server granted (read from the
//     server's connect responses, not the one asked for; the smallest
//     granted, since a reconnect to a server with a lower
//     maxSessionTimeout renegotiates the session's down). The same validity
//     also ends on Go's monotonic clock, so a generator's clock that steps
//     back (an injected one may) cannot stretch it: ValidUntil then reads
//     math.MinInt64 until a report succeeds. Each report sets the validity
//     from its own reading, lower than the last after a step back; the
//     node's timestamp never moves back. The server expires the session,
//     and so frees the lock, no earlier than the full timeout after it
//     received that report, so the holder stops issuing
//     (keygen.ErrLeaseLost) before anyone else can take the id. A network
//     cut or a server outage shorter than that changes nothing; a longer
//     one stops the generator until the session is back (the generator
//     resumes if the server kept the session) or lost (for good: the
//     connection's new session holds nothing).
//   - The next holder starts after the previous one's last key: a clean
//     Close writes, in one transaction with deleting the lock, a final
//     timestamp covering every key issued and zklease's record
//     /snowflake/{Name}/shardkey/{ip}:{port} saying so; after an unclean
//     end (crash, lost session) the next holder's LastUsed is the node's
//     timestamp plus the previous lease's validity, and for a node Leaf
//     wrote, plus Leaf's report interval and a second. Acquire waits for
//     that time to pass before returning. A record that zklease did not
//     write (null, {}, a field missing) refuses the claim
//     (ErrUnreadableNode) rather than read zeros as a clean release.
//   - A worker id above keygen.WorkerInfo.MaxWorker is an error
//     (ErrWorkerOutOfRange), never truncated; a node created for it is
//     removed again.
//
// Acquire opens one ZooKeeper session per lease; ZooKeeper allows 60
// connections from one address by default (maxClientCnxns). A Source
// holds one lease at a time: a second Acquire while the first lease is
// open fails at once with ErrHeld (it would wait for its own process).
// Generators needing ids of their own get a Source each, with distinct
// Ports.
//
// # What Leaf does not promise, and zklease cannot add
//
// Leaf's processes take no lock and never stop issuing when ZooKeeper is
// gone. A Go process and a Leaf process configured with the same ip:port
// would use the same id at once: never give a Go process the address of a
// running Leaf process (taking over a retired Leaf address is fine; that
// is what the reuse is for).
//
// The layout has no expiry: an id, once created for an address, is never
// reclaimed automatically, and the sequence only grows, so a fleet whose
// addresses change (Kubernetes pod IPs) uses up Leaf's 1024 ids. Give such
// processes stable addresses (a StatefulSet's pod name cannot be the ip,
// which must not contain '-'; use its ordinal as the Port with a fixed
// IP), or reclaim by hand: when List shows an id not Held and its
// process is gone for good, delete its node and create, as a persistent
// non-sequential node, {newip}:{port}-{the same 10 digits} with the old
// node's data; the new address then gets that id (its timestamp still
// guards against a clock behind). While both nodes exist, claims of the
// id are refused (ErrSharedID) and List shows both with that error.
// Deleting a node alone frees nothing: ZooKeeper's sequence does not go
// back.
//
// # Leaf's local fallback
//
// With Config.CacheFile set, every claim and report writes the worker id
// and the last timestamp to that file (Leaf's workerID.properties format:
// workerID=N, with zklease's own keys beside it; LeafCacheFile gives Leaf's
// own path), atomically (a synced temporary file renamed over it). When
// ZooKeeper cannot be reached within ConnectTimeout, Acquire uses the
// file's id, as Leaf does, refusing a clock behind the file's timestamp and
// starting after its last use (a file without a positive timestamp is
// refused, ErrCacheFile). The risk, which is why it is opt-in: that
// lease holds no lock and never expires. It still guarantees that no other
// address gets the id (ids are never reclaimed) and that keys start after
// the recorded ones; it cannot stop a second process with the same
// address, or a take-over after an operator reassigned the id, from using
// it at the same time. Use it on a host whose address no other process
// uses, and keep outages short.
//
// A lease started from the file keeps it current: it writes the time and
// the last issued key's time at once and every report interval (keys stop
// while a write fails), and the final time at Close. A later claim through
// ZooKeeper with the same CacheFile starts after the file's last use, so
// keys issued during the outage are never issued again on this host; keys
// issued through a cache file on another host with the same ip:port stay
// unknown to it.
//
// List reports the ids under a name for operators (shardkey workers).
package zklease
