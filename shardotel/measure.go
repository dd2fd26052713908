package shardotel

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardkey/shardkey/observe"
)

// measure is one attribute set in the forms the instruments take, built
// once: recording with it allocates nothing.
type measure struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newMeasure(kv ...attribute.KeyValue) *measure {
	o := metric.WithAttributeSet(attribute.NewSet(kv...))
	return &measure{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
}

// The values the hooks report today, whose attribute sets NewObserver
// builds up front; any other value takes the measures cache.
var (
	knownComponents = []string{"sqlhook", "gormplugin"}
	knownOperations = []string{"select", "insert", "update", "delete", "other"}
	knownReasons    = []observe.Reason{
		observe.ReasonUnsupported, observe.ReasonParse, observe.ReasonMissingShardingKey, observe.ReasonNoRoute,
		observe.ReasonUnknownTable, observe.ReasonShardingKeyChange, observe.ReasonHint, observe.ReasonCrossSource,
		observe.ReasonTwoPhaseUnavailable, observe.ReasonOther,
	}
	knownOutcomes = []observe.Outcome{observe.OutcomeCommitted, observe.OutcomeRolledBack, observe.OutcomeInDoubt}
)

const knownFanouts = int(observe.FanoutAll) + 1 // 0 (unknown), one, some, all

// index is s's position in known, or -1.
func index[S ~string](known []S, s S) int {
	for i, k := range known {
		if k == s {
			return i
		}
	}
	return -1
}

// measures holds the attribute sets of the Observer's metrics: the known
// combinations in arrays, any other in a bounded cache.
type measures struct {
	stmts     [2][5][knownFanouts]*measure // component × operation × fanout
	refusals  [2][10]*measure              // component × reason
	twoPhases [2][3]*measure               // component × outcome
	hit       *measure
	miss      *measure

	cache cache[measureKey, *measure]
}

// measureKey names an attribute set outside the arrays; kind tells which.
type measureKey struct {
	kind       uint8
	a, b, c, d string
}

const (
	kindStmt uint8 = iota
	kindStmtErr
	kindRefusal
	kindTwoPhase
)

func newMeasures() *measures {
	m := &measures{}
	for ci, c := range knownComponents {
		for oi, op := range knownOperations {
			for f := range knownFanouts {
				m.stmts[ci][oi][f] = stmtMeasure(c, op, observe.Fanout(f).String(), "")
			}
		}
		for ri, r := range knownReasons {
			m.refusals[ci][ri] = newMeasure(ComponentKey.String(c), RefusalReasonKey.String(string(r)))
		}
		for oi, o := range knownOutcomes {
			m.twoPhases[ci][oi] = newMeasure(ComponentKey.String(c), TwoPhaseOutcomeKey.String(string(o)))
		}
	}
	m.hit = newMeasure(PlanCacheResultKey.String("hit"))
	m.miss = newMeasure(PlanCacheResultKey.String("miss"))
	return m
}

func stmtMeasure(component, op, fanout, errType string) *measure {
	kv := []attribute.KeyValue{ComponentKey.String(component), dbOperationKey.String(op), FanoutKey.String(fanout)}
	if errType != "" {
		kv = append(kv, errorTypeKey.String(errType))
	}
	return newMeasure(kv...)
}

// statement is the attribute set of a statement's metrics; errType, when
// not empty, adds error.type (the duration of a failed statement).
func (m *measures) statement(component, op string, f observe.Fanout, errType string) *measure {
	ci, oi := index(knownComponents, component), index(knownOperations, op)
	if errType == "" && ci >= 0 && oi >= 0 && int(f) < knownFanouts {
		return m.stmts[ci][oi][f]
	}
	kind := kindStmt
	if errType != "" {
		kind = kindStmtErr
	}
	return m.cache.get(measureKey{kind: kind, a: component, b: op, c: f.String(), d: errType}, func(k measureKey) *measure {
		return stmtMeasure(k.a, k.b, k.c, k.d)
	})
}

func (m *measures) refusal(component string, r observe.Reason) *measure {
	ci, ri := index(knownComponents, component), index(knownReasons, r)
	if ci >= 0 && ri >= 0 {
		return m.refusals[ci][ri]
	}
	return m.cache.get(measureKey{kind: kindRefusal, a: component, b: string(r)}, func(k measureKey) *measure {
		return newMeasure(ComponentKey.String(k.a), RefusalReasonKey.String(k.b))
	})
}

func (m *measures) twoPhase(component string, o observe.Outcome) *measure {
	ci, oi := index(knownComponents, component), index(knownOutcomes, o)
	if ci >= 0 && oi >= 0 {
		return m.twoPhases[ci][oi]
	}
	return m.cache.get(measureKey{kind: kindTwoPhase, a: component, b: string(o)}, func(k measureKey) *measure {
		return newMeasure(ComponentKey.String(k.a), TwoPhaseOutcomeKey.String(k.b))
	})
}

// cacheLimit bounds a cache: the values it keys are of low cardinality by
// the hooks' contract, and a reporter breaking it costs an allocation per
// call past the limit rather than unbounded memory.
const cacheLimit = 1024

// cache memoises build for keys of low cardinality, up to cacheLimit
// entries.
type cache[K comparable, V any] struct {
	m sync.Map
	n atomic.Int64
}

func (c *cache[K, V]) get(k K, build func(K) V) V {
	if v, ok := c.m.Load(k); ok {
		return v.(V)
	}
	v := build(k)
	if c.n.Load() >= cacheLimit {
		return v
	}
	if old, loaded := c.m.LoadOrStore(k, v); loaded {
		return old.(V)
	}
	c.n.Add(1)
	return v
}
