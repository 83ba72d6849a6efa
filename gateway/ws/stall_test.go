package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/cluster/enginerpc"
	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/ws"
	"svc/persistence/journal/journaltest"
)

// With the engine's journal stalled, an order.place is answered by its deadline with
// REST's 503 SERVICE_UNAVAILABLE and a retry_after, saying whether a retry is safe (with
// a client_order_id it is; without one it may place a second order), and the
// connection's later ops run instead of waiting behind it. Once the journal answers again
// the waiting op is answered; the timed-out places are never answered a second time, yet
// the orders they placed late are the session's (cancel-on-disconnect cancels them), and
// retrying with the same client_order_id replays the order instead of placing another.
// Before, the first place was never answered and every later op waited behind it.
func TestOrderPlaceAnsweredWhenTheJournalStalls(t *testing.T) {
	g := &journaltest.Held{}
	gcfg := gateway.DefaultConfig()
	gcfg.AccessLog = false
	gcfg.RequestTimeout = 1500 * time.Millisecond
	e := newEntryGateway(t, ws.Config{}, gcfg, func(j engine.Journal) engine.Journal { g.Inner = j; return g })
	t.Cleanup(g.Release) // before the rig's: the engine stops only once its journal answers
	c, err := ws.Dial(e.url, e.a.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := call(t, c, "session.cancel_on_disconnect", 1, map[string]any{"enabled": true}); r.Type != "result" {
		t.Fatalf("cancel_on_disconnect: %+v", r)
	}

	g.Hold()
	ops := []map[string]any{
		{"op": "order.place", "id": 2, "params": limit("buy", "1", "1401", "stall-1")},
		{"op": "order.place", "id": 3, "params": limit("buy", "1", "1402", "")},
		{"op": "order.place", "id": 4, "params": limit("buy", "1", "1403", "stall-2")},
	}
	start := time.Now()
	for _, op := range ops {
		if err := c.Send(op); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	read := func(want string) (opResult, time.Duration) {
		t.Helper()
		_ = c.Conn().SetReadDeadline(time.Now().Add(gcfg.RequestTimeout + 3*time.Second))
		for {
			_, data, err := c.Conn().ReadMessage()
			if err != nil {
				t.Fatalf("waiting for the answer to op %s: %v (answers so far %v)", want, err, seen)
			}
			var r opResult
			if err := json.Unmarshal(data, &r); err != nil {
				t.Fatal(err)
			}
			if r.Type != "result" && r.Type != "error" {
				continue
			}
			if seen[string(r.ID)]++; string(r.ID) != want {
				t.Fatalf("answer to op %s (%s) while waiting for op %s", r.ID, data, want)
			}
			took := time.Since(start)
			start = time.Now()
			return r, took
		}
	}
	// Each stalled place is answered within its deadline (the handler gives up a tenth of
	// it early; the slack is for a loaded machine under -race), one after the other.
	for _, c := range []struct {
		id, says string
	}{
		{"2", "retrying with the same client_order_id"},
		{"3", "a retry may place a second order"},
	} {
		r, took := read(c.id)
		if r.Type != "error" || r.Status != 503 || r.Code != api.CodeServiceUnavailable || r.RetryAfer <= 0 || !strings.Contains(r.Message, c.says) {
			t.Fatalf("op %s with the journal stalled: %+v", c.id, r)
		}
		if took > gcfg.RequestTimeout+250*time.Millisecond {
			t.Fatalf("op %s answered after %s, past its %s deadline", c.id, took, gcfg.RequestTimeout)
		}
	}

	g.Release()
	if r, _ := read("4"); r.Status != 201 || r.order(t).Status != "OPEN" {
		t.Fatalf("the place behind the stalled ones, after the journal answered: %+v", r)
	}
	if r := call(t, c, "order.cancel", 5, map[string]any{"client_order_id": "stall-2"}); r.Status != 200 {
		t.Fatalf("an op after the stall: %+v", r)
	}
	if seen["2"] != 1 || seen["3"] != 1 {
		t.Fatalf("the timed-out places were answered %d and %d times", seen["2"], seen["3"])
	}

	// The orders the timed-out places made late belong to the session: cancel-on-disconnect
	// cancels them when the connection goes.
	_ = c.Conn().UnderlyingConn().Close()
	if reason := e.waitStatus(t, e.a.SandboxKey, byClientID(t, e, "stall-1"), "CANCELLED"); reason != "DISCONNECT" {
		t.Fatalf("the late order stall-1 was cancelled for %q, want DISCONNECT", reason)
	}
	r := e.gw.Do(t, "POST", "/v1/trading/orders", e.a.SandboxKey, limit("buy", "1", "1401", "stall-1"))
	if r.Status != 200 || r.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("retrying the timed-out place: %s (replayed %q), want the order replayed", r, r.Header["Idempotent-Replayed"])
	}
}

// byClientID is the id of the merchant a's sandbox order with client order id cid.
func byClientID(t *testing.T, e *entry, cid string) string {
	t.Helper()
	var o wsOrder
	e.gw.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/"+cid, e.a.SandboxKey, nil).Decode(t, &o)
	return o.ID
}

// slowJournal delays every append by up to max (none while max is 0): a journal as slow
// as the op's deadline, so the timeout and the engine's completion race.
type slowJournal struct {
	inner engine.Journal
	mu    sync.Mutex
	max   time.Duration
	rnd   *rand.Rand
}

func (s *slowJournal) Append(b []engine.Event) (uint64, error) {
	s.mu.Lock()
	var d time.Duration
	if s.max > 0 {
		d = time.Duration(s.rnd.Int64N(int64(s.max)))
	}
	s.mu.Unlock()
	time.Sleep(d)
	return s.inner.Append(b)
}

func (s *slowJournal) slow(max time.Duration) { s.mu.Lock(); s.max = max; s.mu.Unlock() }

// When the engine completes places just as their deadlines pass, every op is still
// answered exactly once and in order, with its order (201) or a 503, and every order
// placed, answered in time or late, belongs to its session: cancel-on-disconnect cancels
// all of them. Run under -race this is the timer's and the completion's race. The race
// happens only if some ops beat their deadline and some do not, so the test requires both
// answers: a round that got only one kind (a box faster or slower than expected) runs again
// with the journal's delay moved towards the other, within about 20 s in all.
func TestOrderPlaceTimeoutRacesCompletion(t *testing.T) {
	sj := &slowJournal{rnd: rand.New(rand.NewPCG(1, 2))}
	gcfg := gateway.DefaultConfig()
	gcfg.AccessLog = false
	gcfg.RequestTimeout = 110 * time.Millisecond // the engine's wait ends 50 ms before: ~60 ms
	e := newEntryGateway(t, ws.Config{}, gcfg, func(j engine.Journal) engine.Journal { sj.inner = j; return sj })
	delay, start := 120*time.Millisecond, time.Now()
	for round := 1; ; round++ {
		n201, n503 := placeRacingDeadlines(t, e, sj, round, delay)
		if t.Failed() {
			return
		}
		t.Logf("round %d, journal delay up to %s: %d answered 201, %d answered 503", round, delay, n201, n503)
		if n201 > 0 && n503 > 0 {
			return
		}
		if time.Since(start) > 15*time.Second { // a round takes about 5 s
			t.Fatalf("after %d rounds (%s) no round had both answers, so the timeout never raced a completion", round, time.Since(start).Round(time.Millisecond))
		}
		if n503 == 0 { // every place beat its deadline: slow the journal
			delay *= 2
		} else { // none did: speed it up
			delay /= 2
		}
	}
}

// placeRacingDeadlines runs one round of TestOrderPlaceTimeoutRacesCompletion: four
// connections place 30 orders each with the journal delaying appends by up to delay,
// checks every op is answered once, in order, 201 or 503, disconnects and checks every
// order was cancelled for it. It returns how many ops answered 201 and 503.
func placeRacingDeadlines(t *testing.T, e *entry, sj *slowJournal, round int, delay time.Duration) (n201, n503 int) {
	t.Helper()
	const conns, ops = 4, 30
	sj.slow(delay)
	defer sj.slow(0)
	var wg sync.WaitGroup
	statuses := make([]map[int]int, conns)
	for ci := range conns {
		c, err := ws.Dial(e.url, e.a.SandboxKey)
		if err != nil {
			t.Fatal(err)
		}
		if r := call(t, c, "session.cancel_on_disconnect", 0, map[string]any{"enabled": true}); r.Type != "result" {
			t.Fatalf("cancel_on_disconnect: %+v", r)
		}
		statuses[ci] = map[int]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Conn().UnderlyingConn().Close() // no close frame: cancel-on-disconnect
			for i := 1; i <= ops; i++ {
				if err := c.Send(map[string]any{"op": "order.place", "id": i, "params": limit("buy", "1", "1400", fmt.Sprintf("race-%d-%d-%d", round, ci, i))}); err != nil {
					t.Error(err)
					return
				}
			}
			_ = c.Conn().SetReadDeadline(time.Now().Add(30 * time.Second))
			for next := 1; next <= ops; {
				_, data, err := c.Conn().ReadMessage()
				if err != nil {
					t.Errorf("connection %d waiting for op %d: %v", ci, next, err)
					return
				}
				var r opResult
				if err := json.Unmarshal(data, &r); err != nil || r.Type != "result" && r.Type != "error" {
					continue
				}
				if string(r.ID) != strconv.Itoa(next) || (r.Status != 201 && r.Status != 503) {
					t.Errorf("connection %d: answer %s while waiting for op %d", ci, data, next)
					return
				}
				statuses[ci][r.Status]++
				next++
			}
			// Nothing more comes for the ops answered 503 when their orders complete late.
			_ = c.Conn().SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			for {
				_, data, err := c.Conn().ReadMessage()
				if err != nil {
					return
				}
				var r opResult
				if json.Unmarshal(data, &r) == nil && (r.Type == "result" || r.Type == "error") {
					t.Errorf("connection %d: a second answer %s", ci, data)
				}
			}
		}()
	}
	wg.Wait()
	sj.slow(0)
	if t.Failed() {
		return 0, 0
	}
	for ci := range conns {
		n201 += statuses[ci][201]
		n503 += statuses[ci][503]
		for i := 1; i <= ops; i++ {
			id := byClientID(t, e, fmt.Sprintf("race-%d-%d-%d", round, ci, i))
			if reason := e.waitStatus(t, e.a.SandboxKey, id, "CANCELLED"); reason != "DISCONNECT" {
				t.Fatalf("order race-%d-%d-%d was cancelled for %q, want DISCONNECT", round, ci, i, reason)
			}
		}
	}
	return n201, n503
}

// The hub loads its books from a remote engine (cluster/enginerpc, a real server over
// loopback) within its context: with the network to the engine frozen, Seed returns the
// engine's timeout once its context ends instead of waiting the client's ReadTimeout (here
// 20 s), so a start or a stop is not held by an engine that stopped answering.
func TestHubSeedKeepsItsContext(t *testing.T) {
	eng, _ := journaltest.StartEngine(t, nil)
	client, fr := enginerpctest.Remote(t, eng)
	hub := ws.NewHub(ws.HubConfig{Env: api.Sandbox, Exchange: client}) // reads the pairs
	if err := hub.Seed(context.Background(), nil); err != nil {
		t.Fatalf("seed with the engine answering: %v", err)
	}

	fr.Pause()
	defer fr.Resume()
	const within = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	start := time.Now()
	err := hub.Seed(ctx, nil)
	if took := time.Since(start); took > within+250*time.Millisecond {
		t.Fatalf("seed returned after %s, its context ended after %s", took, within)
	}
	if !errors.Is(err, enginerpc.ErrTimeout) {
		t.Fatalf("seed with the network frozen: %v, want enginerpc.ErrTimeout", err)
	}
}
