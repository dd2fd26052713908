package gormplugin

import "errors"

// ErrUnsupported: the plugin cannot place the statement on the right
// shard (a JOIN with a table sharded differently, a raw statement it
// cannot read, a transaction across data sources), so it refuses it
// rather than run it on a wrong or unsharded table. Missing sharding
// conditions are shardconf.ErrMissingShardingKey.
var ErrUnsupported = errors.New("gormplugin: statement cannot be routed")
