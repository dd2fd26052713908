package shardconf

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shardkey/shardkey/keygen"
)

// Load reads a rule file. Errors are *ConfigError values with the file,
// line, column and YAML path of each problem, joined with errors.Join.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("shardconf: %w", err)
	}
	return parse(path, data)
}

// Parse reads rules from YAML text. It accepts ShardingSphere 5.x files
// (rules: - !SHARDING, - !BROADCAST, - !READWRITE_SPLITTING) and 4.x files
// (shardingRule:). Other rules (encryption, shadow, masking, ...) are
// refused: ignoring them could put rows elsewhere than ShardingSphere. Keys
// it does not know are errors; keys ShardingSphere uses for things that do
// not affect routing (props, mode, auditors, the global rules such as
// sqlFederation: or - !SQL_PARSER, and !SINGLE) are accepted and ignored.
func Parse(data []byte) (*Config, error) { return parse("", data) }

func parse(file string, data []byte) (*Config, error) {
	l := &loader{cfg: &Config{File: file, Algorithms: map[string]*Algorithm{}, KeyGenerators: map[string]*KeyGenerator{}},
		rwPos: map[*ReadWriteGroup]rwGroupRead{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		ce := &ConfigError{File: file, Msg: err.Error(), Err: err}
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			if line := yamlErrLine(err.Error()); line > 0 {
				ce.Line, ce.Column = line, 1
			}
		}
		return nil, ce
	}
	root := deref(&doc)
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		return nil, &ConfigError{File: file, Msg: "the rule file is empty"}
	}
	l.top(root)
	l.finish()
	if len(l.errs) > 0 {
		return nil, joinErrors(l.errs)
	}
	return l.cfg, nil
}

// yamlErrLine finds "line N" in a YAML syntax error message.
func yamlErrLine(msg string) int {
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	j := i + 5
	for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(msg[i+5 : j])
	return n
}

type loader struct {
	cfg  *Config
	errs []error
	// javaSources: the dataSources entries were written for Java
	javaSources bool
	// rwPos: where each readwrite-splitting group's names were written
	rwPos map[*ReadWriteGroup]rwGroupRead
}

func (l *loader) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &ConfigError{File: l.cfg.File, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	l.errs = append(l.errs, e)
}

func pos(n *yaml.Node, path string) Pos {
	if n == nil {
		return Pos{Path: path}
	}
	return Pos{Line: n.Line, Column: n.Column, Path: path}
}

// deref follows documents and aliases to the node that holds content.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || (n.Value == "" && n.Style == 0)))
}

// mapReader reads one YAML mapping, remembering which keys were used so
// that the rest can be reported as unknown.
type mapReader struct {
	l     *loader
	path  string
	node  *yaml.Node
	keys  []*yaml.Node // key nodes in order
	vals  map[string]*yaml.Node
	kpos  map[string]*yaml.Node
	used  map[string]bool
	valid bool
}

// mapping reads n as a mapping; null gives an empty one. A non-mapping is
// reported and read as empty.
func (l *loader) mapping(n *yaml.Node, path string) *mapReader {
	m := &mapReader{l: l, path: path, node: n, vals: map[string]*yaml.Node{}, kpos: map[string]*yaml.Node{}, used: map[string]bool{}}
	n = deref(n)
	if isNull(n) {
		return m
	}
	if n.Kind != yaml.MappingNode {
		l.errorf(n, path, "want a mapping, found %s", kindName(n))
		return m
	}
	m.valid = true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, path, "mapping keys must be plain names")
			continue
		}
		if k.Value == "<<" { // merge key: read the merged mapping's keys too
			for _, src := range mergeSources(v) {
				for j := 0; j+1 < len(src.Content); j += 2 {
					mk := deref(src.Content[j])
					if _, dup := m.vals[mk.Value]; !dup {
						m.keys = append(m.keys, mk)
						m.vals[mk.Value], m.kpos[mk.Value] = src.Content[j+1], mk
					}
				}
			}
			continue
		}
		if prev, dup := m.kpos[k.Value]; dup {
			l.errorf(k, joinPath(path, k.Value), "key given twice (first at line %d)", prev.Line)
			continue
		}
		m.keys = append(m.keys, k)
		m.vals[k.Value], m.kpos[k.Value] = v, k
	}
	return m
}

