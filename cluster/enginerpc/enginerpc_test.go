package enginerpc

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// rig is a real engine over an in-memory journal, served on 127.0.0.1, and a client of it.
type rig struct {
	j      *journal.Memory
	eng    *engine.Engine
	srv    *Server
	addr   string
	client *Client
	served chan error
}

func newRig(t testing.TB) *rig {
	t.Helper()
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rig{j: j, eng: eng}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = lis.Addr().String()
	r.serve(lis)
	r.client, err = Dial(r.addr, Options{SubmitTimeout: 2 * time.Second, ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.client.Close()
		r.stopServer()
		eng.Stop()
	})
	return r
}

func (r *rig) serve(lis net.Listener) {
	r.srv = NewServer(r.eng, ServerOptions{})
	r.served = make(chan error, 1)
	go func() { r.served <- r.srv.Serve(lis) }()
}

func (r *rig) stopServer() {
	if r.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	r.srv.Stop(ctx)
	cancel()
	<-r.served
	r.srv = nil
}

var (
	alice = engine.AccountID{1}
	bob   = engine.AccountID{2}
)

func fund(t testing.TB, ex interface {
	Submit(*engine.Command) (engine.Result, error)
}, acct engine.AccountID, asset engine.Asset, amount string, transfer byte) engine.Result {
	t.Helper()
	amt, err := engine.ParseAmount(asset, amount)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Submit(&engine.Command{Kind: engine.CmdCredit, Account: acct, Asset: asset, Amount: amt,
		TransferID: engine.TransferID{transfer, byte(asset)}, Time: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func place(acct engine.AccountID, id byte, side engine.Side, price engine.Price, qty engine.Qty, clientID string) *engine.Command {
	return &engine.Command{Kind: engine.CmdPlace, Account: acct, Symbol: "USDT-NGN", OrderID: engine.OrderID{id},
		ClientOrderID: clientID, Side: side, Type: engine.Limit, Price: price, Qty: qty, Time: int64(id)}
}

func TestClientMatchesTheEngine(t *testing.T) {
	r := newRig(t)
	c := r.client

	t.Run("credits are applied once", func(t *testing.T) {
		if res := fund(t, c, alice, engine.NGN, "10000000", 1); res.Code != engine.OK {
			t.Fatalf("credit: %v", res.Code)
		}
		if res := fund(t, c, alice, engine.NGN, "10000000", 1); res.Code != engine.AlreadyApplied {
			t.Fatalf("repeated credit: %v, want ALREADY_APPLIED", res.Code)
		}
		fund(t, c, bob, engine.USDT, "1000", 2)
		if got, want := c.Balances(alice), r.eng.Balances(alice); got != want {
			t.Fatalf("balances %v, engine %v", got, want)
		}
	})

	t.Run("pairs are the engine's", func(t *testing.T) {
		got, want := c.Pairs(), r.eng.Pairs()
		if len(got) != len(want) {
			t.Fatalf("%d pairs, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("pair %d: %+v, want %+v", i, got[i], want[i])
			}
		}
		if _, ok := c.Pair("USDT-NGN"); !ok {
			t.Fatal("USDT-NGN missing")
		}
		if _, ok := c.Pair("NOPE"); ok {
			t.Fatal("unknown pair found")
		}
	})

	t.Run("an order is acknowledged durable and read back", func(t *testing.T) {
		res, err := c.Submit(place(alice, 10, engine.Buy, 150000, 500, "a-1"))
		if err != nil || res.Code != engine.OK || res.State != engine.Open {
			t.Fatalf("place: %+v %v", res, err)
		}
		if res.Offset == 0 || res.Offset > r.j.LastOffset() {
			t.Fatalf("acknowledged at offset %d, journal at %d", res.Offset, r.j.LastOffset())
		}
		if c.Offset() != r.eng.Offset() {
			t.Fatalf("offset %d, engine %d", c.Offset(), r.eng.Offset())
		}
		got, ok := c.Order(alice, engine.OrderID{10})
		want, _ := r.eng.Order(alice, engine.OrderID{10})
		if !ok || got != want {
			t.Fatalf("order %+v %v, engine %+v", got, ok, want)
		}
		if got, ok := c.OrderByClientID(alice, "a-1"); !ok || got != want {
			t.Fatalf("by client id %+v %v", got, ok)
		}
		if _, ok := c.Order(bob, engine.OrderID{10}); ok {
			t.Fatal("another account's order is visible")
		}
		if got, want := c.Balances(alice), r.eng.Balances(alice); got != want {
			t.Fatalf("balances %v, engine %v", got, want)
		}
	})

	t.Run("depth is the book's", func(t *testing.T) {
		d, err := c.Depth("USDT-NGN", 5)
		if err != nil || len(d.Bids) != 1 || d.Bids[0].Price != 150000 || d.Bids[0].Qty != 500 || len(d.Asks) != 0 {
			t.Fatalf("depth %+v %v", d, err)
		}
		if _, err := c.Depth("NOPE", 5); err == nil {
			t.Fatal("depth of an unknown symbol: no error")
		}
	})

	t.Run("rejections are codes", func(t *testing.T) {
		res, err := c.Submit(place(alice, 10, engine.Buy, 150000, 500, ""))
		if err != nil || res.Code != engine.RejectDuplicateOrderID {
			t.Fatalf("duplicate: %+v %v", res, err)
		}
		res, err = c.Submit(place(bob, 11, engine.Sell, 150000, 100000000, ""))
		if err != nil || res.Code != engine.RejectInsufficientFunds {
			t.Fatalf("too large: %+v %v", res, err)
		}
	})

	t.Run("a trade and a cancel", func(t *testing.T) {
		res, err := c.Submit(place(bob, 12, engine.Sell, 150000, 200, ""))
		if err != nil || res.Code != engine.OK || res.State != engine.Filled || res.Filled != 200 {
			t.Fatalf("sell: %+v %v", res, err)
		}
		res, err = c.Submit(&engine.Command{Kind: engine.CmdCancel, Account: alice, ClientOrderID: "a-1", Time: 13})
		if err != nil || res.Code != engine.OK || res.State != engine.Cancelled || res.OrderID != (engine.OrderID{10}) {
			t.Fatalf("cancel by client id: %+v %v", res, err)
		}
		res, err = c.Submit(&engine.Command{Kind: engine.CmdCancel, Account: alice, OrderID: engine.OrderID{10}, Time: 14})
		if err != nil || res.Code != engine.RejectNotCancellable {
			t.Fatalf("second cancel: %+v %v", res, err)
		}
		if got, want := c.Balances(bob), r.eng.Balances(bob); got != want {
			t.Fatalf("balances %v, engine %v", got, want)
		}
	})

	if err := c.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
}

func TestFailStopCrossesTheWire(t *testing.T) {
	r := newRig(t)
	fund(t, r.client, alice, engine.NGN, "10000000", 1)
	r.j.Fail(errors.New("disk gone"))
	_, err := r.client.Submit(place(alice, 1, engine.Buy, 150000, 500, ""))
	if !errors.Is(err, engine.ErrUnavailable) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("submit on a fail-stopped engine: %v, want engine.ErrUnavailable", err)
	}
	if err := r.client.Err(); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("Err after fail-stop: %v", err)
	}
}

func TestDeadEngineAnswersPromptlyAndTheClientReconnects(t *testing.T) {
	r := newRig(t)
	fund(t, r.client, alice, engine.NGN, "10000000", 1)
	r.stopServer()

	// Wait until the client has seen the connection go (the server closed it).
	deadline := time.Now().Add(5 * time.Second)
	for r.client.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.client.Err(); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("Err with the engine gone: %v", err)
	}
	start := time.Now()
	_, err := r.client.Submit(place(alice, 1, engine.Buy, 150000, 500, ""))
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("submit with the engine gone: %v, want a match of engine.ErrUnavailable", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("submit took %v with the engine gone, want a prompt answer", d)
	}
	if _, err := r.client.BalancesContext(context.Background(), alice); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("balances with the engine gone: %v", err)
	}
	if got := r.client.Offset(); got == 0 || got != r.eng.Offset() {
		t.Fatalf("offset with the engine gone: %d, want the last one seen (%d)", got, r.eng.Offset())
	}

	// The engine comes back on the same address: the client finds it by itself.
	lis, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Skipf("address %s not free again: %v", r.addr, err)
	}
	r.serve(lis)
	deadline = time.Now().Add(5 * time.Second)
	for {
		res, err := r.client.Submit(place(alice, 2, engine.Buy, 150000, 500, ""))
		if err == nil {
			if res.Code != engine.OK {
				t.Fatalf("after reconnect: %v", res.Code)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect within 5 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := r.client.Err(); err != nil {
		t.Fatalf("Err after reconnect: %v", err)
	}
}

// busyEngine answers every command with one error: the engine's refusals the wire must
// carry as themselves.
type busyEngine struct {
	*engine.Engine
	err error
}

func (b busyEngine) Submit(*engine.Command) (engine.Result, error) { return engine.Result{}, b.err }

func TestEngineErrorsKeepTheirIdentity(t *testing.T) {
	base := newRig(t)
	for _, want := range []error{engine.ErrBusy, engine.ErrUnavailable, engine.ErrStopped} {
		t.Run(want.Error(), func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := NewServer(busyEngine{base.eng, want}, ServerOptions{})
			done := make(chan error, 1)
			go func() { done <- srv.Serve(lis) }()
			defer func() { srv.Stop(context.Background()); <-done }()
			c, err := Dial(lis.Addr().String(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Submit(place(alice, 1, engine.Buy, 150000, 500, ""))
			if err != want {
				t.Fatalf("got %v, want exactly %v", err, want)
			}
		})
	}
}

func TestWireRejectsBadMessages(t *testing.T) {
	cd := codec{}
	good, err := cd.Marshal(&commandMsg{c: *place(alice, 1, engine.Buy, 1, 2, "x")})
	if err != nil {
		t.Fatal(err)
	}
	var back commandMsg
	if err := cd.Unmarshal(good, &back); err != nil || back.c != *place(alice, 1, engine.Buy, 1, 2, "x") {
		t.Fatalf("round trip: %+v %v", back.c, err)
	}
	cases := map[string][]byte{
		"empty":         nil,
		"truncated":     good[:len(good)-1],
		"trailing":      append(append([]byte{}, good...), 0),
		"other version": append([]byte{wireVersion + 1}, good[1:]...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			var m commandMsg
			if err := cd.Unmarshal(data, &m); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	t.Run("a huge count", func(t *testing.T) {
		w := writer{}
		w.u8(wireVersion)
		(&status{}).encode(&w)
		w.uvarint(1 << 40)
		var m pairsReply
		if err := cd.Unmarshal(w.b, &m); err == nil {
			t.Fatal("accepted")
		}
	})
}

func TestClientFindsTheEngineAmongItsAddresses(t *testing.T) {
	r := newRig(t)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close() // a standby's address: nothing listens there until it takes over
	c, err := Dial(deadAddr+"|"+r.addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := c.Submit(place(alice, 1, engine.Sell, 150000, 100, ""))
		if err == nil {
			if res.Code != engine.RejectInsufficientFunds {
				t.Fatalf("%+v", res)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listening address was not found: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := Dial(" | ", Options{}); err == nil {
		t.Fatal("no address accepted")
	}
}

// A call whose deadline passes before the engine answers is ErrTimeout: it says so
// instead of "not reachable", is an ErrOutcomeUnknown (the command may have run) and a
// context.DeadlineExceeded (the gateway answers 503 SERVICE_UNAVAILABLE for it), and
// still matches engine.ErrUnavailable for callers that only know the engine's errors.
// Err is bounded by its context the same way (ErrContext).
func TestTimeoutIsItsOwnError(t *testing.T) {
	r := newRig(t)
	fund(t, r.client, alice, engine.NGN, "10000000", 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, err := r.client.SubmitContext(ctx, place(alice, 1, engine.Buy, 150000, 500, "t-1"))
	for _, want := range []error{ErrTimeout, ErrOutcomeUnknown, context.DeadlineExceeded, engine.ErrUnavailable} {
		if !errors.Is(err, want) {
			t.Fatalf("submit past its deadline: %v, want a match of %v", err, want)
		}
	}
	if errors.Is(err, ErrNotConnected) || !strings.Contains(err.Error(), "did not answer within the deadline") {
		t.Fatalf("submit past its deadline: %v", err)
	}
	c, err := Dial(r.addr, Options{}) // pairs not read yet: ErrContext must ask
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.ErrContext(ctx); !errors.Is(err, ErrTimeout) {
		t.Fatalf("ErrContext past its deadline: %v, want ErrTimeout", err)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
}
