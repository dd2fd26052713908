package main

// The generated ent code under ./ent is committed, as ent recommends;
// .ci/run regenerates it and fails on a difference.
//go:generate go run entgo.io/ent/cmd/ent@v0.14.5 generate --feature sql/upsert ./ent/schema
