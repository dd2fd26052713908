// Package testent is the ent client generated for entmixin's own tests:
// schemas that use the mixin the way users do (a plain generated id, a
// keygen.ID key type, edges, upserts). The generated code is committed, as
// ent recommends; .ci/run regenerates it and fails on a difference.
package testent

//go:generate go run entgo.io/ent/cmd/ent@v0.14.5 generate --feature sql/upsert --target . ./schema
