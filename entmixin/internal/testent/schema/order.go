package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/shardkey/shardkey/entmixin"
)

// Order is sharded by its id through sqlhook (in the sharded tests): the
// generated key chooses the table. Its id is a keygen.ID, which marshals
// to JSON as a string.
type Order struct {
	ent.Schema
}

// Mixin gives Order its generated id from the "orders" generator.
func (Order) Mixin() []ent.Mixin {
	return []ent.Mixin{entmixin.ID{Generator: "orders", KeyType: true}}
}

// Fields of Order. user_id is a plain column: a foreign key cannot cross
// shards.
func (Order) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("user_id"),
		field.String("status").Default("new"),
		field.Int64("amount").Default(0),
	}
}

// Indexes of Order.
func (Order) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id")}
}
