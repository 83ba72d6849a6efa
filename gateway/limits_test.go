package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"svc/gateway"
	"svc/gateway/api"
)

// tcpServer runs the test routes on a real loopback socket (the in-memory listener never
// resets a connection, so it cannot show what a client sees when one is).
func tcpServer(t *testing.T) (string, *prometheus.Registry) {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	reg := prometheus.NewRegistry()
	slow := make(chan struct{})
	srv, err := gateway.New(cfg, gateway.Deps{Metrics: reg, Gatherer: reg, Auth: staticAuth{},
		Routes: []gateway.RouteSet{testRoutes{slow: slow}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		close(slow)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return ln.Addr().String(), reg
}

// A client that writes its whole body before reading (most simple clients do) must read
// the 413, not a connection reset.
func TestBodyOverLimitIs413OnEveryClient(t *testing.T) {
	addr, _ := tcpServer(t)
	body := `{"name":"` + strings.Repeat("x", 4<<20) + `"}`

	t.Run("write everything, then read", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		req := "POST /v1/things HTTP/1.1\r\nHost: svc\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body
		if _, err := io.Copy(conn, strings.NewReader(req)); err != nil {
			t.Fatalf("writing the body: %v", err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		defer resp.Body.Close()
		check413(t, resp)
	})
	t.Run("net/http client", func(t *testing.T) {
		c := &http.Client{Timeout: 20 * time.Second}
		resp, err := c.Post("http://"+addr+"/v1/things", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		check413(t, resp)
	})
	t.Run("chunked body", func(t *testing.T) {
		c := &http.Client{Timeout: 20 * time.Second}
		resp, err := c.Post("http://"+addr+"/v1/things", "application/json", io.MultiReader(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		check413(t, resp)
	})
}

func check413(t *testing.T, resp *http.Response) {
	t.Helper()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != 413 || env.Message != api.CodeBodyTooLarge {
		t.Fatalf("%d %+v", resp.StatusCode, env)
	}
}

// Invented HTTP methods are one metrics label, so they cannot grow /metrics.
func TestUnknownMethodsShareOneMetricsLabel(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 30; i++ {
		h.do(t, "FOO"+strconv.Itoa(i), "/v1/things", "", "")
	}
	h.do(t, "GET", "/v1/things", "", "")
	_, _, resp := h.do(t, "GET", "/metrics", "", "")
	m := string(resp.Body())
	if strings.Contains(m, `method="FOO`) {
		t.Fatalf("an invented method became a label:\n%s", m)
	}
	if !strings.Contains(m, `svc_http_requests_total{method="OTHER",route="unmatched",status="405"} 30`) &&
		!strings.Contains(m, `svc_http_requests_total{method="OTHER",route="unmatched",status="404"} 30`) {
		t.Fatalf("invented methods not counted under OTHER:\n%s", grepLines(m, "svc_http_requests_total"))
	}
	if !strings.Contains(m, `method="GET",route="/v1/things"`) {
		t.Fatal("known methods keep their label")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
