package entmixin

import (
	"errors"
	"sync"

	"github.com/shardkey/shardkey/keygen"
)

// ErrNoGenerator: an entity was created before its generator was set with
// Use or UseNamed.
var ErrNoGenerator = errors.New("entmixin: no ID generator")

var (
	mu         sync.RWMutex
	generators = map[string]keygen.IDGenerator{}
)

// Use sets the default generator, used by ID{} (no Generator name). Call
// it at start-up, before the first create; a nil gen unsets it.
func Use(gen keygen.IDGenerator) { UseNamed("", gen) }

// UseNamed sets the generator that ID{Generator: name} uses; a nil gen
// unsets it.
func UseNamed(name string, gen keygen.IDGenerator) {
	mu.Lock()
	defer mu.Unlock()
	if gen == nil {
		delete(generators, name)
		return
	}
	generators[name] = gen
}

func lookup(name string) keygen.IDGenerator {
	mu.RLock()
	defer mu.RUnlock()
	return generators[name]
}
