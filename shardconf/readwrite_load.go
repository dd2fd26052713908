package shardconf

import (
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Reading ShardingSphere's !READWRITE_SPLITTING rule. Accepted shapes:
//
//	5.4+:  dataSourceGroups: {name: {writeDataSourceName, readDataSourceNames,
//	       transactionalReadQueryStrategy, loadBalancerName}}
//	5.0-5.3: dataSources: {name: {writeDataSourceName, readDataSourceNames, loadBalancerName}}
//	         or {name: {staticStrategy: {writeDataSourceName, readDataSourceNames}, loadBalancerName}}
//	5.1:     or {name: {type: Static, props: {write-data-source-name, read-data-source-names}, loadBalancerName}}
//
// with loadBalancers: {name: {type: ROUND_ROBIN|RANDOM|WEIGHT, props}}.
// Database discovery (dynamicStrategy, autoAwareDataSourceName) is refused:
// shardkey cannot learn which database is the primary.

// rwBalancer is a loadBalancers entry as read.
type rwBalancer struct {
	lb    LoadBalancer
	props map[string]string
	node  *yaml.Node // the props mapping, for errors
	used  bool
}

// rwGroupRead is a group as read, before data source names are resolved.
type rwGroupRead struct {
	g        *ReadWriteGroup
	balancer string
	lbPos    Pos
	writePos Pos
	readsPos Pos
}

var transactionalReadQueryStrategies = []string{"PRIMARY", "FIXED", "DYNAMIC"}

// readwriteSplitting reads a !READWRITE_SPLITTING rule.
func (l *loader) readwriteSplitting(n *yaml.Node, path string) {
	m := l.mapping(n, path)
	balancers := map[string]*rwBalancer{}
	m.mapping("loadBalancers").each(func(name string, val *yaml.Node, p string) {
		b := l.mapping(val, p)
		typ := upper(b.required("type"))
		switch typ {
		case BalanceRoundRobin, BalanceRandom, BalanceWeight:
		case "":
			if isNull(deref(val)) {
				l.errorf(m.kposOf("loadBalancers", name, val), p, "load balancer %s needs a type (ROUND_ROBIN, RANDOM or WEIGHT)", name)
			}
		default:
			l.errorf(b.vals["type"], joinPath(p, "type"), "load balancer type %q is not supported (supported: ROUND_ROBIN, RANDOM, WEIGHT)", typ)
		}
		props := l.stringMap(b.get("props"), joinPath(p, "props"))
		balancers[name] = &rwBalancer{lb: LoadBalancer{Name: name, Type: typ, Pos: pos(m.kposOf("loadBalancers", name, val), p)},
			props: props, node: deref(b.vals["props"])}
		b.done()
	})
	key := "dataSourceGroups"
	if m.has("dataSources") {
		if m.has("dataSourceGroups") {
			m.get("dataSources")
			l.errorf(m.kpos["dataSources"], joinPath(path, "dataSources"), "give dataSourceGroups (5.4+) or dataSources (older), not both")
		} else {
			key = "dataSources"
		}
	}
	var groups []*rwGroupRead
	m.mapping(key).each(func(name string, val *yaml.Node, p string) {
		if gr := l.readwriteGroup(name, val, p, m.kposOf(key, name, val)); gr != nil {
			groups = append(groups, gr)
		}
	})
	if !m.has(key) {
		l.errorf(deref(n), path, "a !READWRITE_SPLITTING rule needs dataSourceGroups")
	}
	for _, gr := range groups {
		l.bindBalancer(gr, balancers)
		l.cfg.ReadWriteGroups = append(l.cfg.ReadWriteGroups, gr.g)
		l.rwPos[gr.g] = *gr
	}
	l.checkWeightKeys(balancers)
	m.done()
}

// readwriteGroup reads one group.
func (l *loader) readwriteGroup(name string, val *yaml.Node, p string, at *yaml.Node) *rwGroupRead {
	names := l.expand(name, at, p)
	if len(names) != 1 {
		if names != nil {
			l.errorf(at, p, "group name %q names %d groups; write one entry per group", name, len(names))
		}
		return nil
	}
	g := &ReadWriteGroup{Name: names[0], Pos: pos(at, p)}
	gr := &rwGroupRead{g: g}
	e := l.mapping(val, p)
	src, wKey, rKey, ok := l.rwStaticSource(e, p)
	if !ok {
		return nil
	}
	if src != e {
		defer src.done()
	}
	if isNull(deref(src.node)) {
		l.errorf(at, p, "group %s needs writeDataSourceName and readDataSourceNames", g.Name)
		return nil
	}
	for _, k := range []string{"dynamicStrategy", "autoAwareDataSourceName"} {
		if e.has(k) {
			e.get(k)
			l.errorf(e.kpos[k], joinPath(p, k), "%s (database discovery) is not supported: shardkey cannot learn which database is the primary; name writeDataSourceName and readDataSourceNames", k)
		}
	}
	l.rwMembers(gr, src, wKey, rKey)
	if s := e.str("transactionalReadQueryStrategy"); s != "" {
		g.TransactionalReadQueryStrategy = upper(s)
		if !contains(transactionalReadQueryStrategies, g.TransactionalReadQueryStrategy) {
			l.errorf(e.vals["transactionalReadQueryStrategy"], joinPath(p, "transactionalReadQueryStrategy"),
				"%q is not one of PRIMARY, FIXED, DYNAMIC", s)
		}
	}
	gr.balancer = e.str("loadBalancerName")
	gr.lbPos = e.valuePos("loadBalancerName")
	e.done()
	return gr
}

// rwStaticSource is the mapping of group e that names its write and read
// data sources, and their keys there: e itself, its staticStrategy, or
// the props of type: Static (ShardingSphere 5.1's form). ok is
// false, with e done and the error reported, for type: Dynamic or another
// type. The caller marks a src other than e done.
func (l *loader) rwStaticSource(e *mapReader, p string) (src *mapReader, wKey, rKey string, ok bool) {
	src = e
	wKey, rKey = "writeDataSourceName", "readDataSourceNames"
	switch {
	case e.has("staticStrategy"):
		src = e.mapping("staticStrategy")
	case e.has("type"):
		// 5.1: {type: Static, props: {write-data-source-name, read-data-source-names}}.
		switch t := e.str("type"); upper(t) {
		case "STATIC":
			src = e.mapping("props")
			wKey, rKey = "write-data-source-name", "read-data-source-names"
		case "DYNAMIC":
			e.get("props")
			l.errorf(e.vals["type"], joinPath(p, "type"), "type Dynamic (database discovery) is not supported: shardkey cannot learn which database is the primary; use type: Static")
			e.done()
			return nil, "", "", false
		default:
			l.errorf(e.vals["type"], joinPath(p, "type"), "%q is not Static or Dynamic", t)
			e.get("props")
			e.done()
			return nil, "", "", false
		}
	}
	return src, wKey, rKey, true
}

// rwMembers reads group gr's write data source (key wKey of src) and read
// data sources (rKey).
func (l *loader) rwMembers(gr *rwGroupRead, src *mapReader, wKey, rKey string) {
	g := gr.g
	if w := src.required(wKey); w != "" {
		gr.writePos = src.valuePos(wKey)
		ws := l.expand(w, src.vals[wKey], gr.writePos.Path)
		if len(ws) > 1 {
			l.errorf(src.vals[wKey], gr.writePos.Path, "%q names %d data sources; a group has one write data source", w, len(ws))
		} else if len(ws) == 1 {
			g.Write = DataSource{Name: ws[0]}
		}
	}
	gr.readsPos = src.valuePos(rKey)
	reads := src.get(rKey)
	exprs := []string{}
	if n := deref(reads); n != nil && n.Kind == yaml.ScalarNode && !isNull(n) {
		// One inline expression whose top-level commas separate names
		// ("r_${['a','b']}, r_c"): expanded whole, not split at every comma.
		exprs = append(exprs, n.Value)
	} else {
		exprs = l.stringList(reads, gr.readsPos.Path)
	}
	for _, r := range exprs {
		for _, x := range l.expand(r, reads, gr.readsPos.Path) {
			g.Reads = append(g.Reads, DataSource{Name: x})
		}
	}
	if len(g.Reads) == 0 && src.valid {
		l.errorf(deref(src.node), joinPath(src.path, rKey), "required: the read data sources of group %s", g.Name)
	}
}

// bindBalancer gives a group its load balancer and checks WEIGHT's props
// against the group's read data sources.
func (l *loader) bindBalancer(gr *rwGroupRead, balancers map[string]*rwBalancer) {
	g := gr.g
	if gr.balancer == "" {
		g.LoadBalancer = LoadBalancer{Type: BalanceRoundRobin}
		return
	}
	b, ok := balancers[gr.balancer]
	if !ok {
		l.errs = append(l.errs, l.cfg.errAt(gr.lbPos, "load balancer %q is not in loadBalancers", gr.balancer))
		return
	}
	b.used = true
	g.LoadBalancer = b.lb
	at := b.lb.Pos
	if b.node != nil {
		at = pos(b.node, joinPath(b.lb.Pos.Path, "props"))
	}
	if b.lb.Type != BalanceWeight {
		for k := range b.props {
			// 5.3 put the transaction strategy in the balancer's props;
			// shardkey reads in a transaction from the write data source.
			if k != "transaction-read-query-strategy" {
				l.errs = append(l.errs, l.cfg.errAt(at, "unknown prop %q: a %s load balancer takes no props", k, b.lb.Type))
			}
		}
		return
	}
	g.LoadBalancer.Weights = map[string]float64{}
	total := 0.0
	for _, rd := range g.Reads {
		s, ok := b.props[rd.Name]
		if !ok {
			l.errs = append(l.errs, l.cfg.errAt(at, "WEIGHT load balancer %s has no weight for read data source %s of group %s", b.lb.Name, rd.Name, g.Name))
			continue
		}
		w, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			l.errs = append(l.errs, l.cfg.errAt(at, "weight %q of read data source %s: want a number >= 0", s, rd.Name))
			continue
		}
		g.LoadBalancer.Weights[rd.Name] = w
		total += w
	}
	if total == 0 && len(g.LoadBalancer.Weights) == len(g.Reads) {
		l.errs = append(l.errs, l.cfg.errAt(at, "every read data source of group %s has weight 0: reads would go nowhere", g.Name))
	}
}

