// Command jsonapi is a small JSON API (POST /orders, GET /orders/{id}) that
// shows why shardkey's keys travel as JSON strings.
//
// A SNOWFLAKE key is a 64-bit integer around 1.3e18, far above 2^53, the
// largest integer a JavaScript Number (an IEEE 754 double) holds exactly:
// JSON.parse('{"id":1331112646153367553}').id is 1331112646153367600, so a
// browser that reads the key as a number and sends it back asks for another
// order. keygen.ID therefore marshals as a string ("id":"1331112646153367553")
// and parses from a string or a bare number.
//
// With -type SNOWFLAKE_JS the keys come from the 53-bit JavaScript-safe layout
// (32-bit seconds, 5-bit worker, 16-bit sequence): every key is at most
// 2^53-1, so this mode writes the id as a plain JSON number.
//
//	go run ./examples/jsonapi -demo                       # create and read two orders in-process, then exit
//	go run ./examples/jsonapi -demo -type SNOWFLAKE_JS
//	go run ./examples/jsonapi -addr 127.0.0.1:8080        # serve until interrupted
//	curl -s -XPOST localhost:8080/orders -d '{"item":"book","quantity":2}'
//	curl -s localhost:8080/orders/1331112646153367553
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	typ := flag.String("type", "SNOWFLAKE", "key generator: SNOWFLAKE (ids as JSON strings) or SNOWFLAKE_JS (53-bit ids as JSON numbers)")
	worker := flag.String("worker-id", "1", "this process's worker id")
	demo := flag.Bool("demo", false, "create and read two orders in-process, print them, and exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *demo {
		err = runDemo(ctx, *typ, *worker, os.Stdout)
	} else {
		err = run(ctx, *addr, *typ, *worker, os.Stdout)
	}
	if err != nil {
		slog.Error("example failed", "err", err)
		stop()
		os.Exit(1)
	}
}

// run serves the API on addr until ctx is done.
func run(ctx context.Context, addr, typ, worker string, stdout io.Writer) error {
	api, err := newAPI(typ, worker)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(stdout, "serving %s keys on http://%s (POST /orders, GET /orders/{id})\n", api.typ, ln.Addr())
	// Serve returns as soon as Shutdown begins; the requests in flight are
	// done when Shutdown returns, so run waits for that.
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// runDemo creates two orders and reads one back through the handler, and
// prints what a JavaScript client would make of the id.
func runDemo(ctx context.Context, typ, worker string, stdout io.Writer) error {
	api, err := newAPI(typ, worker)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	var first string
	for i, body := range []string{`{"item":"book","quantity":2}`, `{"item":"pen","quantity":10}`} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader(body))
		if err != nil {
			return err
		}
		created, err := roundTrip(req, http.StatusCreated)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "POST /orders %s -> %s\n", body, created)
		var generic struct{ ID any }
		if err := json.Unmarshal(created, &generic); err != nil {
			return err
		}
		switch id := generic.ID.(type) {
		case string: // SNOWFLAKE: the exact digits, as a string
			n, _ := strconv.ParseInt(id, 10, 64)
			fmt.Fprintf(stdout, "  id %s is a JSON string; as a JavaScript Number it would read %s\n", id, jsNumber(n))
			if i == 0 {
				first = id
			}
		case float64: // SNOWFLAKE_JS: at most 2^53-1, so a number is exact
			fmt.Fprintf(stdout, "  id %s is a JSON number <= 2^53-1 (%d): JavaScript reads it exactly\n", jsNumber(int64(id)), maxSafeInteger)
			if i == 0 {
				first = strconv.FormatInt(int64(id), 10)
			}
		default:
			return fmt.Errorf("unexpected id %#v", generic.ID)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/orders/"+first, nil)
	if err != nil {
		return err
	}
	got, err := roundTrip(req, http.StatusOK)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "GET /orders/%s -> %s\n", first, got)
	return nil
}

func roundTrip(req *http.Request, want int) ([]byte, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, b)
	}
	return []byte(strings.TrimSpace(string(b))), nil
}

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, 2^53-1.
const maxSafeInteger = 1<<53 - 1

// jsNumber is how JavaScript prints n after reading it as a Number (a
// float64): the shortest digits that identify the double, then zeros.
func jsNumber(n int64) string { return strconv.FormatFloat(float64(n), 'f', -1, 64) }

// Order is what the API stores and returns. keygen.ID writes the id as a
// JSON string and reads it from a string or a number.
type Order struct {
	ID       keygen.ID `json:"id"`
	Item     string    `json:"item"`
	Quantity int       `json:"quantity"`
}

// jsOrder is Order for SNOWFLAKE_JS keys, whose ids fit a JavaScript
// Number and may be plain JSON numbers.
type jsOrder struct {
	ID       int64  `json:"id"`
	Item     string `json:"item"`
	Quantity int    `json:"quantity"`
}

// api is the HTTP handler with an in-memory store.
type api struct {
	*http.ServeMux
	typ string
	gen keygen.IDGenerator

	mu     sync.Mutex
	orders map[keygen.ID]Order
}

func newAPI(typ, worker string) (*api, error) {
	gen, err := keygen.NewID(typ, keygen.Props{"worker-id": worker})
	if err != nil {
		return nil, err
	}
	a := &api{ServeMux: http.NewServeMux(), typ: strings.ToUpper(typ), gen: gen, orders: map[keygen.ID]Order{}}
	a.HandleFunc("POST /orders", a.create)
	a.HandleFunc("GET /orders/{id}", a.get)
	return a, nil
}

func (a *api) create(w http.ResponseWriter, r *http.Request) {
	var o Order
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	if o.Item == "" || o.Quantity <= 0 {
		httpError(w, http.StatusBadRequest, errors.New("item and a positive quantity are required"))
		return
	}
	id, err := a.gen.NextID(r.Context())
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err)
		return
	}
	o.ID = keygen.ID(id)
	a.mu.Lock()
	a.orders[o.ID] = o
	a.mu.Unlock()
	w.Header().Set("Location", "/orders/"+o.ID.String())
	a.write(w, http.StatusCreated, o)
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	id, err := keygen.ParseID(r.PathValue("id"))
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	a.mu.Lock()
	o, ok := a.orders[id]
	a.mu.Unlock()
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Errorf("no order %s", id))
		return
	}
	a.write(w, http.StatusOK, o)
}

func (a *api) write(w http.ResponseWriter, status int, o Order) {
	var v any = o
	if a.typ == "SNOWFLAKE_JS" {
		v = jsOrder{ID: o.ID.Int64(), Item: o.Item, Quantity: o.Quantity}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}

func httpError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()}) //nolint:errcheck // the client went away
}
