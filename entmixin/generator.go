package entmixin

import (
	"context"
	"errors"
	"fmt"
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
// it at start-up, before the first create; a nil gen unsets it. See
// UseNamed for the generators it takes.
func Use(gen keygen.Generator) { UseNamed("", gen) }

// UseNamed sets the generator that ID{Generator: name} uses; a nil gen
// unsets it. The id is an int64, so gen is a keygen.IDGenerator or a custom
// generator whose NextKey returns int64 keys (read through
// keygen.AsIDGenerator: a key of another type fails its create with
// keygen.ErrNotInt64). A UUID generator fails every create likewise.
func UseNamed(name string, gen keygen.Generator) {
	mu.Lock()
	defer mu.Unlock()
	if gen == nil {
		delete(generators, name)
		return
	}
	ids, ok := keygen.AsIDGenerator(gen)
	if !ok {
		ids = notInt64{gen}
	}
	generators[name] = ids
}

func lookup(name string) keygen.IDGenerator {
	mu.RLock()
	defer mu.RUnlock()
	return generators[name]
}

// notInt64 stands for a generator whose keys are not int64 (UUID): each
// create fails, naming it, rather than Use failing silently.
type notInt64 struct{ keygen.Generator }

func (n notInt64) NextID(context.Context) (int64, error) {
	return 0, fmt.Errorf("%w: the %s generator's keys are strings", keygen.ErrNotInt64, n.Type())
}

func (n notInt64) NextIDs(ctx context.Context, _ []int64) error {
	_, err := n.NextID(ctx)
	return err
}
