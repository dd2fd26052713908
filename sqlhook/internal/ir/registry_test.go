package ir

import (
	"strings"
	"testing"
)

// Registration is done once per dialect by a dialect package's init, as
// sql.Register is: a second registration, or a nil compiler, is a
// programming error that panics at init, never a silent replacement of the
// compiler a program was built with.
func TestRegisterPanicsOnSecondRegistrationOrNilCompiler(t *testing.T) {
	const d = Dialect(200) // a value no dialect package registers
	first := func(*Schema, string) (*Plan, error) { return nil, ErrUnsupported }
	second := func(*Schema, string) (*Plan, error) { return PassthroughPlan, nil }

	mustPanic := func(what, want string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil {
				t.Errorf("%s: no panic", what)
				return
			}
			if s, _ := r.(string); !strings.Contains(s, want) {
				t.Errorf("%s: panic %v, want it to say %q", what, r, want)
			}
		}()
		f()
	}
	mustPanic("nil compiler", "nil compiler", func() { Register(d, nil) })
	if Lookup(d) != nil {
		t.Fatal("a refused nil compiler was registered")
	}
	Register(d, first)
	mustPanic("second registration", "twice", func() { Register(d, second) })
	if _, err := Lookup(d)(nil, ""); err != ErrUnsupported {
		t.Error("a second registration replaced the first compiler")
	}
}
