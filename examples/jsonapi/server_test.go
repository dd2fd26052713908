package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestShutdownWaitsForInFlightRequests: run serves "until ctx is done"
// and gives srv.Shutdown 5 s to drain. Serve reports http.ErrServerClosed
// as soon as Shutdown begins, so run returns only when Shutdown has: a
// request still being handled when ctx ends completes before main exits.
func TestShutdownWaitsForInFlightRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, addr, "SNOWFLAKE", "4", &bytes.Buffer{}) }()

	var conn net.Conn
	for i := 0; i < 100; i++ {
		if conn, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"item":"cup","quantity":1}`
	// Headers and half the body: the handler is now in flight, blocked
	// reading the rest of the body.
	fmt.Fprintf(conn, "POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:10])
	time.Sleep(200 * time.Millisecond)

	cancel()
	returned := false
	select {
	case err := <-done:
		returned = true
		t.Errorf("run returned (%v) while a request was still in flight; main would exit and drop it", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The rest of the body: a graceful shutdown answers the request.
	fmt.Fprint(conn, body[10:])
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request during shutdown: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("in-flight request during shutdown: %s", resp.Status)
	}
	if !returned {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentRequestsGetUniqueKeysThatReadBack: concurrent POSTs and
// GETs on one api under -race: the map is guarded by a.mu, every key is
// unique, and every created order reads back.
func TestConcurrentRequestsGetUniqueKeysThatReadBack(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "SNOWFLAKE_JS"} {
		a, err := newAPI(typ, "5")
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(a)
		var mu sync.Mutex
		seen := map[string]bool{}
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 25; i++ {
					resp, err := srv.Client().Post(srv.URL+"/orders", "application/json", strings.NewReader(`{"item":"x","quantity":1}`))
					if err != nil {
						t.Error(err)
						return
					}
					loc := resp.Header.Get("Location")
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						t.Errorf("POST: %s", resp.Status)
						return
					}
					mu.Lock()
					if seen[loc] {
						t.Errorf("duplicate %s", loc)
					}
					seen[loc] = true
					mu.Unlock()
					r2, err := srv.Client().Get(srv.URL + loc)
					if err != nil {
						t.Error(err)
						return
					}
					r2.Body.Close()
					if r2.StatusCode != http.StatusOK {
						t.Errorf("GET %s: %s", loc, r2.Status)
					}
				}
			}()
		}
		wg.Wait()
		srv.Close()
		if len(seen) != 200 {
			t.Errorf("%s: %d distinct orders, want 200", typ, len(seen))
		}
	}
}

// TestHugeAndOddPathIDsAreBadRequests: ids that overflow int64, or are
// not decimal, are 400; they never crash the handler.
func TestHugeAndOddPathIDsAreBadRequests(t *testing.T) {
	a, err := newAPI("SNOWFLAKE", "5")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	for _, id := range []string{"9223372036854775808", "99999999999999999999999999", "-9223372036854775809", "1e18", "0x10", "1.5"} {
		resp, err := srv.Client().Get(srv.URL + "/orders/" + id)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /orders/%s: %s, want 400", id, resp.Status)
		}
	}
	for _, body := range []string{`{"id":99999999999999999999,"item":"x","quantity":1}`, `{"item":"x","quantity":1e100}`, `[1,2]`, `null`} {
		resp, err := srv.Client().Post(srv.URL+"/orders", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s: %s, want 400", body, resp.Status)
		}
	}
}
