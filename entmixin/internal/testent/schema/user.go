package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/shardkey/shardkey/entmixin"
)

// User is a plain (unsharded) table with a generated ID, marshalled to JSON
// as a string.
type User struct {
	ent.Schema
}

// Mixin gives User its generated id.
func (User) Mixin() []ent.Mixin {
	return []ent.Mixin{entmixin.ID{JSONString: true}}
}

// Fields of User.
func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("name"),
		field.String("email").Unique(),
	}
}

// Edges of User.
func (User) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("posts", Post.Type),
	}
}