func mergeSources(v *yaml.Node) []*yaml.Node {
	v = deref(v)
	if v == nil {
		return nil
	}
	if v.Kind == yaml.SequenceNode {
		var out []*yaml.Node
		for _, c := range v.Content {
			if d := deref(c); d != nil && d.Kind == yaml.MappingNode {
				out = append(out, d)
			}
		}
		return out
	}
	if v.Kind == yaml.MappingNode {
		return []*yaml.Node{v}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "something else"
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// get returns the value of key, or nil, and marks it used.
func (m *mapReader) get(key string) *yaml.Node {
	m.used[key] = true
	return m.vals[key]
}

func (m *mapReader) has(key string) bool { _, ok := m.vals[key]; return ok }

// str reads a scalar; absent or null gives "".
func (m *mapReader) str(key string) string {
	n := deref(m.get(key))
	if isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		m.l.errorf(n, joinPath(m.path, key), "want a single value, found %s", kindName(n))
		return ""
	}
	return strings.TrimSpace(n.Value)
}

// required reads a scalar that must be present and non-empty.
func (m *mapReader) required(key string) string {
	s := m.str(key)
	if s == "" && m.valid {
		n := m.vals[key]
		if n == nil {
			n = m.node
		}
		m.l.errorf(n, joinPath(m.path, key), "required")
	}
	return s
}

// keyPos is the position of key's name, or of the mapping.
func (m *mapReader) keyPos(key string) Pos {
	if k := m.kpos[key]; k != nil {
		return pos(k, joinPath(m.path, key))
	}
	return pos(deref(m.node), m.path)
}

// valuePos is the position of key's value, or of the mapping.
func (m *mapReader) valuePos(key string) Pos {
	if v := deref(m.vals[key]); v != nil {
		return pos(v, joinPath(m.path, key))
	}
	return pos(deref(m.node), m.path)
}

// each calls f for every key in file order.
func (m *mapReader) each(f func(key string, val *yaml.Node, path string)) {
	for _, k := range m.keys {
		m.used[k.Value] = true
		f(k.Value, m.vals[k.Value], joinPath(m.path, k.Value))
	}
}

// done reports keys nobody read, except those in ignored.
func (m *mapReader) done(ignored ...string) {
	for _, k := range m.keys {
		if m.used[k.Value] {
			continue
		}
		skip := false
		for _, ig := range ignored {
			if k.Value == ig {
				skip = true
			}
		}
		if !skip {
			m.l.errorf(k, joinPath(m.path, k.Value), "unknown key %q", k.Value)
		}
	}
}

// stringMap reads a mapping of scalars (props).
func (l *loader) stringMap(n *yaml.Node, path string) map[string]string {
	m := l.mapping(n, path)
	out := map[string]string{}
	m.each(func(key string, val *yaml.Node, p string) {
		v := deref(val)
		switch {
		case isNull(v):
			out[key] = ""
		case v.Kind == yaml.ScalarNode:
			out[key] = strings.TrimSpace(v.Value)
		default:
			l.errorf(v, p, "want a single value, found %s", kindName(v))
		}
	})
	return out
}

// stringList reads a list of scalars, or one scalar of comma-separated
// items.
func (l *loader) stringList(n *yaml.Node, path string) []string {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return splitList(n.Value)
	}
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "want a list, found %s", kindName(n))
		return nil
	}
	var out []string
	for i, c := range n.Content {
		c = deref(c)
		if c.Kind != yaml.ScalarNode {
			l.errorf(c, fmt.Sprintf("%s[%d]", path, i), "want a name, found %s", kindName(c))
			continue
		}
		out = append(out, strings.TrimSpace(c.Value))
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// top reads the document root.
func (l *loader) top(root *yaml.Node) {
	m := l.mapping(root, "")
	if !m.valid {
		return
	}
	if m.has("dataSources") {
		l.dataSources(m.get("dataSources"), "dataSources")
	}
	if n := m.get("rules"); n != nil {
		l.rules(n, "rules")
	}
	if n := m.get("shardingRule"); n != nil {
		l.shardingRule4(n, "shardingRule")
	}
	for _, unsupported := range []string{"masterSlaveRule", "encryptRule", "shadowRule"} {
		if m.has(unsupported) {
			m.get(unsupported)
			l.errorf(m.kpos[unsupported], unsupported, "%s is not supported by shardkey: it changes where statements go", unsupported)
		}
	}
	if !m.has("rules") && !m.has("shardingRule") {
		l.errorf(root, "", "no sharding rules: want rules: (ShardingSphere 5) or shardingRule: (4.x)")
	}
	m.done(ignoredTopKeys...)
}

// ignoredTopKeys are the keys of ShardingSphere 5.x's YamlJDBCConfiguration
// (and 4.x's props) that do not decide where a row goes: settings of the
// Java runtime, and the global rules written as top-level keys.
var ignoredTopKeys = []string{"props", "mode", "databaseName", "schemaName", "authority", "sqlParser",
	"sqlTranslator", "transaction", "globalClock", "logging", "sqlFederation", "traffic"}

// ignoredRuleTags are the rules: entries that do not decide where a row
// goes: the global rules in their 5.x list form, and 5.3's
// !SHARDING_CACHE (a cache of route results).
var ignoredRuleTags = []string{"!AUTHORITY", "!SQL_PARSER", "!TRANSACTION", "!GLOBAL_CLOCK", "!SQL_FEDERATION",
	"!SQL_TRANSLATOR", "!TRAFFIC", "!LOGGING", "!SHARDING_CACHE"}

// single reads a !SINGLE rule (tables: [ds.table, ds.*, *.*, ds.schema.table],
// defaultDataSource:) for the data sources it names; the router accepts it
// only where it agrees with where unsharded tables go (compiler.single).
func (l *loader) single(n *yaml.Node, path string) {
	m := l.mapping(n, path)
	if t := deref(m.get("tables")); t != nil && t.Kind == yaml.SequenceNode {
		for i, c := range t.Content {
			c = deref(c)
			p := fmt.Sprintf("%s[%d]", joinPath(path, "tables"), i)
			if c.Kind != yaml.ScalarNode {
				l.errorf(c, p, "want ds.table, found %s", kindName(c))
				continue
			}
			ds, _, _ := strings.Cut(strings.TrimSpace(c.Value), ".")
			l.cfg.singlePlaces = append(l.cfg.singlePlaces, singlePlace{dataSource: ds, pos: pos(c, p)})
		}
	} else if t != nil && !isNull(t) {
		l.errorf(t, joinPath(path, "tables"), "want a list, found %s", kindName(t))
	}
	if m.has("defaultDataSource") {
		p := joinPath(path, "defaultDataSource")
		l.cfg.singlePlaces = append(l.cfg.singlePlaces, singlePlace{dataSource: m.str("defaultDataSource"), pos: pos(m.kpos["defaultDataSource"], p)})
	}
	m.done()
}

var goDrivers = []string{"pgx", "mysql", "sqlite"}

func (l *loader) dataSources(n *yaml.Node, path string) {
	l.cfg.dataSourcesGiven = true
	m := l.mapping(n, path)
	m.each(func(name string, val *yaml.Node, p string) {
		ds := DataSource{Name: name, Pos: pos(m.kpos[name], p)}
		e := l.mapping(val, p)
		if e.has("driver") || e.has("dsn") {
			ds.Driver, ds.DSN = e.required("driver"), e.required("dsn")
			if ds.Driver != "" && !contains(goDrivers, ds.Driver) {
				l.errorf(e.vals["driver"], joinPath(p, "driver"), "driver %q is not one of %s", ds.Driver, strings.Join(goDrivers, ", "))
			}
			e.done()
		} else {
			// A Java entry (dataSourceClassName, jdbcUrl, pool settings, or
			// a 4.x !!class tag): only its name is used.
			l.javaSources = true
			for k := range e.vals {
				e.used[k] = true
			}
		}
		l.cfg.DataSources = append(l.cfg.DataSources, ds)
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (l *loader) rules(n *yaml.Node, path string) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "want a list of rules (- !SHARDING ...), found %s", kindName(n))
		return
	}
	sharding, readwrite := 0, 0
	for i, r := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch tag := r.Tag; tag {
		case "!SHARDING":
			if sharding++; sharding > 1 {
				l.errorf(r, p, "a second !SHARDING rule; merge them into one")
				continue
			}
			l.sharding(r, p)
		case "!BROADCAST":
			m := l.mapping(r, p)
			l.broadcast(m.get("tables"), joinPath(p, "tables"))
			m.done()
		case "!READWRITE_SPLITTING":
			if readwrite++; readwrite > 1 {
				l.errorf(r, p, "a second !READWRITE_SPLITTING rule; merge them into one")
				continue
			}
			l.readwriteSplitting(r, p)
		case "!SINGLE":
			l.single(r, p)
		default:
			if contains(ignoredRuleTags, tag) {
				continue
			}
			if tag == "" || strings.HasPrefix(tag, "!!") {
				tag = "an untagged entry"
			}
			l.errorf(r, p, "%s is not supported by shardkey (supported: !SHARDING, !BROADCAST, !READWRITE_SPLITTING); ignoring it could put rows elsewhere than the Java fleet does", tag)
		}
	}
}

