package shardconf

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/shardkey/shardkey/keygen"
)

// Config is a loaded rule file: the model of a ShardingSphere sharding
// configuration, with the position of every element for error messages.
// NewRouter compiles it.
type Config struct {
	File string // the file it was loaded from, "" for Parse

	// DataSources in file order. Entries written for Java (dataSourceClassName,
	// jdbcUrl, ...) keep only their name. When the file has no dataSources,
	// the names come from actualDataNodes. These are the data sources the
	// sharding rules name: a readwrite-splitting group (ReadWriteGroups)
	// appears once, under its own name and with its write data source's
	// Driver and DSN, in place of its members.
	DataSources []DataSource

	// ReadWriteGroups are the readwrite-splitting groups of a
	// !READWRITE_SPLITTING rule, in file order: each is one logical data
	// source whose writes go to one database and whose reads outside a
	// transaction go to its replicas. Router.ReadWriteGroup looks them up.
	ReadWriteGroups []*ReadWriteGroup

	// Tables are the sharding tables and auto tables, in file order.
	Tables []*Table

	// Broadcast tables exist whole in every data source.
	Broadcast []string

	// BindingGroups are groups of tables sharded alike (bindingTables).
	BindingGroups [][]string

	DefaultDatabaseStrategy *Strategy
	DefaultTableStrategy    *Strategy
	DefaultKeyGenerate      *KeyGenerate
	// DefaultShardingColumn fills a standard strategy without shardingColumn.
	DefaultShardingColumn string
	// DefaultDataSource holds tables the rules do not shard (4.x
	// defaultDataSourceName); "" means the only data source, if there is one.
	DefaultDataSource string

	Algorithms    map[string]*Algorithm
	KeyGenerators map[string]*KeyGenerator

	dataSourcesGiven bool // the file had a dataSources section
	// positions of Broadcast and BindingGroups entries, and of
	// DefaultDataSource, for errors (absent for a Config built in code)
	broadcastPos, bindingPos []Pos
	defaultDSPos             Pos
	// singlePlaces: the data sources a !SINGLE rule names, with where
	singlePlaces []singlePlace
}

// singlePlace is a data source a !SINGLE rule puts unsharded tables on
// ("*" for any).
type singlePlace struct {
	dataSource string
	pos        Pos
}

// broadcastAt is the position of Broadcast[i], if known.
func (c *Config) broadcastAt(i int) Pos {
	if i < len(c.broadcastPos) {
		return c.broadcastPos[i]
	}
	return Pos{Path: "broadcast"}
}

// bindingAt is the position of BindingGroups[i], if known.
func (c *Config) bindingAt(i int) Pos {
	if i < len(c.bindingPos) {
		return c.bindingPos[i]
	}
	return Pos{Path: "bindingTables"}
}

// Pos is where an element was written.
type Pos struct {
	Line, Column int
	Path         string // YAML path
}

// DataSource is one database. DSN may hold a password: print it with
// RedactedDSN.
type DataSource struct {
	Name   string
	Driver string // pgx, mysql or sqlite; "" for Java entries
	DSN    string
	Pos    Pos
}

var passwordKV = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

// RedactedDSN is the DSN with any password replaced by "xxxxx".
func (d DataSource) RedactedDSN() string { return redactDSN(d.DSN) }

func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	// MySQL form user:pass@tcp(host)/db. As go-sql-driver/mysql reads it,
	// the user info ends at the last '@' before the last '/', so a password
	// may hold '@'.
	end := strings.LastIndexByte(dsn, '/')
	if end < 0 {
		end = len(dsn)
	}
	if at := strings.LastIndexByte(dsn[:end], '@'); at > 0 {
		if colon := strings.IndexByte(dsn[:at], ':'); colon >= 0 {
			return dsn[:colon+1] + "xxxxx" + dsn[at:]
		}
	}
	return passwordKV.ReplaceAllString(dsn, "${1}xxxxx")
}

// Table is one logic table's rule.
type Table struct {
	Name string
	// DataNodes are the physical tables, in actualDataNodes order.
	DataNodes []DataNode
	// DataNodesExpr is actualDataNodes as written ("" when absent).
	DataNodesExpr string

	DatabaseStrategy *Strategy // nil: the default database strategy
	TableStrategy    *Strategy // nil: the default table strategy
	KeyGenerate      *KeyGenerate

	// Auto is set for autoTables: the tables are Name_0 .. Name_{n-1}, n
	// from the algorithm, spread over AutoDataSources round-robin, and
	// AutoStrategy picks the table.
	Auto            bool
	AutoDataSources []string
	AutoStrategy    *Strategy

	Pos Pos
}

// DataNode is one physical table in one data source.
type DataNode struct{ DataSource, Table string }

// Strategy is a sharding strategy. A hint strategy has no columns: it
// routes by the values of a Hint (WithHint), never by conditions.
type Strategy struct {
	Type      string   // standard, complex, hint or none
	Columns   []string // one for standard, none for hint
	Algorithm string   // shardingAlgorithmName
	Pos       Pos
}

// KeyGenerate names the generator that fills a table's key column.
type KeyGenerate struct {
	Column    string
	Generator string // keyGeneratorName
	Pos       Pos
}

// Algorithm is a named sharding algorithm (shardingAlgorithms).
type Algorithm struct {
	Name  string
	Type  string // upper case
	Props map[string]string
	Pos   Pos
}

// KeyGenerator is a named key generator (keyGenerators): any keygen type.
type KeyGenerator struct {
	Name  string
	Type  string
	Props keygen.Props
	Pos   Pos
}

// table returns the rule of a logic table (case-insensitive), or nil.
func (c *Config) table(name string) *Table {
	for _, t := range c.Tables {
		if strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

func (c *Config) errAt(p Pos, format string, args ...any) *ConfigError {
	return &ConfigError{File: c.File, Line: p.Line, Column: p.Column, Path: p.Path, Msg: fmt.Sprintf(format, args...)}
}
