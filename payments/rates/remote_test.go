package rates

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/cluster/enginerpc"
	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
	"svc/payments"
	"svc/payments/money"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres/pgtest"
)

var _ depthReader = (*enginerpc.Client)(nil)

// TestAQuoteFromASilentRemoteEngineIsRefusedPromptly: a real engine served over
// cluster/enginerpc behind a proxy the test freezes (the client's own timeouts are 20 s).
// While it answers, USDT's book (depth in the band) prices from the book and USDC's empty
// book from the treasury. Frozen, neither is priced as if the book were empty: each quote
// is refused with ErrRateUnavailable (503 RATE_UNAVAILABLE, Retry-After) within
// DepthTimeout, and a whole GET /payments/rates (Quote: both assets, both sides, the
// reference's samples) within about one DepthTimeout, the first failure holding the book
// unread for BookRetry. Thawed, the next quote after BookRetry prices from the book again.
func TestAQuoteFromASilentRemoteEngineIsRefusedPromptly(t *testing.T) {
	pool, _ := pgtest.New(t)
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
	t.Cleanup(eng.Stop)
	mm := engine.AccountID(uuid.MustParse("01a2016a-0000-7000-8000-00000000ab01"))
	for _, a := range []engine.Asset{engine.NGN, engine.USDT} {
		if res, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: mm, Asset: a, Amount: 1 << 50,
			TransferID: engine.TransferID(uuid.Must(uuid.NewV7()))}); err != nil || res.Code != engine.OK {
			t.Fatal(res, err)
		}
	}
	for _, o := range []struct {
		side  engine.Side
		price engine.Price
	}{{engine.Buy, 159900}, {engine.Sell, 160100}} {
		if res, err := eng.Submit(&engine.Command{Kind: engine.CmdPlace, Account: mm, Symbol: "USDT-NGN",
			OrderID: engine.OrderID(uuid.Must(uuid.NewV7())), Side: o.side, Type: engine.Limit, Price: o.price, Qty: 1000 * 100}); err != nil || res.Code != engine.OK {
			t.Fatal(res, err)
		}
	}
	client, fr := enginerpctest.Remote(t, eng)
	const timeout = 500 * time.Millisecond
	s, err := New(pool, Config{Exchanges: map[string]Exchange{"sandbox": client}, DepthTimeout: timeout,
		References: map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000}, Treasury: desk{capacity: 1 << 60}})
	if err != nil {
		t.Fatal(err)
	}
	tn := payments.Tenant{MerchantID: uuid.MustParse("01a2016a-0000-7000-8000-000000000001"), Environment: "sandbox"}
	answering := map[money.Asset]string{money.USDT: SourceBook, money.USDC: SourceTreasury}
	check := func(when string) {
		t.Helper()
		for a, src := range answering {
			for _, side := range []string{Buy, Sell} {
				if p, err := s.Market("sandbox", a, side); err != nil || p.Source != src {
					t.Fatalf("%s: %s %s: %+v %v; want source %s", when, a, side, p, err, src)
				}
			}
		}
	}
	check("answering")

	fr.Pause()
	for _, a := range []money.Asset{money.USDT, money.USDC} {
		start := time.Now()
		p, err := s.Market("sandbox", a, Buy)
		if took := time.Since(start); err != ErrRateUnavailable || took > timeout+time.Second {
			t.Fatalf("frozen: %s: %+v, %v after %s; want ErrRateUnavailable within %s", a, p, err, took, timeout)
		}
	}
	time.Sleep(BookRetry) // the next read asks the engine again
	start := time.Now()
	qs, err := s.Quote(t.Context(), tn, Request{})
	took := time.Since(start)
	var pe *payments.Error
	if !errors.Is(err, ErrRateUnavailable) || !errors.As(err, &pe) || pe.Code != "RATE_UNAVAILABLE" || len(qs) != 0 {
		t.Fatalf("frozen: Quote: %+v, %v; want RATE_UNAVAILABLE", qs, err)
	}
	if took >= 2*timeout { // a dozen reads without BookRetry: two waits are already too many
		t.Fatalf("frozen: Quote took %s; one read's deadline is %s", took, timeout)
	}
	var stored int
	if err := pool.QueryRow(t.Context(), `select count(*) from rate_quotes`).Scan(&stored); err != nil || stored != 0 {
		t.Fatal("quotes stored while the book was unread:", stored, err)
	}

	fr.Resume()
	time.Sleep(BookRetry)
	check("thawed")
}