// sharding reads a 5.x !SHARDING rule.
func (l *loader) sharding(n *yaml.Node, path string) {
	m := l.mapping(n, path)
	c := l.cfg
	c.DefaultShardingColumn = m.str("defaultShardingColumn")
	m.mapping("shardingAlgorithms").each(func(name string, val *yaml.Node, p string) {
		a := l.mapping(val, p)
		c.Algorithms[name] = &Algorithm{Name: name, Type: upper(a.required("type")),
			Props: l.stringMap(a.get("props"), joinPath(p, "props")), Pos: pos(m.kposOf("shardingAlgorithms", name, val), p)}
		a.done()
	})
	m.mapping("keyGenerators").each(func(name string, val *yaml.Node, p string) {
		k := l.mapping(val, p)
		c.KeyGenerators[name] = &KeyGenerator{Name: name, Type: upper(k.required("type")),
			Props: keygen.Props(l.stringMap(k.get("props"), joinPath(p, "props"))), Pos: pos(deref(val), p)}
		k.done()
	})
	m.mapping("tables").each(func(name string, val *yaml.Node, p string) {
		l.addTable(l.shardingTable(name, val, p), m.kposOf("tables", name, val))
	})
	m.mapping("autoTables").each(func(name string, val *yaml.Node, p string) {
		l.addTable(l.autoTable(name, val, p), m.kposOf("autoTables", name, val))
	})
	l.bindings(m.get("bindingTables"), joinPath(path, "bindingTables"))
	l.broadcast(m.get("broadcastTables"), joinPath(path, "broadcastTables"))
	c.DefaultDatabaseStrategy = l.strategy(m.get("defaultDatabaseStrategy"), joinPath(path, "defaultDatabaseStrategy"), m.has("defaultDatabaseStrategy"))
	c.DefaultTableStrategy = l.strategy(m.get("defaultTableStrategy"), joinPath(path, "defaultTableStrategy"), m.has("defaultTableStrategy"))
	c.DefaultKeyGenerate = l.keyGenerate(m.get("defaultKeyGenerateStrategy"), joinPath(path, "defaultKeyGenerateStrategy"), m.has("defaultKeyGenerateStrategy"))
	m.mapping("keyGenerateStrategies").each(l.keyGenerateStrategy)
	m.done("auditors", "defaultAuditStrategy", "shardingCache")
}

