package api_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

func TestCtxCarriesTheDeadlineAndEndsWithTheRequest(t *testing.T) {
	var rc fasthttp.RequestCtx
	api.Begin(&rc, 300*time.Millisecond)
	api.SetValue(&rc, "svc.test", "value")
	c := api.Ctx(&rc)
	if c != api.Ctx(&rc) {
		t.Fatal("one context per request")
	}
	dl, ok := c.Deadline()
	if !ok || time.Until(dl) > 300*time.Millisecond || !dl.Equal(api.Deadline(&rc)) {
		t.Fatalf("deadline %v %v", dl, ok)
	}
	if c.Value("svc.test") != "value" {
		t.Fatal("values set with SetValue are visible while the handler runs")
	}
	select {
	case <-c.Done():
		t.Fatal("cancelled early")
	default:
	}
	api.End(&rc)
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("not cancelled when the request ended")
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatal(c.Err())
	}
	if c.Value("svc.test") != nil {
		t.Fatal("the recycled request's values leak after the handler returned")
	}
	if _, ok := api.Ctx(&rc).Deadline(); ok {
		t.Fatal("after End, Ctx is the plain context")
	}
}

func TestCtxExpiresAtTheDeadline(t *testing.T) {
	var rc fasthttp.RequestCtx
	api.Begin(&rc, 50*time.Millisecond)
	defer api.End(&rc)
	c := api.Ctx(&rc)
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("deadline did not fire")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatal(c.Err())
	}
}

// A goroutine started under the request's context (pgx dials a connection with it) reads
// its values while the handler writes the request's user values (run with -race).
func TestCtxValueIsSafeWhileTheHandlerRuns(t *testing.T) {
	var rc fasthttp.RequestCtx
	api.Begin(&rc, time.Second)
	c := api.Ctx(&rc)
	api.SetValue(&rc, "svc.scope", 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			_ = c.Value("svc.scope")
			_ = c.Value("other")
		}
	}()
	for i := 0; i < 1000; i++ {
		rc.SetUserValue(fmt.Sprint("k", i%20), i)
		api.SetValue(&rc, "svc.scope", i)
	}
	<-done
	api.End(&rc)
}

// Concurrent requests each get their own context (run with -race).
func TestCtxPerRequestUnderConcurrency(t *testing.T) {
	done := make(chan struct{})
	for i := 0; i < 50; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			var rc fasthttp.RequestCtx
			api.Begin(&rc, time.Second)
			c := api.Ctx(&rc)
			go func() { <-c.Done() }() // a watcher, as pgx runs one
			api.End(&rc)
			<-c.Done()
		}()
	}
	for i := 0; i < 50; i++ {
		<-done
	}
}

func TestUnavailableMapsDependencyFailuresTo503(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code string
	}{
		{"deadline", fmt.Errorf("list: %w", context.DeadlineExceeded), api.CodeServiceUnavailable},
		{"cancelled", fmt.Errorf("begin transaction: %w", context.Canceled), api.CodeServiceUnavailable},
		{"connect", fmt.Errorf("x: %w", &pgconn.ConnectError{}), api.CodeDatabaseUnavailable},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, api.CodeDatabaseUnavailable},
		{"connection exception", fmt.Errorf("q: %w", &pgconn.PgError{Code: "08006"}), api.CodeDatabaseUnavailable},
		{"statement timeout", &pgconn.PgError{Code: "57014"}, api.CodeDatabaseUnavailable},
		{"unique violation is not", &pgconn.PgError{Code: "23505"}, api.CodeInternal},
		{"plain error is not", errors.New("boom"), api.CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ae := api.From(c.err)
			if ae.Code != c.code {
				t.Fatalf("%v -> %s, want %s", c.err, ae.Code, c.code)
			}
			var rc fasthttp.RequestCtx
			api.Fail(&rc, c.err)
			retry := string(rc.Response.Header.Peek("Retry-After"))
			if (ae.Status() == 503) != (retry != "") {
				t.Fatalf("status %d, Retry-After %q", rc.Response.StatusCode(), retry)
			}
		})
	}
}

// BenchmarkBeginEnd is what every request pays for its deadline when no store is reached
// (the order path); BenchmarkBeginCtxEnd adds making and cancelling the context.
func BenchmarkBeginEnd(b *testing.B) {
	var rc fasthttp.RequestCtx
	t := api.NewTimeout(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		t.Begin(&rc)
		api.End(&rc)
	}
}

func BenchmarkBeginCtxEnd(b *testing.B) {
	var rc fasthttp.RequestCtx
	t := api.NewTimeout(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		t.Begin(&rc)
		_ = api.Ctx(&rc)
		api.End(&rc)
	}
}
