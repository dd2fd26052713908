package ir

import "errors"

// The compilers' refusals; package sqlhook exports them under the same
// names (sqlhook.ErrUnsupported, sqlhook.ErrParse), where they are
// documented.
var (
	ErrUnsupported = errors.New("sqlhook: unsupported statement")
	ErrParse       = errors.New("sqlhook: cannot parse statement")
)