// shardingTable reads an entry of tables.
func (l *loader) shardingTable(name string, val *yaml.Node, p string) *Table {
	t := l.mapping(val, p)
	tbl := &Table{Name: name, DataNodesExpr: t.str("actualDataNodes"), Pos: pos(deref(val), p)}
	tbl.DatabaseStrategy = l.strategy(t.get("databaseStrategy"), joinPath(p, "databaseStrategy"), t.has("databaseStrategy"))
	tbl.TableStrategy = l.strategy(t.get("tableStrategy"), joinPath(p, "tableStrategy"), t.has("tableStrategy"))
	tbl.KeyGenerate = l.keyGenerate(t.get("keyGenerateStrategy"), joinPath(p, "keyGenerateStrategy"), t.has("keyGenerateStrategy"))
	t.done("auditStrategy")
	return tbl
}

// autoTable reads an entry of autoTables.
func (l *loader) autoTable(name string, val *yaml.Node, p string) *Table {
	t := l.mapping(val, p)
	tbl := &Table{Name: name, Auto: true, Pos: pos(deref(val), p)}
	if s := t.str("actualDataSources"); s != "" {
		tbl.AutoDataSources = l.expand(s, t.vals["actualDataSources"], joinPath(p, "actualDataSources"))
	}
	tbl.AutoStrategy = l.strategy(t.get("shardingStrategy"), joinPath(p, "shardingStrategy"), t.has("shardingStrategy"))
	if tbl.AutoStrategy == nil {
		l.errorf(deref(val), p, "an auto table needs a shardingStrategy")
	}
	tbl.KeyGenerate = l.keyGenerate(t.get("keyGenerateStrategy"), joinPath(p, "keyGenerateStrategy"), t.has("keyGenerateStrategy"))
	t.done("auditStrategy")
	return tbl
}

