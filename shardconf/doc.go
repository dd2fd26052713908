// Package shardconf reads ShardingSphere-compatible sharding rules and
// compiles them into a Router that maps a logic table and the conditions of
// a statement to physical tables in data sources.
//
//	cfg, err := shardconf.Load("rules.yaml")   // errors carry file:line:column and YAML path
//	r, err := shardconf.NewRouter(cfg)          // compiles every rule once
//	ts, err := r.Route("t_order", shardconf.Eq("user_id", 7), shardconf.Eq("order_id", id))
//	// ts == []Target{{DataSource: "ds_1", Table: "t_order_3"}}
//
// # Rule files
//
// A ShardingSphere 5.x file (rules: - !SHARDING, - !BROADCAST,
// - !READWRITE_SPLITTING) loads as
// written: tables with actualDataNodes inline expressions, database and table
// strategies (standard, complex, hint, none), key generation (keyGenerateStrategy,
// defaultKeyGenerateStrategy and the newer keyGenerateStrategies),
// bindingTables, broadcastTables, autoTables, shardingAlgorithms and
// keyGenerators (any keygen type). The 4.x form (shardingRule: with inline
// strategies and keyGenerator) loads too. Data sources are written for Go
// (driver: pgx|mysql|sqlite, dsn) or for Java (dataSourceClassName, jdbcUrl,
// ...), whose settings are ignored; without dataSources, names come from
// actualDataNodes.
//
// Unknown keys are errors with their line and column. Keys ShardingSphere
// uses for things that do not change where rows go (props, mode, auditors,
// auditStrategy) are accepted and ignored. Other rule types (encryption,
// shadow, database discovery) are refused: ignoring them would route
// differently from the Java fleet. Java class algorithms (CLASS_BASED) load
// once a Go algorithm is registered under the class name (see Go algorithms).
//
// # Hints
//
// A hint strategy (hint: {shardingAlgorithmName: x}, with a HINT_INLINE
// algorithm over the variable value, or a Go algorithm, which gets each hint
// value with Column "") routes by values the caller gives
// outside the SQL, as ShardingSphere's HintManager: WithHint puts a Hint on
// a context, and RouteContext (or sqlhook and gormplugin, from the
// statement's context) routes by it. A hint-strategy table without a hint
// is ErrMissingShardingKey; a hint no hint strategy of the table consumes
// is ErrUnusedHint, where ShardingSphere would ignore it.
//
// A readwrite-splitting rule groups a write data source with its read data
// sources (and a load balancer: ROUND_ROBIN, RANDOM, WEIGHT). The sharding
// rules name the groups, and to the Router each group is one data source;
// ReadWriteGroup tells an integration which physical data sources stand
// behind it. A sharding rule naming a group member is refused, so a read
// data source never takes a write.
//
// # Algorithms
//
// MOD, HASH_MOD (Java hashCode, bit for bit), VOLUME_RANGE, BOUNDARY_RANGE,
// AUTO_INTERVAL, INTERVAL, INLINE, COMPLEX_INLINE and HINT_INLINE (a Groovy
// subset compiled once), and shardkey's own SNOWFLAKE_BITS and SNOWFLAKE_INTERVAL,
// which route by the bits or the embedded time of a Snowflake key, using the
// layout of the table's key generator. Every algorithm is compiled at load
// against its list of targets into index arithmetic: routing an equality
// allocates nothing and evaluates no expression.
//
// The auto algorithms (MOD, HASH_MOD, VOLUME_RANGE, BOUNDARY_RANGE,
// AUTO_INTERVAL) are accepted under tables as well as autoTables, as
// ShardingSphere 5.3 and earlier accepted them; under tables they choose
// among the actualDataNodes by numeric suffix. autoTables accept only them
// (and SNOWFLAKE_BITS), as ShardingSphere 5.4+ requires.
//
// # Go algorithms
//
// RegisterAlgorithm adds a sharding algorithm written in Go
// (ShardingAlgorithm: DoSharding returns one of the targets it is given); a
// rule file names it as type: NAME or, unchanged from the Java side, as
// type: CLASS_BASED with algorithmClassName: NAME. RangeShardingAlgorithm
// lets it route ranges; without it a range on its column is
// ErrRangeNotSupported unless its props set allow-range-query: true.
// RegisterComplexAlgorithm does the same for several columns. An answer that
// is not one of the targets is ErrAlgorithmResult, never a route. The
// registry is process-wide: register in an init function.
//
// # Failing closed
//
// Route never guesses. A sharding column with no condition is
// ErrMissingShardingKey; a value that maps to a target that does not exist
// (Java's -3 % 2 = -1 in an INLINE expression) is ErrNoRoute; a table that
// is not in the rules routes to itself only when one data source (or the
// 4.x defaultDataSourceName) can hold it, else ErrUnknownTable. Scatter is
// the explicit opt-in to run on every target the other conditions allow.
// An algorithm that computes partitions no data node serves loads, as in
// ShardingSphere: a value landing there is ErrNoRoute, a range skips them
// (no row can have been written there), and Router.Unreachable lists them.
//
// # Key generators and worker ids
//
// ShardingSphere defaults a SNOWFLAKE worker-id to 0; shardkey refuses a
// generator without one, since every process would share it and issue the
// same keys. A deployment that shares one rule file among processes passes
// each process's worker id with WithKeyGenProps.
package shardconf
