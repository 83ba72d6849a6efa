package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"svc/engine"
	"svc/gateway/ws"
)

func TestPublicChannelsNeedNoCredentialsPrivateOnesDo(t *testing.T) {
	r := newRig(t, 2, ws.Config{})
	c := r.dial(t, "")
	_ = c.Subscribe("orderbook:"+sym, "trades:"+sym, "ticker:"+sym, "klines:"+sym+":1m")
	if m := next(t, c, ofType("ack")); m.Op != "subscribe" || len(m.Channels) != 4 {
		t.Fatalf("%+v", m)
	}
	next(t, c, ofType("snapshot"))
	place(t, r, 1, engine.Sell, 150000, 200)
	place(t, r, 0, engine.Buy, 150000, 200)
	if m := next(t, c, ofType("trades")); m.Channel != "trades:"+sym {
		t.Fatalf("%+v", m)
	}
	for _, ch := range []string{"orders", "balances"} {
		_ = c.Subscribe(ch)
		if m := next(t, c, ofType("error")); m.Code != "UNAUTHORIZED" {
			t.Fatalf("%s: %+v", ch, m)
		}
	}
	var rb restBook
	if code := r.get(t, "", "/v1/trading/market/orderbook?environment=sandbox&symbol="+sym, &rb); code != 200 || rb.Sequence == 0 {
		t.Fatalf("public REST order book: %d %+v", code, rb)
	}
	if code := r.get(t, "", "/v1/trading/market/orderbook?symbol="+sym, nil); code != 503 {
		t.Fatalf("public REST order book of live (not running here): %d", code)
	}
}

func TestPublicUpgradesAreRateLimitedPerAddress(t *testing.T) {
	r := newRig(t, 1, ws.Config{PublicRate: 60, PublicConns: 1000})
	refused := 0
	for i := 0; i < 30 && refused == 0; i++ {
		c, err := ws.Dial(r.url(), "")
		if err != nil {
			refused++
			continue
		}
		defer c.Close()
	}
	if refused == 0 {
		t.Fatal("30 upgrades at once from one address were all accepted with a limit of 60 a minute (burst 10)")
	}
	// with a key the merchant's own limit applies, not the address's
	c := r.dial(t, r.keys[0])
	_ = c.Subscribe("orders")
	next(t, c, ofType("ack"))
}

func TestRevokedKeyClosesThePrivateStream(t *testing.T) {
	r := newRig(t, 2, ws.Config{RecheckEvery: 50 * time.Millisecond, AuthTimeout: 200 * time.Millisecond})
	c := r.dial(t, r.keys[0])
	_ = c.Subscribe("orders", "balances")
	next(t, c, ofType("ack"))
	other := r.dial(t, "")
	_ = other.Auth(r.keys[1])
	next(t, other, ofType("ack"))
	_ = other.Subscribe("orders")
	next(t, other, ofType("ack"))

	r.auth.revoke(r.keys[0])
	_ = c.Conn().SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, err := c.Next()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
			t.Fatalf("want a 1008 close, got %v", err)
		}
		t.Logf("revoked stream closed: %v", err)
		break
	}
	if r.server.Revoked() != 1 {
		t.Fatalf("revoked %d", r.server.Revoked())
	}
	// the other merchant's stream (authenticated by an auth message) stays
	place(t, r, 1, engine.Buy, 140000, 100)
	if m := next(t, other, ofType("order")); m.Channel != "orders" {
		t.Fatalf("%+v", m)
	}
}

