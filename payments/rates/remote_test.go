package rates

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/cluster/enginerpc"
	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
	"svc/payments"
	"svc/payments/money"
	"svc/persistence/journal/journaltest"
	"svc/persistence/postgres/pgtest"
)

var _ depthReader = (*enginerpc.Client)(nil)

// silentBook is a Service over a real engine served over cluster/enginerpc behind a proxy
// the test freezes (the client's own timeouts are 20 s), reading its book within
// depthTimeout: USDT's book has depth in the band, USDC's is empty (the treasury prices it).
func silentBook(t *testing.T, depthTimeout time.Duration) (s *Service, fr *pgtest.Proxy, pool *pgxpool.Pool) {
	t.Helper()
	pool, _ = pgtest.New(t)
	eng, _ := journaltest.StartEngine(t, nil)
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
	s, err := New(pool, Config{Exchanges: map[string]Exchange{"sandbox": client}, DepthTimeout: depthTimeout,
		References: map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000}, Treasury: desk{capacity: 1 << 60}})
	if err != nil {
		t.Fatal(err)
	}
	return s, fr, pool
}

// TestAQuoteFromASilentRemoteEngineIsRefusedPromptly: a real engine served over
// cluster/enginerpc behind a proxy the test freezes (the client's own timeouts are 20 s).
// While it answers, USDT's book (depth in the band) prices from the book and USDC's empty
// book from the treasury. Frozen, neither is priced as if the book were empty: each quote
// is refused with ErrRateUnavailable (503 RATE_UNAVAILABLE, Retry-After) within
// DepthTimeout, and a whole GET /payments/rates (Quote: both assets, both sides, the
// reference's samples) within about one DepthTimeout, the first failure holding the book
// unread for BookRetry. Thawed, the next quote after BookRetry prices from the book again.
func TestAQuoteFromASilentRemoteEngineIsRefusedPromptly(t *testing.T) {
	const timeout = 500 * time.Millisecond
	s, fr, pool := silentBook(t, timeout)
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

// TestConcurrentQuotesOfASilentEngineWaitOnce (run with -race): quotes asked at once by
// many callers, each in turn, while the engine is silent are all refused, and the
// environment's hold (BookRetry, set by the first failed read) makes the later ones answer
// without asking, so the callers together wait about one DepthTimeout, not one per quote;
// thawed, all are priced again.
func TestConcurrentQuotesOfASilentEngineWaitOnce(t *testing.T) {
	const timeout, callers, calls = 500 * time.Millisecond, 16, 6
	s, fr, _ := silentBook(t, timeout)
	run := func(when string, want error) time.Duration {
		t.Helper()
		start := time.Now()
		errs := make(chan error, callers*calls)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				a := []money.Asset{money.USDT, money.USDC}[i%2]
				for range calls {
					if p, err := s.Market("sandbox", a, Buy); err != want {
						errs <- fmt.Errorf("%s: %s: %+v, %v; want %v", when, a, p, err, want)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		return time.Since(start)
	}
	run("answering", nil)

	fr.Pause()
	took := run("frozen", ErrRateUnavailable)
	fr.Resume()
	if took >= 3*timeout { // each caller's reads one after another, without the hold: 3 s
		t.Fatalf("frozen: %d callers of %d quotes each took %s; one read's deadline is %s", callers, calls, took, timeout)
	}
	time.Sleep(BookRetry)
	run("thawed", nil)
}

// TestAQuoteFromAStoppedLocalEngineIsRefused: the local engine's book is read from memory,
// and a read it refuses (here stopped; busy, its ring full, likewise) is not an empty book:
// the quote answers ErrRateUnavailable instead of the treasury's price it had while the
// engine answered, and the environment is not held (the next quote asks again).
func TestAQuoteFromAStoppedLocalEngineIsRefused(t *testing.T) {
	pool, _ := pgtest.New(t)
	eng, _ := journaltest.StartEngine(t, nil) // stopped below; Stop runs once
	s, err := New(pool, Config{Exchanges: map[string]Exchange{"sandbox": eng},
		References: map[money.Asset]int64{money.USDC: 160000}, Treasury: desk{capacity: 1 << 60}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Market("sandbox", money.USDC, Buy); err != nil || p.Source != SourceTreasury {
		t.Fatalf("answering, an empty book: %+v, %v; want source %s", p, err, SourceTreasury)
	}
	eng.Stop()
	if p, err := s.Market("sandbox", money.USDC, Buy); err != ErrRateUnavailable {
		t.Fatalf("stopped: %+v, %v; want ErrRateUnavailable", p, err)
	}
	if held := s.unread["sandbox"].Load(); held != 0 {
		t.Fatalf("a local engine's refusal held the environment until %d", held)
	}
}
