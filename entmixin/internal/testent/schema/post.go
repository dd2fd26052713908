package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/shardkey/shardkey/entmixin"
)

// Post belongs to a User: its author edge holds the user's generated ID.
type Post struct {
	ent.Schema
}

// Mixin gives Post its generated id.
func (Post) Mixin() []ent.Mixin {
	return []ent.Mixin{entmixin.ID{}}
}

// Fields of Post.
func (Post) Fields() []ent.Field {
	return []ent.Field{
		field.String("title"),
	}
}

// Edges of Post.
func (Post) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("author", User.Type).Ref("posts").Unique(),
	}
}