// After a burst, every subscriber's book (snapshot + diffs, with snapshots instead of
// diffs whenever it lagged) equals the REST book at the same sequence, at every update
// interval (the default flush, @100ms and @1000ms, mixed on one hub); the slower
// intervals get fewer diffs, and nobody sees a gap.
func TestEverySubscriberEqualsRESTAfterABurst(t *testing.T) {
	const n = 42
	intervals := []struct {
		suffix string
		every  time.Duration // 0: the hub's flush
	}{{"", 0}, {"@100ms", 100 * time.Millisecond}, {"@1000ms", time.Second}}
	r := newRig(t, 4, ws.Config{QueueLen: 64, ConflateAt: 4, PublicRate: 1 << 20})
	base := seed(t)
	type sub struct {
		book  *ws.Book
		iv    int
		mu    sync.Mutex
		seq   uint64
		diffs int
		last  uint64 // last_sequence of the last diff since the last snapshot
		bad   string // a diff that broke the sequence rules, or a message of another channel
		err   error
	}
	subs := make([]*sub, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range subs {
		s := &sub{book: &ws.Book{}, iv: i % len(intervals)}
		subs[i] = s
		c := r.dial(t, "")
		slow := i%4 == 0 // some read slowly: their diffs are conflated into snapshots
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.Watch(sym+intervals[s.iv].suffix, s.book, func(b *ws.Book, m *ws.Message) bool {
				s.mu.Lock()
				s.seq = b.Seq
				switch {
				case m.Channel != "orderbook:"+sym+intervals[s.iv].suffix:
					s.bad = "message of " + m.Channel
				case m.Type == "snapshot":
					s.last = 0
				case m.Type == "diff" && (m.FirstSequence > m.LastSequence || s.last > 0 && m.FirstSequence != s.last+1):
					// diffs that follow each other continue each other's sequences
					s.bad = fmt.Sprintf("diff %d..%d after one ending at %d", m.FirstSequence, m.LastSequence, s.last)
				case m.Type == "diff":
					s.diffs++
					s.last = m.LastSequence
				}
				s.mu.Unlock()
				if slow {
					time.Sleep(2 * time.Millisecond)
				}
				return true
			}, nil)
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	var tw sync.WaitGroup
	for i, acct := range r.accts {
		tw.Add(1)
		go func() {
			defer tw.Done()
			trade(ctx, t, r.eng, acct, rand.New(rand.NewPCG(base, uint64(i))))
		}()
	}
	tw.Wait()
	cancel()
	// The REST book is the hub's, which takes durable batches asynchronously: read it once
	// it has reached the engine's own sequence, so no batch is still on its way.
	d, err := r.eng.Depth(sym, 1)
	if err != nil {
		t.Fatal(err)
	}
	var final restBook
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.get(t, r.keys[1], "/v1/trading/market/orderbook?symbol="+sym+"&depth=500", &final)
		if final.Sequence >= d.Seq {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("REST book at sequence %d, engine at %d", final.Sequence, d.Seq)
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := canon(final.Bids, final.Asks)
	// A slow interval's last diff comes up to its interval after the burst.
	deadline = time.Now().Add(15 * time.Second)
	for i, s := range subs {
		for {
			s.mu.Lock()
			seq, err := s.seq, s.err
			s.mu.Unlock()
			if err != nil {
				var ne net.Error
				t.Fatalf("subscriber %d ended: %v (%v)", i, err, errors.As(err, &ne))
			}
			if seq == final.Sequence {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("subscriber %d at sequence %d, REST at %d", i, seq, final.Sequence)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// the watchers are idle now (nothing trades): read their books
	for i, s := range subs {
		s.mu.Lock()
		got := canon(s.book.Levels(true, 0), s.book.Levels(false, 0))
		s.mu.Unlock()
		if got != want {
			t.Fatalf("subscriber %d (%q) at %d:\n ws   %s\n rest %s", i, intervals[s.iv].suffix, final.Sequence, got, want)
		}
		if s.bad != "" || s.book.Gaps > 0 {
			t.Fatalf("subscriber %d (%q): %s, %d gaps", i, intervals[s.iv].suffix, s.bad, s.book.Gaps)
		}
	}
	// The slow intervals cost a fraction of the frames: at most one diff per interval
	// (plus the first, which may come early in its interval).
	elapsed := time.Since(start)
	diffs := make([]int, len(intervals))
	for _, s := range subs {
		s.mu.Lock()
		diffs[s.iv] = max(diffs[s.iv], s.diffs)
		if every := intervals[s.iv].every; every > 0 && s.diffs > int(elapsed/every)+2 {
			t.Errorf("a %s subscriber got %d diffs in %v", intervals[s.iv].suffix, s.diffs, elapsed)
		}
		s.mu.Unlock()
	}
	if diffs[2] >= diffs[0] || diffs[1] >= diffs[0] {
		t.Errorf("most diffs per subscriber, by interval: %v", diffs)
	}
	t.Logf("%d subscribers equal REST at sequence %d; most diffs per subscriber at each interval %v in %v", n, final.Sequence, diffs, elapsed.Round(time.Millisecond))
}

func TestKlinesChannelHasNoGaps(t *testing.T) {
	var skew atomic.Int64 // how far the hub's clock is ahead of the engine's
	r := newRigClock(t, 2, ws.Config{}, func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	place(t, r, 1, engine.Sell, 150000, 200)
	place(t, r, 0, engine.Buy, 150000, 200) // a trade: 2.00 at 1500.00
	c := r.dial(t, "")
	_ = c.Subscribe("klines:" + sym + ":1m")
	type kline struct {
		OpenTime int64  `json:"open_time"`
		Close    string `json:"close"`
		Volume   string `json:"volume"`
	}
	var first kline
	m := next(t, c, ofType("kline"))
	_ = json.Unmarshal(m.Data, &first)
	if first.Volume != "2.00" {
		t.Fatalf("current candle %s", m.Data)
	}
	skew.Store(int64(2 * time.Minute)) // two minutes later, nothing traded
	m = next(t, c, func(m *ws.Message) bool {
		var k kline
		_ = json.Unmarshal(m.Data, &k)
		return m.Type == "kline" && k.OpenTime > first.OpenTime
	})
	var flat kline
	_ = json.Unmarshal(m.Data, &flat)
	if flat.Volume != "0.00" || flat.Close != "1500.00" || flat.OpenTime != first.OpenTime+2*60_000 {
		t.Fatalf("after a quiet interval: %s (first %+v)", m.Data, first)
	}
}

// TestOrderbookUpdateIntervals: an orderbook channel takes @100ms or @1000ms (and nothing
// else); each interval is its own channel with its own snapshot, and a lone change after
// a quiet spell reaches a slow subscriber within its interval (no later trade needed).
func TestOrderbookUpdateIntervals(t *testing.T) {
	r := newRig(t, 2, ws.Config{})
	c := r.dial(t, "")
	for _, bad := range []string{"@10ms", "@100", "@", "@1s"} {
		_ = c.Subscribe("orderbook:" + sym + bad)
		if m := next(t, c, ofType("error")); m.Code != "INVALID_CHANNEL" {
			t.Fatalf("%s: %+v", bad, m)
		}
	}
	chans := []string{"orderbook:" + sym, "orderbook:" + sym + "@100ms", "orderbook:" + sym + "@1000ms"}
	_ = c.Subscribe(chans...)
	if m := next(t, c, ofType("ack")); len(m.Channels) != 3 {
		t.Fatalf("%+v", m)
	}
	books := map[string]*ws.Book{}
	for range chans {
		m := next(t, c, ofType("snapshot"))
		books[m.Channel] = &ws.Book{}
		_ = books[m.Channel].Apply(m)
	}
	if len(books) != 3 {
		t.Fatalf("snapshots of %v", books)
	}
	time.Sleep(1100 * time.Millisecond) // every feed's interval has passed: quiet
	// The first change after a quiet spell goes out at once; a second one right after
	// waits for the slow feeds' next interval (the hub's timer, as nothing else trades).
	for k, lv := range [][2]string{{"1510.00", "3.00"}, {"1510.00", "5.00"}} {
		placed := time.Now()
		place(t, r, 1, engine.Sell, 151000, 200*engine.Qty(k)+300*engine.Qty(1-k))
		seen := map[string]time.Duration{}
		for len(seen) < 3 {
			m := next(t, c, ofType("diff"))
			if err := books[m.Channel].Apply(m); err != nil {
				t.Fatalf("%s: %v", m.Channel, err)
			}
			if _, ok := seen[m.Channel]; ok {
				t.Fatalf("a second diff of %s for one change: %+v", m.Channel, m)
			}
			seen[m.Channel] = time.Since(placed)
			if got := canon(books[m.Channel].Levels(true, 0), books[m.Channel].Levels(false, 0)); got != canon(nil, [][2]string{lv}) {
				t.Fatalf("%s: book %s", m.Channel, got)
			}
		}
		// within its interval, plus slack for a busy machine (without the hub's timer the
		// second diff would not come at all)
		if d := seen[chans[2]]; d > 2500*time.Millisecond {
			t.Fatalf("the @1000ms diff came %v after the change", d)
		}
		t.Logf("change %d reached the intervals after %v", k+1, seen)
	}
}

// TestQuietSequenceReachesEverySubscriber: events that move the symbol's sequence but
// leave every level as it was (an IOC limit that crosses nothing is accepted and
// cancelled; a market order meets an empty side) still reach every orderbook channel as
// a diff without levels, so a subscriber's book is at the REST book's sequence once the
// market is quiet, not stuck before them until the next trade that moves a level.
func TestQuietSequenceReachesEverySubscriber(t *testing.T) {
	tests := []struct {
		name string
		cmd  engine.Command
	}{
		{"IOC limit that crosses nothing", engine.Command{Type: engine.Limit, TIF: engine.IOC, Side: engine.Buy, Price: 140000, Qty: 100}},
		{"market order on an empty side", engine.Command{Type: engine.Market, Side: engine.Buy, Qty: 100}},
	}
	r := newRig(t, 2, ws.Config{})
	place(t, r, 1, engine.Buy, 149000, 200) // a level that stays: the book is not empty
	c := r.dial(t, "")
	chans := []string{"orderbook:" + sym, "orderbook:" + sym + "@100ms", "orderbook:" + sym + "@1000ms"}
	_ = c.Subscribe(chans...)
	next(t, c, ofType("ack"))
	books := map[string]*ws.Book{}
	for range chans {
		m := next(t, c, ofType("snapshot"))
		books[m.Channel] = &ws.Book{}
		_ = books[m.Channel].Apply(m)
	}
	var rb restBook
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.get(t, r.keys[1], "/v1/trading/market/orderbook?symbol="+sym+"&depth=500", &rb)
			before, levels := rb.Sequence, canon(rb.Bids, rb.Asks)
			cmd := tt.cmd
			cmd.Kind, cmd.Symbol, cmd.Account, cmd.OrderID, cmd.Time = engine.CmdPlace, sym, r.accts[0], engine.OrderID(uuid.New()), time.Now().UnixNano()
			if _, err := r.eng.Submit(&cmd); err != nil {
				t.Fatal(err)
			}
			d, err := r.eng.Depth(sym, 1)
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(5 * time.Second); rb.Sequence < d.Seq; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("REST book at %d, engine at %d", rb.Sequence, d.Seq)
				}
				r.get(t, r.keys[1], "/v1/trading/market/orderbook?symbol="+sym+"&depth=500", &rb)
			}
			if rb.Sequence == before || canon(rb.Bids, rb.Asks) != levels {
				t.Fatalf("the order should move the sequence (%d to %d) and no level (%s to %s)", before, rb.Sequence, levels, canon(rb.Bids, rb.Asks))
			}
			// nothing else trades: each channel's next diff must bring its book to the REST
			// sequence, within its interval plus slack for a busy machine
			for behind := len(chans); behind > 0; {
				m := next(t, c, ofType("diff"))
				b := books[m.Channel]
				was := b.Seq
				if err := b.Apply(m); err != nil {
					t.Fatalf("%s: %v", m.Channel, err)
				}
				if len(m.Bids)+len(m.Asks) > 0 {
					t.Fatalf("%s: a diff with levels when none changed: %+v", m.Channel, m)
				}
				if was < rb.Sequence && b.Seq == rb.Sequence {
					behind--
				}
			}
			for ch, b := range books {
				if got := canon(b.Levels(true, 0), b.Levels(false, 0)); b.Seq != rb.Sequence || got != levels {
					t.Fatalf("%s at %d %s, REST at %d %s", ch, b.Seq, got, rb.Sequence, levels)
				}
			}
		})
	}
	// and once every channel is at the REST sequence, a market where nothing moves sends
	// no diff, empty or not, on any interval (the longest, 1000 ms, plus slack), though
	// another market's orders make the hub flush every symbol
	for _, p := range []engine.Price{100000, 100001} {
		if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdPlace, Symbol: "USDC-NGN", Account: r.accts[1], OrderID: engine.OrderID(uuid.New()),
			Type: engine.Limit, Side: engine.Buy, Price: p, Qty: 100, Time: time.Now().UnixNano()}); err != nil || res.Code != engine.OK {
			t.Fatalf("place on USDC-NGN: %v %v", res.Code, err)
		}
	}
	_ = c.Conn().SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
	defer c.Conn().SetReadDeadline(time.Time{})
	for {
		m, err := c.Next()
		if err != nil {
			break // the deadline: nothing came
		}
		if m.Type == "diff" {
			t.Fatalf("%s: a diff while nothing moved: %+v", m.Channel, m)
		}
	}
}