// keyGenerateStrategy reads an entry of keyGenerateStrategies, which
// gives a table read before it its key column and generator.
func (l *loader) keyGenerateStrategy(name string, val *yaml.Node, p string) {
	k := l.mapping(val, p)
	typ := strings.ToLower(k.str("keyGenerateType"))
	switch typ {
	case "column", "":
		table, col, gen := k.required("logicTable"), k.required("keyGenerateColumn"), k.required("keyGeneratorName")
		if t := l.cfg.table(table); t != nil {
			if t.KeyGenerate != nil {
				l.errorf(deref(val), p, "table %s already has a keyGenerateStrategy", table)
			}
			t.KeyGenerate = &KeyGenerate{Column: col, Generator: gen, Pos: pos(deref(val), p)}
		} else if table != "" {
			l.errorf(k.vals["logicTable"], joinPath(p, "logicTable"), "table %q is not in tables or autoTables", table)
		}
	default:
		k.get("keyGenerateSequence")
		k.get("keyGeneratorName")
		l.errorf(k.vals["keyGenerateType"], joinPath(p, "keyGenerateType"), "keyGenerateType %q is not supported (only column)", typ)
	}
	k.done()
}

// mapping reads a sub-mapping of m.
func (m *mapReader) mapping(key string) *mapReader {
	return m.l.mapping(m.get(key), joinPath(m.path, key))
}

// kposOf returns the key node of name inside the mapping at key, falling
// back to val.
func (m *mapReader) kposOf(key, name string, val *yaml.Node) *yaml.Node {
	if sub := deref(m.vals[key]); sub != nil && sub.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(sub.Content); i += 2 {
			if sub.Content[i].Value == name {
				return sub.Content[i]
			}
		}
	}
	return deref(val)
}

func (l *loader) addTable(t *Table, at *yaml.Node) {
	if prev := l.cfg.table(t.Name); prev != nil {
		l.errorf(at, t.Pos.Path, "table %s is defined twice (first at line %d)", t.Name, prev.Pos.Line)
		return
	}
	l.cfg.Tables = append(l.cfg.Tables, t)
}

// broadcast reads a list of broadcast tables, keeping their positions.
func (l *loader) broadcast(n *yaml.Node, path string) {
	names := l.stringList(n, path)
	l.cfg.Broadcast = append(l.cfg.Broadcast, names...)
	for range names {
		l.cfg.broadcastPos = append(l.cfg.broadcastPos, pos(deref(n), path))
	}
}

func (l *loader) bindings(n *yaml.Node, path string) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "want a list of table groups, found %s", kindName(n))
		return
	}
	for i, g := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		// ShardingSphere 5.5 names a group "name:t_a, t_b"; the name does
		// not route, so only the tables are kept.
		if c := deref(g); c != nil && c.Kind == yaml.ScalarNode {
			if _, tables, named := strings.Cut(c.Value, ":"); named {
				c2 := *c
				c2.Value = tables
				g = &c2
			}
		}
		if group := l.stringList(g, p); len(group) > 0 {
			l.cfg.BindingGroups = append(l.cfg.BindingGroups, group)
			l.cfg.bindingPos = append(l.cfg.bindingPos, pos(deref(g), p))
		}
	}
}

