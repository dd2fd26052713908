package sqlhook

// WithTwoPhaseHook exposes withTwoPhaseHook to the package's external
// tests: it sets the two-phase commit coordinator's fault-injection hook
// (xa.Config.Hook).
var WithTwoPhaseHook = withTwoPhaseHook
