package zklease

import "testing"

// TestLeafReadsNodeNamesAsItsCodeDoes: the ids a node name gives, read as
// Leaf's Java does (split at '-', Integer.parseInt), are the ids the
// shared-id check compares: a sign, short forms, other scripts' digits.
func TestLeafReadsNodeNamesAsItsCodeDoes(t *testing.T) {
	for name, want := range map[string]int64{
		"10.0.0.1:80-0000000005": 5,
		"10.0.0.1:80-5":          5,
		"10.0.0.1:80-+5":         5,
		"10.0.0.1:80-5-x":        5,  // Leaf reads the second piece
		"10.0.0.1:80-5-":         5,  // trailing empty pieces dropped
		"10.0.0.1:80-٥":          5,  // ARABIC-INDIC DIGIT FIVE
		"10.0.0.1:80-१२":         12, // DEVANAGARI
		"10.0.0.1:80-５":          5,  // FULLWIDTH DIGIT FIVE
		"10.0.0.1:80-2147483647": 2147483647,
		"10.0.0.1:80-2147483648": -1, // beyond Java's int
		"10.0.0.1:80-":           -1,
		"10.0.0.1:80":            -1,
		"10.0.0.1:80--5":         -1, // the second piece is empty
		"10.0.0.1:80-+":          -1,
		"10.0.0.1:80-5x":         -1,
		"10.0.0.1:80-𝟓":          -1, // MATHEMATICAL BOLD DIGIT FIVE: two UTF-16 units for Java
	} {
		_, id, ok := leafID(name)
		if (want >= 0) != ok || (ok && id != want) {
			t.Errorf("leafID(%q) = %d, %v; want %d", name, id, ok, want)
		}
	}
	for _, name := range []string{"10.0.0.1:80-5", "10.0.0.1:80-+0000000005", "10.0.0.1:80-00000000005", "10.0.0.1:80-٠٠٠٠٠٠٠٠٠٥", "a-b-0000000005"} {
		if _, _, err := parseNode(name); err == nil {
			t.Errorf("parseNode(%q) accepted a name ZooKeeper never gives", name)
		}
	}
	if a, id, err := parseNode("10.0.0.1:80-0000000005"); err != nil || a != "10.0.0.1:80" || id != 5 {
		t.Errorf("parseNode of ZooKeeper's name: %q %d %v", a, id, err)
	}
}