// strategy reads a sharding strategy; present reports whether the key was
// written at all (a written "none:" overrides a default strategy).
func (l *loader) strategy(n *yaml.Node, path string, present bool) *Strategy {
	if !present {
		return nil
	}
	m := l.mapping(n, path)
	if !m.valid && isNull(deref(n)) {
		l.errorf(deref(n), path, "empty strategy: want standard, complex, hint or none")
		return nil
	}
	var s *Strategy
	set := func(st *Strategy, key string) {
		if s != nil {
			l.errorf(m.kpos[key], joinPath(path, key), "a strategy has one of standard, complex, hint or none, not several")
			return
		}
		s = st
	}
	if m.has("standard") {
		sm := m.mapping("standard")
		st := &Strategy{Type: "standard", Algorithm: sm.required("shardingAlgorithmName"), Pos: sm.valuePos("shardingAlgorithmName")}
		if col := sm.str("shardingColumn"); col != "" {
			st.Columns = []string{col}
		}
		sm.done()
		set(st, "standard")
	}
	if m.has("complex") {
		cm := m.mapping("complex")
		st := &Strategy{Type: "complex", Columns: splitList(cm.required("shardingColumns")), Algorithm: cm.required("shardingAlgorithmName"),
			Pos: cm.valuePos("shardingAlgorithmName")}
		cm.done()
		set(st, "complex")
	}
	if m.has("none") {
		m.get("none")
		set(&Strategy{Type: "none", Pos: m.keyPos("none")}, "none")
	}
	if m.has("hint") {
		set(l.hintStrategy(m), "hint")
	}
	// 4.x forms inside a 5.x file are a common copy-paste mistake.
	if m.has("inline") {
		m.get("inline")
		l.errorf(m.kpos["inline"], joinPath(path, "inline"), "inline: is the 4.x form; in rules: write standard: {shardingColumn, shardingAlgorithmName} with an INLINE algorithm")
	}
	m.done()
	return s
}

// hintStrategy reads hint: {shardingAlgorithmName: x}. It names no column:
// the values come from the caller's Hint (WithHint), never from the SQL.
// The 5.0.0-alpha form hint: {algorithmClassName: C} is read as 4.x's.
func (l *loader) hintStrategy(m *mapReader) *Strategy {
	hm := m.mapping("hint")
	if hm.has("algorithmClassName") && !hm.has("shardingAlgorithmName") {
		return l.hintClassStrategy(hm)
	}
	st := &Strategy{Type: "hint", Algorithm: hm.required("shardingAlgorithmName"), Pos: hm.valuePos("shardingAlgorithmName")}
	hm.done()
	return st
}

// hintClassStrategy reads hint: {algorithmClassName: C} (4.x, 5.0.0-alpha)
// as a CLASS_BASED algorithm with strategy HINT, which resolves C to the Go
// algorithm registered under that name (RegisterAlgorithm).
func (l *loader) hintClassStrategy(hm *mapReader) *Strategy {
	class := hm.required("algorithmClassName")
	at := hm.valuePos("algorithmClassName")
	hm.done()
	// Named by its YAML path, which no two strategies share (as 4.x inline strategies are).
	name := hm.path
	l.cfg.Algorithms[name] = &Algorithm{Name: name, Type: "CLASS_BASED", Pos: at,
		Props: map[string]string{"strategy": "HINT", "algorithmClassName": class}}
	return &Strategy{Type: "hint", Algorithm: name, Pos: at}
}

func (l *loader) keyGenerate(n *yaml.Node, path string, present bool) *KeyGenerate {
	if !present {
		return nil
	}
	m := l.mapping(n, path)
	k := &KeyGenerate{Column: m.required("column"), Generator: m.required("keyGeneratorName"), Pos: pos(deref(n), path)}
	m.done()
	return k
}

// expand expands an inline expression list, reporting errors at n.
func (l *loader) expand(expr string, n *yaml.Node, path string) []string {
	names, err := expandInline(expr)
	if err != nil {
		l.errorf(deref(n), path, "%v", err)
		return nil
	}
	return names
}

