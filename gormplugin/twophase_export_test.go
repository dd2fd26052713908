package gormplugin

import "github.com/shardkey/shardkey/internal/xa"

// Test seams of WithTwoPhaseCommit for the external tests.

// WithTwoPhaseHook sets the coordinator's fault-injection hook.
var WithTwoPhaseHook = withTwoPhaseHook

// TwoPhaseCoordinator is the plugin's coordinator (nil without
// WithTwoPhaseCommit), for tests that run recovery.
func (p *Plugin) TwoPhaseCoordinator() *xa.Coordinator { return p.tp.coord }

// StartMergedDB opens the process-wide *sql.DB that merged reads hand
// their rows through (readplan_rows.go; never closed), so that a goleak
// check taken after it does not count its goroutine.
func StartMergedDB() { mergedDB() }
