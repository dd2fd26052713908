package main

// The generated ent code under ./ent is committed, as ent recommends;
// .ci/run regenerates it and fails on a difference.
//go:generate go tool ent generate --feature sql/upsert ./ent/schema
