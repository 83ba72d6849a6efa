package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParseOrdersFlags(t *testing.T) {
	c, err := parseOrdersFlags([]string{"--url", "http://127.0.0.1:9", "--keys", " a, b ,,c", "--conns", "8",
		"--duration", "2s", "--mix", "place-cancel", "--rate", "500", "--symbols", "USDT-NGN,USD-NGN"}, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Keys, "|") != "a|b|c" || c.Conns != 8 || c.Duration != 2*time.Second ||
		c.Mix != mixPlaceCancel || c.Rate != 500 || len(c.Symbols) != 2 || !c.CompareBare {
		t.Fatalf("parsed %+v", c)
	}
	bad := [][]string{
		{"--keys", "k", "--conns", "0"},
		{"--keys", "k", "--mix", "cancel"},
		{"--keys", "k", "--duration", "0s"},
		{"--keys", "k", "--rate", "-1"},
		{"--keys", "k", "--url", "https://x"},
		{"--keys", "k", "--symbols", ","},
		{"--keys", "k", "extra"},
		{}, // no keys at all
		{"--seed-merchants", "2", "--database-url", ""},
	}
	for _, args := range bad {
		if _, err := parseOrdersFlags(args, false, io.Discard); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
	// bare needs neither keys nor a URL.
	if _, err := parseOrdersFlags([]string{"--conns", "2"}, true, io.Discard); err != nil {
		t.Errorf("bare: %v", err)
	}
}

func TestKeysFromText(t *testing.T) {
	out := "noise\n=== demo sandbox merchant ===\nAPI key:  svc_sk_test_abc   (sandbox, 100000 requests/minute)\ntry: curl -H 'X-Api-Key: svc_sk_test_abc'\nAPI key: svc_sk_test_def\n"
	got := keysFromText(strings.NewReader(out))
	if strings.Join(got, ",") != "svc_sk_test_abc,svc_sk_test_def" {
		t.Fatalf("keys %v", got)
	}
}

func TestSummary(t *testing.T) {
	h := newHist()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 10) // 10µs .. 10ms
	}
	s := summarize(h)
	near := func(got, want int64) bool { return got >= want-want/100-1 && got <= want+want/100+1 }
	if s.Count != 1000 || !near(s.P50, 5000) || !near(s.P99, 9900) || !near(s.P999, 9990) || !near(s.Max, 10000) {
		t.Fatalf("summary %+v", s)
	}
	if z := summarize(newHist()); z != (latencySummary{}) {
		t.Fatalf("empty histogram: %+v", z)
	}
	if fmtMicros(850) != "850µs" || fmtMicros(1250) != "1.25ms" {
		t.Fatalf("fmtMicros: %s %s", fmtMicros(850), fmtMicros(1250))
	}
}

func TestRunResultFigures(t *testing.T) {
	r := &runResult{Window: 2 * time.Second, Requests: 1000, All: newHist(), Place: newHist(), Cancel: newHist(),
		Status: map[int]int64{201: 990, 429: 7, 503: 1}, Errors: map[string]int64{"timeout": 2}}
	if r.RPS() != 500 || r.Failures() != 10 {
		t.Fatalf("rps %v failures %d", r.RPS(), r.Failures())
	}
	if got := statusLine(r.Status, r.Errors); got != `201 x 990, 429 x 7, 503 x 1, error "timeout" x 2` {
		t.Fatalf("status line %q", got)
	}
	var buf bytes.Buffer
	printResult(&buf, r)
	if !strings.Contains(buf.String(), "!!! 10 of 1000") {
		t.Fatalf("non-2xx not reported loudly:\n%s", buf.String())
	}
	a := &runResult{Window: time.Second, Requests: 100}
	b := &runResult{Window: time.Second, Requests: 300}
	c := &runResult{Window: time.Second, Requests: 200}
	if medianRun([]*runResult{a, b, c}) != c {
		t.Fatal("median run")
	}
	if got := medianRatio([]*runResult{a, b}, []*runResult{b, b}); got < 0.33 || got > 0.34 {
		t.Fatalf("median ratio %v", got)
	}
}

func TestOrderBody(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var buy, sell, cross int
	for i := 0; i < 2000; i++ {
		var o struct{ Symbol, Side, Type, Quantity, Price string }
		b := orderBody(nil, "USDT-NGN", rnd, 150000, 20)
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if o.Symbol != "USDT-NGN" || o.Type != "limit" || len(o.Price) != len("1500.00") || !strings.HasSuffix(o.Quantity, ".00") {
			t.Fatalf("order %s", b)
		}
		switch {
		case o.Side == "buy":
			buy++
			if o.Price > "1500.00" {
				cross++
			}
		case o.Side == "sell":
			sell++
		}
	}
	if buy < 800 || sell < 800 || cross == 0 {
		t.Fatalf("buy %d sell %d crossing buys %d", buy, sell, cross)
	}
	if string(appendFixed2(nil, 150005)) != "1500.05" || string(appendFixed2(nil, 100)) != "1.00" {
		t.Fatal("appendFixed2")
	}
}

func TestBareRoundTrip(t *testing.T) {
	bare, err := startBare()
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	cfg, err := parseOrdersFlags([]string{"--conns", "2", "--duration", "200ms", "--warmup", "50ms", "--mix", "place-cancel"}, true, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res := runLoad(t.Context(), "bare", newWorkload(cfg, bare.Addr(), []string{"k"}), 0)
	if res.Requests == 0 || res.Failures() != 0 || res.Cancel.TotalCount() == 0 {
		t.Fatalf("requests %d failures %d cancels %d", res.Requests, res.Failures(), res.Cancel.TotalCount())
	}
	open := runLoad(t.Context(), "bare", newWorkload(cfg, bare.Addr(), []string{"k"}), 200)
	if open.Requests < 20 || open.Requests > 60 {
		t.Fatalf("open loop at 200/s for 200ms: %d requests", open.Requests)
	}
}

// TestOrdersHelpRedactsDatabaseURL: -h shows the --database-url default without its password.
func TestOrdersHelpRedactsDatabaseURL(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://bench:s3cretpw@127.0.0.1:5432/svc")
	var stderr strings.Builder
	if _, err := parseOrdersFlags([]string{"-h"}, false, &stderr); err == nil {
		t.Fatal("-h: no error")
	}
	if out := stderr.String(); strings.Contains(out, "s3cretpw") || !strings.Contains(out, "postgres://bench:REDACTED@127.0.0.1:5432/svc") {
		t.Fatalf("help output does not redact the password:\n%s", out)
	}
}