// checkWeightKeys reports a WEIGHT prop that names no read data source of
// the groups using the balancer (a misspelt name would silently get no
// reads).
func (l *loader) checkWeightKeys(balancers map[string]*rwBalancer) {
	for _, b := range balancers {
		if b.lb.Type != BalanceWeight || !b.used {
			continue
		}
		reads := map[string]bool{}
		for _, g := range l.cfg.ReadWriteGroups {
			if g.LoadBalancer.Name == b.lb.Name {
				for _, rd := range g.Reads {
					reads[rd.Name] = true
				}
			}
		}
		at := b.lb.Pos
		if b.node != nil {
			at = pos(b.node, joinPath(b.lb.Pos.Path, "props"))
		}
		for k := range b.props {
			if k != "transaction-read-query-strategy" && !reads[k] {
				l.errs = append(l.errs, l.cfg.errAt(at, "weight for %q, which is not a read data source of a group using load balancer %s", k, b.lb.Name))
			}
		}
	}
}

// resolveReadWrite checks the groups against the physical data sources
// (known, from dataSources) and returns, by name, the member names and
// the groups, for finish. It reports a group name that is also a physical
// data source, a member that is not defined, and a data source in two
// groups, or twice in one.
func (l *loader) resolveReadWrite(known map[string]bool) (member map[string]*ReadWriteGroup, group map[string]*ReadWriteGroup) {
	c := l.cfg
	member, group = map[string]*ReadWriteGroup{}, map[string]*ReadWriteGroup{}
	physical := map[string]DataSource{}
	for _, ds := range c.DataSources {
		physical[ds.Name] = ds
	}
	for _, g := range c.ReadWriteGroups {
		if prev, dup := group[g.Name]; dup {
			l.errs = append(l.errs, c.errAt(g.Pos, "group %s is defined twice (first at line %d)", g.Name, prev.Pos.Line))
			continue
		}
		group[g.Name] = g
		if known[g.Name] {
			l.errs = append(l.errs, c.errAt(g.Pos, "group %s has the name of a data source in dataSources; give the group its own name", g.Name))
		}
	}
	resolve := func(g *ReadWriteGroup, ds *DataSource, role string, at Pos, seenInGroup map[string]bool) {
		if ds.Name == "" {
			return
		}
		if prev, ok := member[ds.Name]; ok && (prev != g || seenInGroup[ds.Name]) {
			l.errs = append(l.errs, c.errAt(at, "data source %s is in group %s already; a data source belongs to one group, once", ds.Name, prev.Name))
			return
		}
		seenInGroup[ds.Name] = true
		member[ds.Name] = g
		if _, isGroup := group[ds.Name]; isGroup {
			l.errs = append(l.errs, c.errAt(at, "%s data source %s of group %s is a group; name a database", role, ds.Name, g.Name))
			return
		}
		if c.dataSourcesGiven {
			if !known[ds.Name] {
				l.errs = append(l.errs, c.errAt(at, "%s data source %s of group %s is not in dataSources", role, ds.Name, g.Name))
				return
			}
			*ds = physical[ds.Name]
		}
	}
	for _, g := range c.ReadWriteGroups {
		if group[g.Name] != g {
			continue
		}
		gr := l.groupPositions(g)
		seen := map[string]bool{}
		resolve(g, &g.Write, "write", gr.writePos, seen)
		for i := range g.Reads {
			if g.Reads[i].Name == g.Write.Name {
				// Reading the write database is allowed (ShardingSphere
				// allows it); its entry is filled in like the others.
				delete(seen, g.Write.Name)
			}
			resolve(g, &g.Reads[i], "read", gr.readsPos, seen)
		}
	}
	return member, group
}

