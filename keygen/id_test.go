package keygen_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

func TestIDEncodings(t *testing.T) {
	for _, v := range []int64{0, 1, 61, 62, 1<<53 + 1, 733_147_632_279_420_928, math.MaxInt64, -1, math.MinInt64} {
		id := keygen.ID(v)
		if back, err := keygen.ParseID(id.String()); err != nil || back != id {
			t.Errorf("ParseID(%q) = %d, %v", id.String(), back, err)
		}
		if back, err := keygen.ParseBase62(id.Base62()); err != nil || back != id {
			t.Errorf("ParseBase62(%q) = %d, %v; want %d", id.Base62(), back, err, v)
		}
		b, _ := json.Marshal(id)
		var back keygen.ID
		if err := json.Unmarshal(b, &back); err != nil || back != id || b[0] != '"' {
			t.Errorf("JSON %s -> %d, %v", b, back, err)
		}
		txt, _ := id.MarshalText()
		if err := back.UnmarshalText(txt); err != nil || back != id {
			t.Errorf("text %s -> %d, %v", txt, back, err)
		}
	}
	if got := keygen.ID(math.MaxInt64).Base62(); got != "AzL8n0Y58m7" {
		t.Errorf("Base62(MaxInt64) = %q", got)
	}
	if a, b := keygen.ID(1<<40).Base62(), keygen.ID(1<<40+1).Base62(); !(a < b) || len(a) != len(b) {
		t.Errorf("base62 order: %q !< %q", a, b)
	}
}

// TestIDJSONPrecision: a 64-bit key as a JSON number
// loses its last digits in JavaScript. As a string it survives.
func TestIDJSONPrecision(t *testing.T) {
	type order struct {
		ID    keygen.ID `json:"id"`
		Price int       `json:"price"`
	}
	b, err := json.Marshal(order{ID: 733147632279420929, Price: 5})
	if err != nil || string(b) != `{"id":"733147632279420929","price":5}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var o order
	for _, in := range []string{`{"id":"733147632279420929"}`, `{"id":733147632279420929}`} {
		if err := json.Unmarshal([]byte(in), &o); err != nil || o.ID != 733147632279420929 {
			t.Fatalf("Unmarshal(%s) = %d, %v", in, o.ID, err)
		}
	}
	o.ID = 5
	if err := json.Unmarshal([]byte(`{"id":null}`), &o); err != nil || o.ID != 5 {
		t.Fatalf("null: %d, %v", o.ID, err)
	}
	for _, bad := range []string{`{"id":"12x"}`, `{"id":1.5}`, `{"id":"99999999999999999999"}`, `{"id":true}`} {
		if err := json.Unmarshal([]byte(bad), &o); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
}

func TestIDSQL(t *testing.T) {
	var id keygen.ID
	forty2 := keygen.ID(42)
	for _, src := range []any{int64(42), []byte("42"), "42", uint64(42), keygen.ID(42), &forty2} {
		id = 0
		if err := id.Scan(src); err != nil || id != 42 {
			t.Errorf("Scan(%T) = %d, %v", src, id, err)
		}
	}
	for _, src := range []any{nil, 4.2, uint64(math.MaxUint64), "x", (*keygen.ID)(nil)} {
		if err := id.Scan(src); !errors.Is(err, keygen.ErrInvalidID) {
			t.Errorf("Scan(%v) err = %v", src, err)
		}
	}
	if v, err := keygen.ID(7).Value(); err != nil || v != int64(7) {
		t.Errorf("Value = %v, %v", v, err)
	}
}

func TestParseBase62Errors(t *testing.T) {
	for _, s := range []string{"", "-", "abc$", "AzL8n0Y58m8", "zzzzzzzzzzzz", "-0"} {
		if _, err := keygen.ParseBase62(s); !errors.Is(err, keygen.ErrInvalidID) {
			t.Errorf("ParseBase62(%q) err = %v", s, err)
		}
	}
}
