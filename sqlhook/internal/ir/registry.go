package ir

import (
	"fmt"
	"sync"
)

// A Compiler compiles one statement's text into its plan, or refuses it
// (ErrParse, ErrUnsupported, a shardconf routing error). It returns
// PassthroughPlan for a statement that reaches no logic table. A Compiler
// is called concurrently and must keep no state between calls.
type Compiler func(s *Schema, query string) (*Plan, error)

var (
	registryMu sync.RWMutex
	registry   = map[Dialect]Compiler{}
)

// Register makes c the compiler of dialect d. The dialect packages
// (sqlhook/postgres, sqlhook/mysql, sqlhook/sqlite) call it from their
// init, as database/sql drivers call sql.Register; registering a dialect
// twice or a nil compiler is a programming error and panics, as
// sql.Register does.
func Register(d Dialect, c Compiler) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if c == nil {
		panic(fmt.Sprintf("sqlhook: Register of %v: nil compiler", d))
	}
	if _, dup := registry[d]; dup {
		panic(fmt.Sprintf("sqlhook: Register called twice for %v", d))
	}
	registry[d] = c
}

// Lookup returns the compiler registered for d, nil when there is none.
func Lookup(d Dialect) Compiler {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return registry[d]
}
