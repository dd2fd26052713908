package shardconf

import (
	"fmt"
	"strings"
)

// CLASS_BASED is ShardingSphere's algorithm that instantiates a Java class
// by name (props strategy: STANDARD|COMPLEX|HINT, algorithmClassName).
// shardkey resolves the class name to the Go algorithm registered under it
// (RegisterAlgorithm, RegisterComplexAlgorithm), so a Java team's rule file
// loads unchanged once the Go side has registered its classes. The Go
// factory gets every prop, strategy and algorithmClassName included, as
// the Java class's init does.

const (
	propClassStrategy = "strategy"
	propClassName     = "algorithmClassName"
)

func init() {
	registerStandard("CLASS_BASED", newClassBasedStandard)
	registerComplex("CLASS_BASED", newClassBasedComplex)
}

// newClassBasedStandard serves a standard: strategy (strategy: STANDARD)
// and a hint: strategy, whose spec has no column (strategy: HINT).
func newClassBasedStandard(spec algoSpec) (shardFunc, error) {
	want := "STANDARD"
	if spec.column == "" {
		want = "HINT"
	}
	e, err := classBasedEntry(spec.props, want)
	if err != nil {
		return nil, err
	}
	return newCustomStandard(e, spec)
}

// newClassBasedComplex serves a complex: strategy (strategy: COMPLEX).
func newClassBasedComplex(spec algoSpec) (multiFunc, error) {
	e, err := classBasedEntry(spec.props, "COMPLEX")
	if err != nil {
		return nil, err
	}
	return newCustomComplex(e, spec)
}

// classBasedEntry checks the props of a CLASS_BASED algorithm used where a
// strategy of kind want is needed, and finds its Go algorithm.
func classBasedEntry(props map[string]string, want string) (*customEntry, error) {
	raw, ok := props[propClassStrategy]
	if !ok || strings.TrimSpace(raw) == "" {
		return nil, &propError{key: propClassStrategy, reason: "required for CLASS_BASED: STANDARD, COMPLEX or HINT"}
	}
	got := upper(raw)
	if got != "STANDARD" && got != "COMPLEX" && got != "HINT" {
		return nil, &propError{key: propClassStrategy, value: raw, reason: "want STANDARD, COMPLEX or HINT"}
	}
	if got != want {
		return nil, &propError{key: propClassStrategy, value: raw, reason: fmt.Sprintf(
			"the algorithm serves a %s: strategy here; set strategy: %s", strings.ToLower(want), want)}
	}
	class := strings.TrimSpace(props[propClassName])
	if class == "" {
		return nil, &propError{key: propClassName, value: props[propClassName], reason: "required for CLASS_BASED: the name a Go algorithm is registered under"}
	}
	e, ok := lookupCustom(class)
	register := "RegisterAlgorithm"
	if want == "COMPLEX" {
		register = "RegisterComplexAlgorithm"
	}
	if !ok {
		return nil, fmt.Errorf("prop %q = %q: %w: shardkey runs Go, not Java classes; register a Go implementation "+
			"under this name before NewRouter, with shardconf.%s(%q, factory) (registered: %s)",
			propClassName, class, ErrAlgorithmNotRegistered, register, class, listOrNone(customNames()))
	}
	if (want == "COMPLEX") != (e.cpx != nil) {
		other := "RegisterComplexAlgorithm (a complex algorithm)"
		if e.std != nil {
			other = "RegisterAlgorithm (a standard algorithm)"
		}
		return nil, fmt.Errorf("prop %q = %q: registered with %s, but strategy %s needs one registered with %s",
			propClassName, class, other, want, register)
	}
	return e, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
