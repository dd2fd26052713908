// Package coretest holds the tests of the core packages (keygen, shardconf)
// that need a real database or a third-party driver.
//
// It is a module of its own so that the core's go.mod names no database
// driver, not even for its tests: a program that imports only keygen and
// shardconf gets no driver, ORM or SQL parser in its module graph.
package coretest
