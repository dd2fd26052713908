// Package keygentest provides a fake keygen.Clock for tests and examples:
// time moves only when the test moves it or when a generator sleeps, so
// tests of clock steps and sequence exhaustion never block, and keys are
// reproducible.
//
//	clock := keygentest.NewClock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
//	g, _ := keygen.NewID("SNOWFLAKE", props, keygen.WithClock(clock))
//	clock.Add(-5 * time.Millisecond) // a clock step back; the generator waits through clock.Sleep
package keygentest