// groupPositions returns the positions of a group's write and read
// names: the group's own position when they were not recorded.
func (l *loader) groupPositions(g *ReadWriteGroup) rwGroupRead {
	if gr, ok := l.rwPos[g]; ok {
		return gr
	}
	return rwGroupRead{writePos: g.Pos, readsPos: g.Pos}
}

// logicalDataSources rebuilds c.DataSources as the rules see them: each
// group once, at its first member's place (or at the end), with its write
// data source's Driver and DSN; members left out; other entries kept.
func (l *loader) logicalDataSources(member, group map[string]*ReadWriteGroup) {
	c := l.cfg
	var out []DataSource
	placed := map[*ReadWriteGroup]bool{}
	place := func(g *ReadWriteGroup) {
		if !placed[g] {
			placed[g] = true
			out = append(out, DataSource{Name: g.Name, Driver: g.Write.Driver, DSN: g.Write.DSN, Pos: g.Pos})
		}
	}
	for _, ds := range c.DataSources {
		if g, ok := member[ds.Name]; ok {
			place(g)
			continue
		}
		out = append(out, ds)
	}
	for _, g := range c.ReadWriteGroups {
		if group[g.Name] == g {
			place(g)
		}
	}
	c.DataSources = out
}

// memberError is the error for a sharding rule that names a member of a
// group instead of the group.
func memberError(ds string, g *ReadWriteGroup) string {
	role := "a read"
	if g.Write.Name == ds {
		role = "the write"
	}
	return "data source " + strconv.Quote(ds) + " is " + role + " data source of readwrite-splitting group " + g.Name +
		": name the group, so that writes go to its write data source and reads to its replicas"
}
