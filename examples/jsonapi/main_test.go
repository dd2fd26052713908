package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// post creates an order and returns the response decoded generically, as a
// JavaScript client (or any schemaless decoder) would see it.
func post(t *testing.T, srv *httptest.Server, body string) (map[string]any, []byte) {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+"/orders", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /orders: %s: %s", resp.Status, raw)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m, raw
}

func get(t *testing.T, srv *httptest.Server, id string) (*http.Response, []byte) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/orders/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

func TestSnowflakeIDsAreStrings(t *testing.T) {
	a, err := newAPI("SNOWFLAKE", "3")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	defer srv.Close()

	// Near 1.3e18 (between 2^60 and 2^61) a float64 holds only multiples of
	// 2^(60-52) = 256: an id survives a JavaScript Number only when its low
	// 8 bits (here: the sequence's) are zero. Create orders until some lose
	// digits; every one must be a string either way.
	var ids []string
	lossy, lossyID := 0, ""
	for i := 0; i < 10 && (i < 3 || lossy == 0); i++ {
		m, raw := post(t, srv, `{"item":"book","quantity":2}`)
		s, ok := m["id"].(string)
		if !ok {
			t.Fatalf("id is %T, want a JSON string: %s", m["id"], raw)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("id %q: %v", s, err)
		}
		if n < 1<<60 || n >= 1<<61 {
			t.Fatalf("SNOWFLAKE id %d is outside [2^60, 2^61); the test's arithmetic assumes it", n)
		}
		// What a JavaScript Number (a float64) makes of the id.
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		exact := int64(f) == n
		if exact != (n%256 == 0) {
			t.Errorf("float64 round trip of %d: exact=%v, want exact only for multiples of 256", n, exact)
		}
		// (Even an exact double prints with other digits: JavaScript's
		// String(x) gives the shortest decimal that names the double.)
		if !exact && jsNumber(n) == s {
			t.Errorf("jsNumber(%d) = %s", n, jsNumber(n))
		}
		// Decoded as a bare JSON number, the id comes back as the float64.
		var asNumber struct{ ID float64 }
		if err := json.Unmarshal([]byte(strings.Replace(string(raw), `"`+s+`"`, s, 1)), &asNumber); err != nil {
			t.Fatal(err)
		}
		if asNumber.ID != f {
			t.Errorf("id %s decoded as a number: %v, want %v", s, asNumber.ID, f)
		}
		if !exact {
			lossy++
			lossyID = s
			t.Logf("id %s as a float64: %s (off by %d)", s, jsNumber(n), int64(f)-n)
		}
		ids = append(ids, s)
	}
	if lossy == 0 {
		t.Fatalf("no id of %v lost digits as a float64", ids)
	}

	// GET by the string id returns the order, with the same string id.
	for _, id := range ids {
		resp, raw := get(t, srv, id)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /orders/%s: %s: %s", id, resp.Status, raw)
		}
		var o Order
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		if o.ID.String() != id || o.Item != "book" || o.Quantity != 2 {
			t.Errorf("GET /orders/%s = %+v", id, o)
		}
		if !bytes.Contains(raw, []byte(`"id":"`+id+`"`)) {
			t.Errorf("GET body %s lacks the quoted id", raw)
		}
	}
	// The digits a JavaScript client would send back do not name that
	// order: no order at all, or (worse) another one, when the rounded
	// value is the id of the first order of the same millisecond.
	resp, raw := get(t, srv, jsNumber(mustInt(t, lossyID)))
	switch resp.StatusCode {
	case http.StatusNotFound:
	case http.StatusOK:
		var o Order
		if err := json.Unmarshal(raw, &o); err != nil || o.ID.String() == lossyID {
			t.Errorf("GET by the float64-rounded id of %s returned it: %s (%v)", lossyID, raw, err)
		}
		t.Logf("the float64-rounded id of %s names another order: %s", lossyID, raw)
	default:
		t.Errorf("GET by the float64-rounded id: %s: %s", resp.Status, raw)
	}
	if resp, _ := get(t, srv, "not-a-number"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /orders/not-a-number: %s, want 400", resp.Status)
	}

	// keygen.ID reads a quoted string and a bare number alike.
	for _, body := range []string{`{"id":"` + ids[0] + `"}`, `{"id":` + ids[0] + `}`} {
		var o Order
		if err := json.Unmarshal([]byte(body), &o); err != nil || o.ID.String() != ids[0] {
			t.Errorf("Unmarshal(%s) = %s, %v", body, o.ID, err)
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSnowflakeJSIDsAreSafeNumbers(t *testing.T) {
	a, err := newAPI("SNOWFLAKE_JS", "3")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	for i := 0; i < 100; i++ {
		m, raw := post(t, srv, `{"item":"pen","quantity":1}`)
		f, ok := m["id"].(float64)
		if !ok {
			t.Fatalf("id is %T, want a JSON number: %s", m["id"], raw)
		}
		if f > maxSafeInteger || f <= 0 {
			t.Fatalf("id %v is not within 1..2^53-1", f)
		}
		// The float64 holds the id exactly: the decimal text round-trips.
		id := strconv.FormatFloat(f, 'f', -1, 64)
		if !bytes.Contains(raw, []byte(`"id":`+id+`,`)) {
			t.Fatalf("float64 %s differs from the id in %s", id, raw)
		}
		if i == 0 {
			if resp, raw := get(t, srv, id); resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /orders/%s: %s: %s", id, resp.Status, raw)
			}
		}
	}
}

func TestBadRequests(t *testing.T) {
	a, err := newAPI("SNOWFLAKE", "3")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	for _, body := range []string{`{`, `{"item":""}`, `{"item":"x","quantity":1,"extra":1}`} {
		resp, err := srv.Client().Post(srv.URL+"/orders", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s: %s, want 400", body, resp.Status)
		}
	}
	if _, err := newAPI("SNOWFLAKE_JS", "16"); err == nil {
		t.Error("SNOWFLAKE_JS with worker-id 16 was accepted (16..31 are the backups)")
	}
}

func TestDemo(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "SNOWFLAKE_JS"} {
		var out bytes.Buffer
		if err := runDemo(context.Background(), typ, "2", &out); err != nil {
			t.Fatalf("%s: %v\n%s", typ, err, out.String())
		}
		want := "is a JSON string"
		if typ == "SNOWFLAKE_JS" {
			want = "is a JSON number"
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "GET /orders/") {
			t.Errorf("%s demo output:\n%s", typ, out.String())
		}
	}
}

func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- run(ctx, addr, "SNOWFLAKE", "4", &out) }()
	var resp *http.Response
	for i := 0; i < 50; i++ {
		if resp, err = http.Post("http://"+addr+"/orders", "application/json", strings.NewReader(`{"item":"cup","quantity":1}`)); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	var o Order
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || o.ID == keygen.ID(0) {
		t.Errorf("POST: %+v, %v", o, err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