// shardingRule4 reads a ShardingSphere 4.x shardingRule.
func (l *loader) shardingRule4(n *yaml.Node, path string) {
	m := l.mapping(n, path)
	c := l.cfg
	m.mapping("tables").each(func(name string, val *yaml.Node, p string) {
		t := l.mapping(val, p)
		tbl := &Table{Name: name, DataNodesExpr: t.str("actualDataNodes"), Pos: pos(deref(val), p)}
		tbl.DatabaseStrategy = l.strategy4(t.get("databaseStrategy"), joinPath(p, "databaseStrategy"), t.has("databaseStrategy"), "tables."+name+".databaseStrategy")
		tbl.TableStrategy = l.strategy4(t.get("tableStrategy"), joinPath(p, "tableStrategy"), t.has("tableStrategy"), "tables."+name+".tableStrategy")
		tbl.KeyGenerate = l.keyGenerator4(t.get("keyGenerator"), joinPath(p, "keyGenerator"), "tables."+name+".keyGenerator")
		t.done("logicIndex")
		l.addTable(tbl, m.kposOf("tables", name, val))
	})
	l.bindings(m.get("bindingTables"), joinPath(path, "bindingTables"))
	l.broadcast(m.get("broadcastTables"), joinPath(path, "broadcastTables"))
	c.DefaultDataSource = m.str("defaultDataSourceName")
	c.defaultDSPos = m.valuePos("defaultDataSourceName")
	c.DefaultDatabaseStrategy = l.strategy4(m.get("defaultDatabaseStrategy"), joinPath(path, "defaultDatabaseStrategy"), m.has("defaultDatabaseStrategy"), "defaultDatabaseStrategy")
	c.DefaultTableStrategy = l.strategy4(m.get("defaultTableStrategy"), joinPath(path, "defaultTableStrategy"), m.has("defaultTableStrategy"), "defaultTableStrategy")
	c.DefaultKeyGenerate = l.keyGenerator4(m.get("defaultKeyGenerator"), joinPath(path, "defaultKeyGenerator"), "defaultKeyGenerator")
	if m.has("masterSlaveRules") {
		m.get("masterSlaveRules")
		l.errorf(m.kpos["masterSlaveRules"], joinPath(path, "masterSlaveRules"), "masterSlaveRules are not supported by shardkey")
	}
	m.done()
}

// strategy4 reads a 4.x strategy; inline strategies become an INLINE
// algorithm named algoName.
func (l *loader) strategy4(n *yaml.Node, path string, present bool, algoName string) *Strategy {
	if !present {
		return nil
	}
	m := l.mapping(n, path)
	var s *Strategy
	if m.has("inline") {
		p := joinPath(path, "inline")
		im := m.mapping("inline")
		col, expr := im.required("shardingColumn"), im.required("algorithmExpression")
		im.done()
		at := deref(m.vals["inline"])
		// 4.x strategies have no names: each gets its YAML path, which no
		// two strategies share.
		l.cfg.Algorithms[algoName] = &Algorithm{Name: algoName, Type: "INLINE", Props: map[string]string{"algorithm-expression": expr}, Pos: pos(at, p)}
		s = &Strategy{Type: "standard", Columns: []string{col}, Algorithm: algoName, Pos: pos(at, p)}
	}
	if m.has("none") {
		m.get("none")
		if s != nil {
			l.errorf(m.kpos["none"], joinPath(path, "none"), "a strategy has one of inline, standard, complex, hint or none, not several")
		}
		s = &Strategy{Type: "none", Pos: m.keyPos("none")}
	}
	if m.has("hint") {
		// 4.x hint: {algorithmClassName: C}: a Go algorithm registered under C.
		if s != nil {
			l.errorf(m.kpos["hint"], joinPath(path, "hint"), "a strategy has one of inline, standard, complex, hint or none, not several")
		}
		s = l.hintClassStrategy(m.mapping("hint"))
	}
	for _, k := range []string{"standard", "complex"} {
		if m.has(k) {
			m.get(k)
			l.errorf(m.kpos[k], joinPath(path, k), "4.x %s strategies name Java classes, which shardkey cannot run; use inline, or a 5.x rule with a built-in algorithm", k)
		}
	}
	m.done()
	if s == nil && !m.has("standard") && !m.has("complex") && !m.has("hint") {
		l.errorf(deref(n), path, "empty strategy: want inline, hint or none")
	}
	return s
}

func (l *loader) keyGenerator4(n *yaml.Node, path, name string) *KeyGenerate {
	if n == nil {
		return nil
	}
	m := l.mapping(n, path)
	typ, col := upper(m.required("type")), m.required("column")
	l.cfg.KeyGenerators[name] = &KeyGenerator{Name: name, Type: typ, Props: keygen.Props(l.stringMap(m.get("props"), joinPath(path, "props"))),
		Pos: pos(deref(n), path)}
	m.done()
	return &KeyGenerate{Column: col, Generator: name, Pos: pos(deref(n), path)}
}

