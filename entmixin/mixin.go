package entmixin

import (
	"context"
	"fmt"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"

	"github.com/shardkey/shardkey/keygen"
)

// ID is an ent mixin giving a schema a generated int64 id field. Its zero
// value uses the default generator (Use).
type ID struct {
	mixin.Schema
	// Generator names the generator set with UseNamed; "" is the default
	// one set with Use.
	Generator string
	// JSONString tags the generated field `json:"id,string"`.
	JSONString bool
	// KeyType makes the field's Go type keygen.ID (JSON as a string).
	KeyType bool
}

// Fields returns the id field: int64, immutable, unique, not
// auto-increment.
func (m ID) Fields() []ent.Field {
	incremental := false
	f := field.Int64("id").
		Immutable().
		Unique().
		Annotations(entsql.Annotation{Incremental: &incremental})
	if m.JSONString {
		f = f.StructTag(`json:"id,string"`)
	}
	if m.KeyType {
		f = f.GoType(keygen.ID(0))
	}
	return []ent.Field{f}
}

// Hooks returns the create hook that fills the id.
func (m ID) Hooks() []ent.Hook {
	name := m.Generator
	return []ent.Hook{func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, mu ent.Mutation) (ent.Value, error) {
			if mu.Op().Is(ent.OpCreate) {
				if err := assignID(ctx, name, mu); err != nil {
					return nil, err
				}
			}
			return next.Mutate(ctx, mu)
		})
	}}
}

// The generated mutation of a schema with a user-defined id field.
type (
	int64IDMutation interface {
		ID() (int64, bool)
		SetID(int64)
	}
	keyIDMutation interface {
		ID() (keygen.ID, bool)
		SetID(keygen.ID)
	}
)

func assignID(ctx context.Context, name string, mu ent.Mutation) error {
	switch x := mu.(type) {
	case int64IDMutation:
		if _, set := x.ID(); set {
			return nil
		}
		id, err := next(ctx, name, mu.Type())
		if err != nil {
			return err
		}
		x.SetID(id)
	case keyIDMutation:
		if _, set := x.ID(); set {
			return nil
		}
		id, err := next(ctx, name, mu.Type())
		if err != nil {
			return err
		}
		x.SetID(keygen.ID(id))
	default:
		return fmt.Errorf("entmixin: %s mutation %T has no settable int64 id (is the id field from entmixin.ID?)", mu.Type(), mu)
	}
	return nil
}

func next(ctx context.Context, name, typ string) (int64, error) {
	gen := lookup(name)
	if gen == nil {
		if name == "" {
			return 0, fmt.Errorf("%w: creating %s (call entmixin.Use at start-up)", ErrNoGenerator, typ)
		}
		return 0, fmt.Errorf("%w: creating %s: no generator %q (call entmixin.UseNamed)", ErrNoGenerator, typ, name)
	}
	id, err := gen.NextID(ctx)
	if err != nil {
		return 0, fmt.Errorf("entmixin: id for %s: %w", typ, err)
	}
	return id, nil
}
