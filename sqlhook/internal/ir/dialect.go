package ir

import (
	"maps"
	"slices"
)

// Dialect is the SQL dialect statements are parsed and written in.
type Dialect uint8

const (
	// DialectAuto detects the dialect from the wrapped driver (see
	// sqlhook.DialectAuto).
	DialectAuto Dialect = iota
	PostgreSQL
	MySQL
	SQLite
)

func (d Dialect) String() string {
	switch d {
	case PostgreSQL:
		return "postgresql"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	}
	return "auto"
}

func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
