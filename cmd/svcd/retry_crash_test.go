package main

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"svc/gateway/auth/authtest"
)

// TestOrderRetryAfterCrash: a trader places orders with client order ids (half of them
// through X-Idempotency-Key), svcd is SIGKILLed while placements are in flight, and
// every placement is retried after the restart. An order that was answered 201 before
// the kill must come back as the same order (200, Idempotent-Replayed: true); one whose
// answer was lost is either replayed (it was durable) or placed now (it was not), never
// placed twice. Then a graceful restart (a final snapshot, no journal tail) keeps the
// ids unique too.
func TestOrderRetryAfterCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds svcd, SIGKILLs and restarts it; skipped with -short")
	}
	p, pool := fileJournalSvcd(t, "--snapshot-every", "250ms")
	key := authtest.New(t, pool).SandboxKey
	p.start()
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, path string, body any, headers ...string) (int, http.Header, map[string]any, error) {
		return p.call(client, key, method, path, body, headers...)
	}
	if st, _, _, err := do("POST", "/v1/trading/sandbox/fund", map[string]string{"asset": "NGN", "amount": "100000000"}); err != nil || st != 201 {
		t.Fatalf("fund: %d %v", st, err)
	}

	const n = 200
	type placement struct {
		body    map[string]any
		headers []string
		id      string // from a 201 before the kill, if any
	}
	ps := make([]*placement, n)
	for i := range ps {
		cid := fmt.Sprintf("retry-%03d", i)
		pl := &placement{body: map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": fmt.Sprintf("%d", 1000+i)}}
		if i%2 == 0 {
			pl.body["client_order_id"] = cid
		} else {
			pl.headers = []string{"X-Idempotency-Key", cid}
		}
		ps[i] = pl
	}
	// Place them from 16 connections and SIGKILL svcd once about half have been answered.
	var (
		mu       sync.Mutex
		answered int
		wg       sync.WaitGroup
		next     = make(chan *placement)
		killed   = make(chan struct{})
	)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pl := range next {
				st, _, data, err := do("POST", "/v1/trading/orders", pl.body, pl.headers...)
				if err == nil && st == 201 {
					mu.Lock()
					pl.id, _ = data["id"].(string)
					answered++
					mu.Unlock()
				}
			}
		}()
	}
	go func() {
		for {
			mu.Lock()
			a := answered
			mu.Unlock()
			if a >= n/2 {
				p.kill()
				close(killed)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for _, pl := range ps {
		select {
		case next <- pl:
		case <-killed:
		}
	}
	close(next)
	wg.Wait()
	<-killed
	mu.Lock()
	before := answered
	mu.Unlock()

	p.start()
	var replayed, placedNow int
	ids := map[string]bool{}
	for i, pl := range ps {
		st, h, data, err := do("POST", "/v1/trading/orders", pl.body, pl.headers...)
		if err != nil {
			t.Fatalf("retry %d: %v", i, err)
		}
		id, _ := data["id"].(string)
		switch {
		case st == 200 && h.Get("Idempotent-Replayed") == "true":
			replayed++
		case st == 201 && pl.id == "":
			placedNow++
		default:
			t.Fatalf("retry %d (answered %q before the kill): %d %v", i, pl.id, st, data)
		}
		if pl.id != "" && id != pl.id {
			t.Fatalf("retry %d: order %s, but %s was answered before the kill", i, id, pl.id)
		}
		if ids[id] {
			t.Fatalf("retry %d: order %s answered for two client order ids", i, id)
		}
		ids[id] = true
		pl.id = id
	}
	t.Logf("%d of %d answered before the kill; after the restart %d replayed (%d of them never answered), %d placed by the retry",
		before, n, replayed, replayed-before, placedNow)

	// After a graceful restart (final snapshot) the ids are still taken, and the lookup
	// by client order id finds the same orders.
	p.stop()
	p.start()
	for i, pl := range ps {
		st, h, data, err := do("POST", "/v1/trading/orders", pl.body, pl.headers...)
		if err != nil || st != 200 || h.Get("Idempotent-Replayed") != "true" || data["id"] != pl.id {
			t.Fatalf("retry %d after a graceful restart: %d %v %v", i, st, data, err)
		}
		cid := fmt.Sprintf("retry-%03d", i)
		if st, _, data, err := do("GET", "/v1/trading/orders/by-client-id/"+cid, nil); err != nil || st != 200 || data["id"] != pl.id {
			t.Fatalf("GET by client order id %s: %d %v %v", cid, st, data, err)
		}
	}
	var count int
	if err := pool.QueryRow(t.Context(), `select count(*) from trading_orders where client_order_id like 'retry-%'`).Scan(&count); err != nil || count != n {
		t.Fatalf("%d orders in the history for %d client order ids (%v)", count, n, err)
	}
}
