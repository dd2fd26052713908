package shardotel_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/shardotel"
)

// The value a statement binds and the statement's SQL, spelled so that
// neither can occur by chance in a name or a figure.
const (
	boundValue   = "987654321"
	statementSQL = "UPDATE t_order SET user_id = 987654321, note = 's3cr3t' WHERE order_id = 42"
)

// statementError quotes its statement, as sqlhook's StatementError does.
type statementError struct {
	SQL string
	Err error
}

func (e *statementError) Error() string { return fmt.Sprintf("%v (statement %q)", e.Err, e.SQL) }
func (e *statementError) Unwrap() error { return e.Err }

// duplicateEntryError quotes a row's value, as MySQL's error 1062 does.
type duplicateEntryError struct{ Entry string }

func (e *duplicateEntryError) Error() string {
	return "Error 1062 (23000): Duplicate entry '" + e.Entry + "' for key 't_order.PRIMARY'"
}

// failures reports, under a caller's span, a refusal quoting a sharding
// value and the statement, and a statement whose target fails with a
// duplicate entry, its statement error quoting the SQL; it returns the
// ended spans and the errors reported.
func failures(t *testing.T, opts ...shardotel.Option) (te *telemetry, refusal observe.Refusal, targetErr, stmtErr error) {
	t.Helper()
	te = newTelemetry(t, nil)
	o := te.observer(t, opts...)
	cctx, caller := te.tp.Tracer("test").Start(ctx, "handler")
	refusal = observe.Refusal{Component: "sqlhook", Reason: observe.ReasonShardingKeyChange, Err: &statementError{SQL: statementSQL,
		Err: fmt.Errorf("%w: table t_order, column user_id, value %s", shardconf.ErrShardingKeyChange, boundValue)}}
	o.Refused(cctx, refusal)
	targetErr = &duplicateEntryError{Entry: boundValue}
	stmtErr = &statementError{SQL: statementSQL, Err: fmt.Errorf("sqlhook: ds_1: %w", targetErr)}
	run(o, cctx, point, targetsOf("ds_1", "t_order_1"), []error{targetErr}, observe.StatementEnd{Err: stmtErr})
	caller.End()
	return te, refusal, targetErr, stmtErr
}

// spanTexts is every text a span carries, each with where it is: name,
// status description, attributes, events' names and attributes.
func spanTexts(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{"name": s.Name(), "status": s.Status().Description}
	for _, kv := range s.Attributes() {
		out["attribute "+string(kv.Key)] = kv.Value.String()
	}
	for i, e := range s.Events() {
		out[fmt.Sprintf("event %d", i)] = e.Name
		for _, kv := range e.Attributes {
			out[fmt.Sprintf("event %d %s attribute %s", i, e.Name, kv.Key)] = kv.Value.String()
		}
	}
	return out
}

// exceptions is each span's exception events' attributes, by span name.
func exceptions(te *telemetry) map[string][]map[string]string {
	out := map[string][]map[string]string{}
	for _, s := range te.spans.Ended() {
		for _, e := range s.Events() {
			if e.Name != "exception" {
				continue
			}
			m := map[string]string{}
			for _, kv := range e.Attributes {
				m[string(kv.Key)] = kv.Value.String()
			}
			out[s.Name()] = append(out[s.Name()], m)
		}
	}
	return out
}

// TestErrorTextsStayOutOfTelemetryByDefault: a refusal quoting a sharding
// value and the statement, a duplicate entry quoting a row's value and a
// statement error quoting the SQL leave no digit of the value nor the SQL
// in spans or metrics: the exception events carry the error's type and a
// value-free message ("refused: {reason}", else error.type), the failed
// spans' status descriptions the same.
func TestErrorTextsStayOutOfTelemetryByDefault(t *testing.T) {
	te, _, _, _ := failures(t)
	ended := te.spans.Ended()
	if len(ended) != 3 {
		t.Fatalf("%d spans, want the caller's, the statement's and the target's", len(ended))
	}
	for _, s := range ended {
		for where, text := range spanTexts(s) {
			if strings.Contains(text, boundValue) || strings.Contains(text, "UPDATE") || strings.Contains(text, "s3cr3t") ||
				strings.Contains(text, "Duplicate") {
				t.Errorf("span %q %s carries a value or the SQL: %s", s.Name(), where, text)
			}
			if (where == "status" || strings.Contains(where, " exception ")) && strings.ContainsFunc(text, unicode.IsDigit) {
				t.Errorf("span %q %s carries digits: %s", s.Name(), where, text)
			}
		}
	}
	dup := "*shardotel_test.duplicateEntryError"
	want := map[string][]map[string]string{
		"handler": {{"exception.type": "*shardotel_test.statementError", "exception.message": "refused: sharding_key_change",
			"shardkey.component": "sqlhook", "shardkey.refusal.reason": "sharding_key_change"}},
		"insert t_order":   {{"exception.type": dup, "exception.message": dup}},
		"insert t_order_1": {{"exception.type": dup, "exception.message": dup}},
	}
	if got := exceptions(te); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("exception events:\n got %v\nwant %v", got, want)
	}
	for _, s := range ended {
		if s.Name() == "handler" {
			continue
		}
		if st := s.Status(); st.Code != codes.Error || st.Description != dup {
			t.Errorf("span %q: status %v, want Error %q", s.Name(), st, dup)
		}
	}
	for name, m := range te.collect(t) {
		var sets []attribute.Set
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		}
		for _, set := range sets {
			if r := attrs(set); strings.ContainsFunc(r, unicode.IsDigit) {
				t.Errorf("metric %s: attributes %s carry digits", name, r)
			}
		}
	}
}

// TestWithErrorTextPutsTheErrorsTextInSpans: with WithErrorText the
// exception messages and status descriptions are the errors' texts, the
// refusal's included; the exception type is still error.type.
func TestWithErrorTextPutsTheErrorsTextInSpans(t *testing.T) {
	te, refusal, targetErr, stmtErr := failures(t, shardotel.WithErrorText())
	dup := "*shardotel_test.duplicateEntryError"
	want := map[string][]map[string]string{
		"handler": {{"exception.type": "*shardotel_test.statementError", "exception.message": refusal.Err.Error(),
			"shardkey.component": "sqlhook", "shardkey.refusal.reason": "sharding_key_change"}},
		"insert t_order":   {{"exception.type": dup, "exception.message": stmtErr.Error()}},
		"insert t_order_1": {{"exception.type": dup, "exception.message": targetErr.Error()}},
	}
	if got := exceptions(te); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("exception events:\n got %v\nwant %v", got, want)
	}
	if !strings.Contains(refusal.Err.Error(), boundValue) || !strings.Contains(stmtErr.Error(), statementSQL) {
		t.Fatalf("the errors do not quote the value and the SQL: %v; %v", refusal.Err, stmtErr)
	}
	for _, s := range te.spans.Ended() {
		var want error
		switch s.Name() {
		case "insert t_order":
			want = stmtErr
		case "insert t_order_1":
			want = targetErr
		default:
			continue
		}
		if st := s.Status(); st.Code != codes.Error || st.Description != want.Error() {
			t.Errorf("span %q: status %v, want Error %q", s.Name(), st, want)
		}
	}
}