// finish resolves data nodes and data source names once every rule is read.
func (l *loader) finish() {
	c := l.cfg
	known := dataSourceNames(c)
	// Readwrite-splitting groups replace their members: the rules name
	// groups, never a member (a read data source would take writes).
	member, groups := l.resolveReadWrite(known)
	if len(c.ReadWriteGroups) > 0 {
		l.logicalDataSources(member, groups)
		known = dataSourceNames(c)
	}
	p := &placer{l: l, known: known, member: member, fromNodes: !c.dataSourcesGiven}
	for _, t := range c.Tables {
		if !t.Auto && t.DataNodesExpr != "" {
			p.dataNodes(t)
		}
	}
	for _, t := range c.Tables {
		switch {
		case t.Auto:
			p.autoDataSources(t)
		case t.DataNodesExpr == "":
			// Every data source, as known now that the data nodes added theirs.
			if len(c.DataSources) == 0 {
				l.errs = append(l.errs, c.errAt(t.Pos, "no actualDataNodes and no data sources to place table %s in", t.Name))
			}
			for _, ds := range c.DataSources {
				t.DataNodes = append(t.DataNodes, DataNode{ds.Name, t.Name})
			}
		}
	}
	if c.DefaultDataSource != "" && p.isMember(c.DefaultDataSource, c.defaultDSPos) {
		return
	}
	if c.DefaultDataSource != "" && !known[c.DefaultDataSource] {
		l.errs = append(l.errs, c.errAt(c.defaultDSPos, "data source %q is not defined", c.DefaultDataSource))
	}
}

// dataSourceNames is the set of c's data source names.
func dataSourceNames(c *Config) map[string]bool {
	known := map[string]bool{}
	for _, ds := range c.DataSources {
		known[ds.Name] = true
	}
	return known
}

// placer checks the data sources tables name against the rules' data
// sources (known) and readwrite-splitting members, for finish.
type placer struct {
	l         *loader
	known     map[string]bool
	member    map[string]*ReadWriteGroup // a member's name -> its group
	fromNodes bool                       // no dataSources given: the data nodes name them
}

// isMember reports (as an error at at) that ds is a readwrite-splitting
// member, which a table may not name.
func (p *placer) isMember(ds string, at Pos) bool {
	if g, ok := p.member[ds]; ok {
		p.l.errs = append(p.l.errs, p.l.cfg.errAt(at, "%s", memberError(ds, g)))
		return true
	}
	return false
}

// check accepts ds, named at at: a data source of the rules, or a new one
// when the data nodes name them. unknown is the error otherwise. It reports
// false for a readwrite-splitting member.
func (p *placer) check(ds string, at Pos, unknown string, args ...any) bool {
	if p.isMember(ds, at) {
		return false
	}
	if !p.known[ds] {
		if p.fromNodes {
			p.known[ds] = true
			p.l.cfg.DataSources = append(p.l.cfg.DataSources, DataSource{Name: ds})
		} else {
			p.l.errs = append(p.l.errs, p.l.cfg.errAt(at, unknown, args...))
		}
	}
	return true
}

// dataNodes expands t's actualDataNodes into t.DataNodes.
func (p *placer) dataNodes(t *Table) {
	l, c := p.l, p.l.cfg
	names := l.expand(t.DataNodesExpr, nil, joinPath(t.Pos.Path, "actualDataNodes"))
	if names == nil {
		// expand reported at no position; add the table's
		if last, ok := l.errs[len(l.errs)-1].(*ConfigError); ok && last.Line == 0 {
			last.Line, last.Column = t.Pos.Line, t.Pos.Column
		}
		return
	}
	at := Pos{Line: t.Pos.Line, Column: t.Pos.Column, Path: joinPath(t.Pos.Path, "actualDataNodes")}
	seen := map[DataNode]bool{}
	for _, name := range names {
		ds, tbl, ok := strings.Cut(name, ".")
		if !ok || ds == "" || tbl == "" || strings.Contains(tbl, ".") {
			l.errs = append(l.errs, c.errAt(at, "data node %q is not of the form data_source.table", name))
			continue
		}
		dn := DataNode{ds, tbl}
		if seen[dn] {
			l.errs = append(l.errs, c.errAt(at, "data node %s.%s is listed twice", ds, tbl))
			continue
		}
		seen[dn] = true
		if !p.check(ds, at, "data node %s.%s names data source %q, which is not in dataSources", ds, tbl, ds) {
			continue
		}
		t.DataNodes = append(t.DataNodes, dn)
	}
}

// autoDataSources checks the actualDataSources of auto table t.
func (p *placer) autoDataSources(t *Table) {
	at := Pos{Line: t.Pos.Line, Column: t.Pos.Column, Path: joinPath(t.Pos.Path, "actualDataSources")}
	for _, ds := range t.AutoDataSources {
		p.check(ds, at, "data source %q is not in dataSources", ds)
	}
}
