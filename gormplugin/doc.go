// Package gormplugin plugs shardkey into GORM: it fills generated keys on
// every create and routes statements to the physical tables of sharding
// rules, reading GORM's own clause tree (no SQL re-parsing).
//
//	db, _ := gorm.Open(sqlite.Open("app.db"), &gorm.Config{})
//	err := db.Use(gormplugin.New(keygen.Props{"worker-id": "7"}))
//	db.AutoMigrate(&Order{})           // order.id: a plain bigint primary key
//	db.Create(&order)                  // order.ID is a SNOWFLAKE key
//
// # Key fill
//
// Just before GORM builds an INSERT (callback shardkey:assign_key,
// registered before gorm:create), the plugin fills every zero key of the
// rows being created; a non-zero key, including one a BeforeCreate hook
// set, is kept. It covers every create path: Create of a struct, a pointer, a slice
// or array of structs or pointers, a map or a slice of maps (with
// db.Model(&T{}); the key is written back into the map, as a value of the
// field's type), CreateInBatches (each batch), Save of a row whose key is
// zero, FirstOrCreate, and associations created with their parents: GORM
// saves belongs-to parents first (gorm:save_before_associations), in nested
// creates that get their own keys, so a parent's key is issued before its
// child's; it sets has-one/has-many children's foreign keys from the
// parent's key after the parent's INSERT. (A row of a sharded table is an
// exception: routing needs its key before anything else, so it is keyed
// first.) The keys of a slice come from one
// keygen.IDGenerator.NextIDs call per key field, so a batch reserves its
// sequence range at once.
//
// A key field is an int64, keygen.ID, uint64, int or uint (on 64-bit
// platforms), or a pointer to one; with a generator of string keys (UUID)
// it is a string. keygen.ID is the recommended type: its JSON form is a
// string, which JavaScript clients read without losing digits.
//
// # Which models are keyed
//
// Without rules, a model is keyed when its primary key is a single field
// of a key type (an integer type for every generator but UUID, string for
// UUID or a generator whose keys are not int64); its key comes from the generator New builds from props, or
// the one WithGenerator gives. A custom generator (keygen.Register) fills
// an integer field when NextKey returns int64 keys: given plugin-wide, it is
// asked for one key (then skipped) to learn their type, and one of string
// keys leaves integer primary keys to the database. Named for an integer
// column (a rule's keyGenerateStrategy, the "key" tag), a key that is not a
// non-zero int64 fails the create (keygen.ErrNotInt64, keygen.ErrInvalidID)
// and nothing is stored. The struct tag "shardkey" changes that:
//
//	type AuditLog struct {
//		ID      uint   `gorm:"primaryKey" shardkey:"-"`  // opt out: GORM's auto-increment stays
//		TraceID int64  `shardkey:"key"`                  // opt in: filled on create too
//	}
//
// `shardkey:"-"` on the primary key opts the model out; `shardkey:"key"`
// on any other field opts that field in (it gets its own key from the same
// generator). Any other value of the tag is an error on create. Models that
// embed gorm.Model are keyed (its ID is a uint primary key); to opt such a
// model out, declare the ID field yourself with the tag.
//
// With rules (WithRules), a table under a keyGenerateStrategy, or the
// defaultKeyGenerateStrategy, has the column it names filled by its key
// generator, whether or not that column is the primary key, and its opt-in
// fields filled by the same generator; `shardkey:"-"` on that column stops
// the fill. Other tables follow the rules above with the props generator;
// when New was given no props and no generator, they are not keyed. The
// physical tables of a sharded table (db.Table("t_order_1")) are keyed as
// their logic table is.
//
// # Auto-increment
//
// GORM treats an integer primary key as auto-increment unless the field is
// tagged autoIncrement:false: it lists the key among the fields the database
// fills, so Create adds RETURNING "id" (PostgreSQL, SQLite) or reads
// LastInsertId (MySQL) and writes what comes back over the struct, and
// AutoMigrate creates a bigserial, AUTO_INCREMENT or AUTOINCREMENT column.
// A generated key must be the one in the row and in the struct, and a
// sequence the database advances on its own is a second key source that
// nothing keeps apart from the generator. So the first time the plugin
// meets a keyed model (callback shardkey:prepare, first in every GORM
// chain, or AutoMigrate/CreateTable), it adjusts the model's cached GORM
// schema once: each key field loses AutoIncrement and its database
// default. From then on the key is an ordinary column of the INSERT (no
// RETURNING, no LastInsertId) and AutoMigrate creates a plain bigint
// (integer in SQLite) primary key with no identity, sequence default or
// AUTO_INCREMENT. Models tagged autoIncrement:false behave the same. A
// table created by AutoMigrate before the plugin was in use keeps its
// identity column; GORM does not drop it, and explicit keys still insert.
//
// For that reason the plugin wraps db.Dialector (its Migrator method; every
// other method, savepoints and error translation are the driver's). Code
// that type-asserts db.Dialector to a driver's type should first unwrap
// it: db.Dialector.(interface{ Unwrap() gorm.Dialector }).Unwrap(). Use the
// plugin before deriving sessions from the *gorm.DB: a session copies the
// configuration, dialector included.
//
// # Routing
//
// WithRules makes the plugin route every statement on a sharded table to
// its physical tables, as shardconf's rules say, reading GORM's clause
// tree: clause.Eq/IN/Gt/Gte/Lt/Lte, struct and map conditions, primary-key
// arguments (First(&o, id)), a model's loaded key (db.Model(&o).Update),
// and Where templates. Conditions it cannot read only narrow a result, so
// leaving them out never loses a table. Where(a).Or(b) routes each branch
// and takes the union, so `key = 1 OR key = 2` reaches both tables; a
// branch without the sharding key is shardconf.ErrMissingShardingKey
// (go-gorm/sharding sends all of these to one shard).
//
//   - Create: each row goes to the table its (generated) key selects; a
//     batch over several tables becomes one INSERT per table in the same
//     transaction.
//   - Find, First, Take, Last, Count, Pluck, FindInBatches, Scan, Row and
//     Rows over several tables run on each and merge into the answer one
//     table would give (see Reads over several tables). Update and Delete
//     run on each table; RowsAffected adds up.
//   - Preload routes its IN query like any other. A JOIN between binding
//     tables (db.Table("orders").Joins("JOIN order_items ON ...")) runs on
//     each pair of same-index tables, with the logic names as aliases, so the
//     ON clause and column qualifiers written against logic names work.
//   - Refused with ErrUnsupported rather than run on the logic table or
//     answered wrongly: a JOIN of a table that is not bound (or an
//     association JOIN of a sharded table), subqueries, aliased table
//     expressions, raw SQL (Raw, Exec) naming a sharded table (reading SQL is
//     sqlhook's job), writes to a broadcast table with several copies,
//     writes that would move a row (see Writes below), an Update or
//     Delete with Limit reaching several tables (each would take the
//     limit), a write or batch spanning data sources, a statement in a transaction
//     reaching a data source other than its own (both allowed with
//     WithTwoPhaseCommit, see Two-phase commit), and the reads over several
//     tables that no merge answers exactly (below).
//
// Conditions inside a grouped OR, or on another table's columns (a joined
// table's "items.id = ?"), do not narrow the tables: without another
// condition on the sharding key such statements need WithScatter.
//
// With one data source the *gorm.DB's own connection serves it. With
// several, WithDataSources gives every data source's pool; statements go to
// their pool. A read outside a transaction may span data sources: each
// target runs on its own pool and the results merge as above. A write
// spanning data sources is refused (GORM runs it in one transaction, which
// cannot span two databases): group batches by data source. db.Transaction
// (which begins on the *gorm.DB's own pool) may reach only that pool's data
// source: open a *gorm.DB on another data source, with the plugin, for
// transactions there (with PrepareStmt too: the pool GORM wraps is
// recognised). WithTwoPhaseCommit lifts both limits (see Two-phase commit).
//
// Hints: a table whose rules route it by hint (hint: strategies,
// HINT_INLINE) is placed by shardconf.WithHint in the statement's context,
// db.WithContext(ctx), which GORM hands on to the statements it derives
// (association saves, Preload, Save's and FirstOrCreate's second
// statement, the statements of db.Transaction's callback). Create, Find
// and the other reads, Update, Delete and the checks of writes that set
// a sharding column all route with it; without a hint the statement is
// shardconf.ErrMissingShardingKey (with WithScatter a read without one
// goes to every table). A Joins partner follows the driving table; a
// hint for it must agree. A hint for a table not routed by hint, for a
// broadcast or unsharded table, refuses the statement
// (shardconf.ErrUnusedHint), and so does raw SQL under a hint for every
// table (shardconf.AllTables) or naming a hinted table or a physical
// table of one (raw SQL is not routed). A primary key set by the caller is looked for
// in the table's other physical tables, as for any table whose key does
// not route its rows: a Create or Save under a hint for another table
// than the row's is refused rather than writing the key twice.
//
// # Conditions written as text
//
// A Where template is read as SQL tokens, after GORM's own substitution
// of its values: placeholders ("user_id = ?", "user_id IN ?", "user_id IN
// (?, ?)"), named arguments ("user_id = @uid" with sql.Named, a
// map[string]any or a struct) and literal values ("user_id = 101",
// "user_id IN (1, 2)", "code = 'a1'"). What it reads are the AND-ed
// comparisons <column> <op> <value> (op =, <, <=, >, >=, IN; the column
// bare, quoted, or qualified with the logic table, "orders.user_id") at
// the template's top level or in parentheses holding only such ANDs. A
// literal routes only for a column whose Go type the model states: an
// integer literal for an integer field, a '...' string (with = or IN) for
// a string field; otherwise (a number for a text column, which MySQL
// compares as numbers, '0101' = 101; a decimal, 1e2, 0x1F, a cast) it is
// not read. Without a model (db.Table with a map) literals are not read.
//
// Reading is exact or nothing. An AND-ed part it cannot read (user_id <>
// 1, NOT ..., a function, a column of another table) narrows nothing, as
// the other parts still hold; the whole template narrows nothing when it
// has an OR, XOR or || at its top level, a CASE, a comment (--, /* */
// or MySQL's #), a backslash, a placeholder or @name inside quotes, a dollar-quoted
// string, a double-quoted name on MySQL (a string there), a time given by
// a named map or struct, or a character the scanner does not know. A
// statement whose templates narrow nothing needs its sharding key
// elsewhere (shardconf.ErrMissingShardingKey) or WithScatter (every
// table, merged). GORM joins conditions with AND and puts a template in
// parentheses only when its text holds " AND " or " OR ": a template
// that would reshape the clause around it — an OR written otherwise (a
// tab or newline before OR, OR(, MySQL's XOR and ||), a comment, which
// swallows what follows, a parenthesis closed outside it — makes the
// whole WHERE clause narrow nothing, whatever else it says.
//
// A statement on one table names the physical table with the logic
// table's name as alias — FROM "orders_1" AS "orders", UPDATE "orders_1"
// AS "orders", DELETE FROM "orders_1" AS "orders" (PostgreSQL, SQLite),
// DELETE `orders` FROM `orders_1` AS `orders` (MySQL, MariaDB) — so
// columns qualified with the logic table in Where, Select, Order, Pluck
// and Count work as on an unsharded table. A MySQL DELETE with ORDER BY,
// LIMIT or RETURNING (which the multi-table form does not take) names the
// physical table without alias: qualify its columns with nothing. An
// INSERT, and a statement naming a physical table (db.Table("orders_1")),
// are not aliased.
//
// # Reads over several tables
//
// Each table is asked the statement's SELECT, as GORM builds it for that
// table (the physical table named with the logic name as alias, so columns
// qualified with the logic table work), rewritten for merging: sort keys,
// grouping keys, HAVING operands and AVG's SUM and COUNT the select list
// leaves out are added as hidden columns (never compared as zero values),
// HAVING is taken out and evaluated on the merged groups, a DISTINCT
// aggregate's argument is added to GROUP BY so each table returns its
// distinct values. The answers merge in one engine (internal/merge, shared
// with sqlhook) and reach GORM as a *sql.Rows, so structs, maps, Pluck,
// Count and sql.Scanner fields convert exactly as from one table; hooks
// (AfterFind), RowsAffected and ErrRecordNotFound are GORM's own. Merged:
//
//   - ORDER BY columns, select aliases and positions, with the database's
//     NULL placement (PostgreSQL: NULL largest; MySQL, MariaDB, SQLite:
//     smallest), NULLS FIRST/LAST, PostgreSQL's USING < and >; numbers,
//     decimals, times and booleans compared as their types; LIMIT and
//     OFFSET after merging (each table returns at most LIMIT+OFFSET rows).
//   - ORDER BY and GROUP BY expressions computed from one row
//     (amount % 3), read as hidden columns and merged by their values.
//   - GROUP BY with HAVING (comparisons of aggregates, grouped columns,
//     arguments and literals; IN, BETWEEN, IS NULL, AND, OR, NOT), COUNT,
//     SUM, MIN, MAX, AVG (from each table's SUM and COUNT, divided as the
//     database divides; SUM and AVG of columns combined by + - *),
//     COUNT/SUM/AVG(DISTINCT x), aggregates without GROUP BY, SELECT
//     DISTINCT, Count with Distinct("col") or Group.
//   - Aggregates inside expressions in the select list, ORDER BY and
//     HAVING (SUM(a) / COUNT(*), COUNT(*) * 2, COALESCE(MAX(x), 0): the
//     four arithmetic operators, unary minus, COALESCE, numbers,
//     arguments and grouped columns), computed again from the merged
//     aggregates with the database's typing and division.
//   - Destinations of any type GORM scans: the model, another struct
//     (GORM selects its fields), maps, Pluck's slices, scalars.
//
// Names resolve as the database resolves them: an unqualified ORDER BY
// name (text or clause.Column) is a select alias first; PostgreSQL's
// quoted aliases keep their case ("N" and n are two columns). MySQL's
// DISTINCTROW merges as DISTINCT. Hidden columns are aliased
// shardkey_hidden_<n>; a select alias of that form is refused.
//
// Text is ordered (ORDER BY, MIN, MAX, < in HAVING) or grouped (GROUP BY,
// DISTINCT, COUNT(DISTINCT)) only where the comparison is known to be the
// column's collation: a collation the model declares in the field's type
// tag (`gorm:"type:varchar(20) COLLATE utf8mb4_bin"`), a key written with
// an explicit COLLATE, or WithBinaryCollation — the collation being binary
// (`"C"`/POSIX on PostgreSQL, *_bin or binary on MySQL/MariaDB, BINARY on
// SQLite) or SQLite's NOCASE and RTRIM. A declared collation the merge
// does not reproduce is refused even under WithBinaryCollation. On
// PostgreSQL grouping and DISTINCT are allowed without it (equality is
// bytewise in deterministic collations; a column under a nondeterministic
// collation, which PostgreSQL creates only on request, must not be
// grouped across tables). Otherwise the read is ErrUnsupported, with a
// message that says how to allow it.
//
// Refused with ErrUnsupported before anything runs: an aggregate under
// another operator or function (count(*) % 2, round(avg(x))), SUM or AVG
// of a division or a function (each
// table's result may already be rounded), aggregates other than these five
// (GROUP_CONCAT, STRING_AGG, ...), window functions and subqueries, a
// select column neither grouped nor aggregated, ORDER BY a column or
// expression DISTINCT does not select, ORDER BY an alias beside * or an
// expression over an alias, SELECT * with grouping, HAVING of other forms
// (LIKE, functions, subqueries), placeholders in ORDER BY or GROUP BY,
// named arguments in these clauses, ordering or grouping a MariaDB column
// the model declares uuid or inet (reported as CHAR), values of types the
// engine cannot order or group (PostgreSQL interval, money, json, enums;
// MySQL ENUM, SET, JSON), PostgreSQL's DISTINCT ON, an aggregate called
// by a quoted name ("count"(*)), ordered-set aggregates (WITHIN GROUP) and
// FILTER, a Select argument that is SQL (gorm.Expr, a subquery: each table
// would run it), on MySQL a double-quoted "name" in Select, Order, Group or
// Having (MySQL reads it as a string), on SQLite a HAVING name that is
// both a select alias and a column (SQLite reads the column), MIN/MAX of a
// MariaDB BIT column, and tables that return different column types or
// orders (a migration done on one table only). An error the engine finds
// while merging (a text value where none was allowed, too many groups)
// also wraps ErrUnsupported.
//
// Limits. A binary collation is trusted to order the UTF-8 bytes the
// driver returns: true of utf8, utf8mb4 and ascii columns; a MySQL latin1
// column must not be declared with WithBinaryCollation (a declared or
// explicit latin1_bin is refused). An aggregate the reader does not know
// by name (a PostgreSQL CREATE AGGREGATE, a MySQL aggregate UDF) passes as
// a per-row expression and returns one row per table: do not read custom
// aggregates across tables. SUM and AVG of floating-point columns add in
// another order than one table would, so their last digits may differ, as
// they may between two plans of one table.
//
// Memory: an ORDER BY merge streams (one row per table in a heap) when
// every table's result can stay open at once, that is when the pool is a
// *sql.DB without a connection limit. In a transaction, or on a pool with
// SetMaxOpenConns, each table's rows are read into memory before the next
// table's query runs (at most LIMIT+OFFSET rows each under a LIMIT).
// GROUP BY, DISTINCT and the distinct aggregates hold their groups and
// distinct values in memory, at most 1<<20 of them (more is an error).
//
// # Writes
//
// Every write is checked on the statement GORM is about to run, whatever
// API and Go types built it: the final clause.Set of an UPDATE (the one
// GORM's ConvertToAssignments makes from a struct of the model's or
// another type, a map keyed by field or column names, Update,
// UpdateColumn(s), Save), the clause.OnConflict of an upsert, and the
// values of every row a create inserts. The plugin routes before GORM
// converts the change set (GORM begins its transaction on the routed
// data source), so it converts it itself, and routes the UPDATE again
// just before it runs; BeforeUpdate/BeforeSave hooks or association saves
// that changed the target in between make it fail. Refused:
//
//   - An UPDATE assigning a sharding column a value that, with the
//     statement's other conditions, does not route to the one table the
//     statement runs on: shardconf.ErrShardingKeyChange (a
//     *shardconf.RouteError naming table and column, also matching
//     ErrUnsupported). The row would stay in a table its new value does
//     not route to; delete it and create it again. A value routing to
//     the same single target is allowed, as ShardingSphere allows it. An
//     assignment in a statement reaching several tables, an expression
//     (gorm.Expr, a column, a subquery) and NULL are always refused.
//   - A statement on one loaded row (Save, Updates(&row), Delete(&row),
//     db.Model(&row).Update...: a model with its whole primary key, which
//     GORM adds to the WHERE clause, and no OR) routes by the row's own
//     sharding values (what the SET writes, else the model's non-zero
//     values, and its zero values when the statement names no sharding
//     key otherwise: a loaded row of user 0) for the columns the WHERE
//     clause does not name. A row whose
//     sharding value was changed in memory is not there: the statement
//     matches nothing, and the plugin looks for its primary key in the
//     other tables; found, it is ErrShardingKeyChange instead of a silent
//     no-op, and instead of Save's fallback INSERT, which would put one
//     key in two tables. With the old value in the WHERE clause the new
//     value is a key change as above.
//   - An upsert (OnConflict DoUpdates or UpdateAll) whose update part
//     could leave the conflicting row where its values do not route. The
//     conflicting row is in the table the row is inserted in; after the
//     update each sharding column holds the assigned value (excluded.col
//     is the inserted row's own) or, when not assigned, its old value,
//     known only for a column of the conflict target (PostgreSQL and
//     SQLite update only a row conflicting there; MySQL's ON DUPLICATE
//     KEY UPDATE fires on any unique key, so there only the primary key
//     counts, and only when the model declares no other unique key).
//     Every sharding column must be known and route to that table, else
//     ErrShardingKeyChange.
//   - A create whose primary key the caller set (not generated) when the
//     key alone does not route the row (user_id picks the database, id
//     the table): the key is looked for in the table's other physical
//     tables (one query each); found, a plain INSERT is
//     gorm.ErrDuplicatedKey, as one table would answer, and an upsert or
//     DO NOTHING is ErrShardingKeyChange. Generated keys are new and not
//     looked for.
//   - A statement naming a physical table (db.Table("t_order_1")) that
//     would not act as the same statement on the logic table: a create
//     whose rows route elsewhere, an update, delete or read whose
//     conditions route to another table too (ErrUnsupported). Otherwise
//     it runs in the data source its conditions route to, with the
//     logic table's checks.
//   - A create leaving a sharding column out of the INSERT (Select, Omit,
//     a field GORM may not write), or whose zero value the database would
//     replace with a default expression; a default: tag value and
//     autoCreateTime are applied before routing, as GORM applies them.
//   - A time.Time sharding value (in a created row, an assignment or a
//     WHERE clause) whose UTC offset differs from WithTimeLocation's
//     (UTC unless given): ErrTimeLocation. A time routes by its wall
//     clock, and drivers store different wall clocks for one time.Time
//     (go-sql-driver/mysql converts it to its DSN's loc, pgx writes a
//     timestamp column with its own wall clock, a timestamptz with its
//     instant); in that location all of them store the wall clock it
//     routes by. The loc of a MySQL DSN the *gorm.DB was opened with is
//     taken when WithTimeLocation is not given (and must match it when
//     it is); give pools passed to WithDataSources the same loc.
//   - Raw SQL (Exec, Raw) naming a physical table of a sharded table
//     that may write, and a table expression or join naming one
//     (db.Table("t_order_1 AS o")) (ErrUnsupported): they would run
//     unrouted and unchecked on the default data source. A raw read of a
//     physical table runs there; db.Table("t_order_1") is routed as
//     above.
//   - A BeforeCreate hook that changes a row's sharding values after
//     routing (ErrUnsupported): the transaction is already on the first
//     target's data source. Set sharding values before Create.
//   - Association Append/Replace of a sharded has-one/has-many outside a
//     transaction (ErrUnsupported): GORM saves the new rows in one
//     statement and, for Replace, sets the old rows' foreign key to NULL
//     in another, which is refused; run them in db.Transaction, where a
//     refusal rolls both back (Unscoped().Replace deletes the old rows and
//     is routed).
//
// Refusals come before the statement runs. The statements of one GORM
// call run in GORM's transaction (association saves included), which a
// refusal rolls back; with SkipDefaultTransaction the plugin begins one
// itself for a create or update that saves associations of a sharded
// table.
//
// # Two-phase commit
//
// With WithTwoPhaseCommit, writes and transactions may span data sources
// and stay atomic: db.Create(&batch) whose rows belong to several data
// sources (no grouping needed: the rows are split per data source and per
// table inside one transaction), db.Transaction touching several, an
// Update or Delete whose targets span them. Either every data source
// commits or none does. Use it when one operation must change rows of
// several data sources together (a transfer between users sharded apart);
// when an operation's rows can share a data source (shard related tables
// by the same key), a local transaction is cheaper.
//
//	p := gormplugin.New(nil, gormplugin.WithRules(rules),
//		gormplugin.WithDataSources(pools), gormplugin.WithTwoPhaseCommit())
//	err := db.Use(p)
//	defer p.Close()
//	err = db.Transaction(func(tx *gorm.DB) error {
//		if err := tx.Model(&Account{}).Where("user_id = ?", from).Update("balance", gorm.Expr("balance - ?", n)).Error; err != nil {
//			return err
//		}
//		return tx.Model(&Account{}).Where("user_id = ?", to).Update("balance", gorm.Expr("balance + ?", n)).Error
//	})
//
// Every transaction GORM begins on the *gorm.DB (db.Transaction, db.Begin,
// a write's default transaction, and the one the plugin begins for a write
// over several data sources under SkipDefaultTransaction) is then the
// plugin's: one branch per data source, begun at the first statement
// routed there, on a connection of its own taken from the data source's
// *sql.DB (WithDataSources must give *sql.DB pools, or PreparedStmtDBs over
// them). A PostgreSQL branch begins with BEGIN, a MySQL/MariaDB branch with
// XA START (after SET TRANSACTION ISOLATION LEVEL when the TxOptions ask),
// a read-only transaction's with a plain read-only BEGIN. Statements the
// plugin does not route (unsharded tables, raw SQL) run on the branch of
// the data source the *gorm.DB was opened on. A commit over one branch is
// an ordinary one-phase commit. Over several, every branch is prepared
// (PREPARE TRANSACTION, XA PREPARE), the decision is logged in a table of
// one data source (WithTwoPhaseLog; default shardkey_xa_log in the rules'
// first data source, created when missing) and every branch is committed.
// A failure before the decision is logged rolls every branch back and is
// an ordinary error, never ErrTxInDoubt. When the logging of the decision,
// or a branch's commit after it, cannot be confirmed, the error matches
// ErrTxInDoubt (a *TxInDoubtError): the outcome is not known yet; the
// plugin's recovery
// (at db.Use and every interval of WithTwoPhaseRecovery, in any process
// sharing the log) commits or rolls back the branches left prepared, the
// same way on every data source. Plugin.Close stops it.
//
// Savepoints (SavePoint, RollbackTo, a nested db.Transaction) are set on
// every branch begun, and at its start on a branch begun later, so rolling
// back to one undoes the work of every data source since. A transaction
// that cannot commit whole any more refuses to commit (Commit rolls every
// branch back and returns an error) unless rolled back to a savepoint set
// before the failure: after a statement failed on a PostgreSQL branch
// (PostgreSQL aborts the transaction, and PREPARE would silently roll it
// back), a write over several tables failed after writing some, or a
// data source could not begin its branch; until then every statement of
// it fails too (it would see the failed write's part). A refused
// statement runs nothing: returning its error from db.Transaction
// rolls every data source back. Raw SQL that would end or reshape the
// transaction on one branch (COMMIT, ROLLBACK, BEGIN, SAVEPOINT, RELEASE,
// PREPARE TRANSACTION, XA, MySQL's SET autocommit), a raw text of several
// statements, and a savepoint name that is no identifier are refused
// (ErrUnsupported): use the transaction's Commit, Rollback, SavePoint and
// RollbackTo, and one statement per Exec.
//
// What it costs:
//   - A transaction holds one connection per data source it reaches, for
//     its whole length; recovery and the decision log take further
//     connections from the same *sql.DB pools. Leave room above
//     SetMaxOpenConns for them: when transactions waiting to commit hold
//     every connection, their commits wait out the timeout and fail or
//     end in doubt (ErrTxInDoubt; recovery then rolls them back). A log
//     data source whose pool allows one connection refuses such commits
//     at once (ErrTwoPhaseUnavailable, rolled back).
//   - A transaction must commit within the timeout of WithTwoPhaseRecovery
//     (default 60s) from its begin: an older one is rolled back at commit,
//     since recovery may already be rolling its branches back. Its
//     statements are cancelled at that time too, so a deadlock across
//     data sources (which neither database sees) ends then.
//   - A commit over several data sources adds a prepare round trip per
//     branch (in parallel), one INSERT into the decision log on its own
//     connection, and a commit round trip per branch (in parallel).
//   - On MySQL/MariaDB every read-write transaction on a data source is an
//     XA transaction, even one that stays in one data source (committed
//     with XA COMMIT ... ONE PHASE); MySQL refuses statements that commit
//     implicitly (DDL, LOCK TABLES) inside one.
//   - PostgreSQL needs max_prepared_transactions above 0; db.Use checks
//     (ErrTwoPhaseUnavailable). A prepared branch keeps its locks until
//     committed: after a crash, until recovery ends it.
//   - SQLite cannot prepare: a transaction reaching a SQLite data source
//     cannot reach another (ErrUnsupported, matching
//     ErrTwoPhaseUnavailable); with only SQLite data sources db.Use
//     refuses the option.
//   - No global read snapshot across data sources: each branch reads its
//     own database's snapshot, and a read spanning data sources (in a
//     transaction or not) may see a concurrent two-phase transaction
//     committed in one data source and not yet in another. Two-phase
//     commit makes writes atomic, not isolated across data sources.
//   - The transaction's statements run unprepared on its branches
//     (PrepareStmt applies outside transactions; a PrepareStmt session
//     begins and stays in two-phase transactions all the same).
//
// Without WithTwoPhaseCommit nothing of this runs, and a write or
// transaction reaching a second data source is ErrUnsupported.
//
// # Observability
//
// WithObserver reports the plugin's work to an observe.Observer (package
// shardotel implements one on OpenTelemetry): a start and an end for every
// statement routed to physical tables, with its operation, logic tables,
// targets, data sources and fan-out (one table, some, or all of the logic
// table's data nodes), the rows a merge over several tables returned, and
// how long it took; a start and an end for each physical statement inside
// it, in the statement's context; every statement refused before anything
// of it ran, once, with its reason; and the outcome of every transaction
// over several data sources (WithTwoPhaseCommit): committed, rolled back
// or in doubt. The plugin keeps no route-plan cache, so it reports no
// cache lookups. Without an observer each of these points costs one nil
// check.
//
// # Migrator
//
// AutoMigrate and CreateTable create every physical table of a sharded (or
// broadcast) model in its data source instead of the logic table. The
// Migrator's HasTable, DropTable, AddColumn, DropColumn, AlterColumn,
// RenameColumn, HasColumn, CreateIndex, DropIndex, HasIndex and
// RenameIndex, given the model or its logic table's name, act on every
// physical table, each in its data source. "Has" means every physical
// table has it: HasTable, HasColumn and HasIndex are false when any one
// table lacks it (a migration that stopped half way). AutoMigrate, which
// works table by table, completes such a migration; an operation on every
// table (AddColumn, CreateIndex) stops with the database's error at the
// first table where it is already done. The logic table itself never
// exists. ColumnTypes, GetIndexes and TableType (which describe one
// table), RenameTable, and the constraint operations are refused with
// ErrUnsupported on a sharded model: ask db.Table("orders_1").Migrator().
//
// Index names GORM derives (idx_<table>_<column>) are per physical table.
// An index given an explicit name (index:idx_code) keeps it on MySQL and
// MariaDB, where index names are per table; on PostgreSQL and SQLite,
// where they are unique in the schema, each physical table's copy is
// named with the logic table's name in it replaced by the physical
// table's (idx_orders_code on orders_1 is idx_orders_1_code), or else
// with "_<physical table>" appended (idx_code_orders_1); a physical
// table named as its logic table (a broadcast copy) keeps the name. Pass
// the Migrator the model's names (the logic table's derived name, the
// explicit name, or the field name): it uses each table's own.
package gormplugin
