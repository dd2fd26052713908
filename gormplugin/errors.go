package gormplugin

import "errors"

// ErrUnsupported: the plugin cannot place the statement on the right
// shard (a JOIN with a table sharded differently, a raw statement it
// cannot read, a transaction across data sources), so it refuses it
// rather than run it on a wrong or unsharded table. Missing sharding
// conditions are shardconf.ErrMissingShardingKey.
var ErrUnsupported = errors.New("gormplugin: statement cannot be routed")

// ErrTimeLocation: a time.Time sharding value is not in the location the
// plugin routes times in (WithTimeLocation, UTC by default), so the
// database might store it at another wall clock than it routes by. It
// comes in a *shardconf.RouteError and also matches ErrUnsupported.
var ErrTimeLocation = errors.New("gormplugin: time sharding value in another location than WithTimeLocation's")
