package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"svc/persistence/postgres/pgtest"
)

// cfg is a lease configuration with a TTL no loaded test machine outlasts; withTTL sets a
// short one for the tests of expiry and loss.
func cfg(url, env, holder string) Config {
	return Config{URL: url, Environment: env, Holder: holder, TTL: time.Minute}
}

func withTTL(c Config, ttl time.Duration) Config {
	c.TTL = ttl
	return c
}

func TestLease(t *testing.T) {
	_, url := pgtest.New(t)
	ctx := context.Background()

	t.Run("one of two contenders holds it; the other learns who", func(t *testing.T) {
		a, err := TryAcquire(ctx, cfg(url, "sandbox", "host-a:1"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = TryAcquire(ctx, cfg(url, "sandbox", "host-b:2"))
		var held *HeldError
		if !errors.Is(err, ErrHeld) || !errors.As(err, &held) || held.Holder != "host-a:1" || held.Epoch != int64(a.Epoch()) {
			t.Fatalf("second contender: %v", err)
		}
		// Another environment is another lease.
		live, err := TryAcquire(ctx, cfg(url, "live", "host-b:2"))
		if err != nil {
			t.Fatalf("live: %v", err)
		}
		if err := live.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Check(); err != nil {
			t.Fatalf("holder's check: %v", err)
		}
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Check(); !errors.Is(err, ErrLost) {
			t.Fatalf("check after release: %v", err)
		}
		b, err := TryAcquire(ctx, cfg(url, "sandbox", "host-b:2"))
		if err != nil {
			t.Fatalf("after release: %v", err)
		}
		defer b.Release(ctx)
		if b.Epoch() != a.Epoch()+1 || !b.Clean() {
			t.Fatalf("epoch %d after %d, clean %v", b.Epoch(), a.Epoch(), b.Clean())
		}
	})

	t.Run("many contenders at once: exactly one wins", func(t *testing.T) {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			won  []*Lease
			held int
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := TryAcquire(ctx, cfg(url, "live", "racer"))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, l)
				case errors.Is(err, ErrHeld):
					held++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 || held != 7 {
			t.Fatalf("%d winners, %d refused", len(won), held)
		}
		won[0].Release(ctx)
	})

	t.Run("a holder cut off from the database stops before its lease expires there, and a contender then takes it", func(t *testing.T) {
		// Issue 29: the lease was an advisory lock, held by the partitioned holder's session
		// until TCP gave up (hours): no contender could take over. Now it expires on the
		// database's clock, and the holder's own deadline comes a margin earlier.
		proxy, purl := pgtest.NewProxy(t, url)
		a, err := TryAcquire(ctx, withTTL(cfg(purl, "sandbox", "host-a:1"), 2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		lost := make(chan error, 1)
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		done := make(chan error, 1)
		go func() { done <- a.Run(runCtx, func(err error) { lost <- err }) }()
		time.Sleep(2500 * time.Millisecond) // renewals keep it valid past its first TTL
		if err := a.Check(); err != nil {
			t.Fatalf("check while renewed: %v", err)
		}
		proxy.Pause() // a partition: the connection stays open, nothing answers
		cut := time.Now()
		stoppedAt := make(chan time.Time, 1)
		go func() {
			for a.Check() == nil {
				time.Sleep(time.Millisecond)
			}
			stoppedAt <- time.Now()
		}()
		var b *Lease
		for {
			b, err = TryAcquire(ctx, withTTL(cfg(url, "sandbox", "host-b:2"), 2*time.Second))
			if err == nil || !errors.Is(err, ErrHeld) || time.Since(cut) > 20*time.Second {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		took := time.Now()
		if err != nil {
			t.Fatalf("contender %v after the partition: %v", time.Since(cut), err)
		}
		defer b.Release(ctx)
		if b.Epoch() != a.Epoch()+1 || b.Clean() {
			t.Fatalf("contender epoch %d after %d, clean %v", b.Epoch(), a.Epoch(), b.Clean())
		}
		var stopped time.Time
		select {
		case stopped = <-stoppedAt:
		default:
			t.Fatal("the contender took the lease while the old holder's Check still passed")
		}
		if gap := took.Sub(stopped); gap < a.Margin()/2 {
			t.Errorf("the old holder stopped only %v before the takeover (margin %v)", gap, a.Margin())
		}
		t.Logf("partition -> holder stops %v, -> contender holds %v", stopped.Sub(cut), took.Sub(cut))
		select {
		case err := <-lost:
			if !errors.Is(err, ErrLost) {
				t.Fatalf("onLost: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("loss not reported by Run")
		}
		proxy.Resume() // healed: the old holder's renewals must not bring it back
		if err := <-done; !errors.Is(err, ErrLost) {
			t.Fatalf("Run: %v", err)
		}
		if err := a.Check(); !errors.Is(err, ErrLost) {
			t.Fatalf("check after loss: %v", err)
		}
	})

	t.Run("a holder that sleeps through its term answers nothing and never renews", func(t *testing.T) {
		a, err := TryAcquire(ctx, withTTL(cfg(url, "live", "sleeper"), time.Second))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(a.TTL() + 100*time.Millisecond) // paused: no renewals
		if err := a.Check(); !errors.Is(err, ErrLost) {
			t.Fatalf("check after the term: %v", err)
		}
		b, err := TryAcquire(ctx, withTTL(cfg(url, "live", "successor"), time.Minute))
		if err != nil {
			t.Fatalf("successor: %v", err)
		}
		defer b.Release(ctx)
		// The sleeper wakes: its first tick finds its deadline passed and gives up.
		err = a.Run(ctx, nil)
		if !errors.Is(err, ErrLost) || a.Check() == nil {
			t.Fatalf("woken holder: Run %v, Check %v", err, a.Check())
		}
		var epoch int64
		var holder string
		if err := b.conn.QueryRow(ctx, `select epoch, holder from engine_leases where environment = 'live'`).Scan(&epoch, &holder); err != nil {
			t.Fatal(err)
		}
		if uint64(epoch) != b.Epoch() || holder != "successor" {
			t.Fatalf("lease row epoch %d holder %q after the sleeper woke", epoch, holder)
		}
		_ = a.Release(ctx) // changes nothing of the successor's
		if err := b.conn.QueryRow(ctx, `select epoch from engine_leases where environment = 'live' and released_at is null`).Scan(&epoch); err != nil {
			t.Fatalf("the sleeper's release touched the successor's lease: %v", err)
		}
	})

	t.Run("every term is recorded", func(t *testing.T) {
		var n, distinct int
		c, err := TryAcquire(ctx, cfg(url, "sandbox", "recorder"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release(ctx)
		if err := c.conn.QueryRow(ctx, `select count(*), count(distinct epoch) from engine_lease_terms where environment = 'sandbox'`).Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if int64(n) != int64(c.Epoch()) || distinct != n {
			t.Fatalf("%d terms (%d distinct) recorded up to epoch %d", n, distinct, c.Epoch())
		}
	})

	t.Run("without confirmations the lease expires by itself", func(t *testing.T) {
		a, err := TryAcquire(ctx, withTTL(cfg(url, "live", "host-a:1"), 2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release(ctx)
		if err := a.Check(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(a.TTL())
		if err := a.Check(); !errors.Is(err, ErrLost) {
			t.Fatalf("check after TTL without Run: %v", err)
		}
	})

	t.Run("a cold standby waits and takes over when the holder releases", func(t *testing.T) {
		a, err := TryAcquire(ctx, cfg(url, "live", "leader"))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *Lease, 1)
		go func() {
			l, err := Acquire(ctx, cfg(url, "live", "standby"), 20*time.Millisecond, -1)
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		time.Sleep(100 * time.Millisecond)
		select {
		case <-got:
			t.Fatal("standby acquired a held lease")
		default:
		}
		a.Release(ctx)
		select {
		case l := <-got:
			if l == nil || l.Epoch() != a.Epoch()+1 {
				t.Fatalf("standby lease %+v", l)
			}
			l.Release(ctx)
		case <-time.After(5 * time.Second):
			t.Fatal("standby did not take over")
		}
	})
}
