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

	t.Run("a lost connection fails the lease within its TTL and the next holder is told to wait", func(t *testing.T) {
		proxy, purl := pgtest.NewProxy(t, url)
		_ = proxy
		a, err := TryAcquire(ctx, withTTL(cfg(purl, "sandbox", "host-a:1"), 3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		lost := make(chan error, 1)
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		done := make(chan error, 1)
		go func() { done <- a.Run(runCtx, func(err error) { lost <- err }) }()
		time.Sleep(3500 * time.Millisecond) // confirmations keep it valid past its first TTL
		if err := a.Check(); err != nil {
			t.Fatalf("check while confirmed: %v", err)
		}
		proxy.Close() // the database connection dies
		start := time.Now()
		select {
		case err := <-lost:
			if !errors.Is(err, ErrLost) {
				t.Fatalf("onLost: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("loss not noticed")
		}
		if err := a.Check(); !errors.Is(err, ErrLost) {
			t.Fatalf("check after loss: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrLost) {
			t.Fatalf("Run: %v", err)
		}
		t.Logf("loss noticed after %v", time.Since(start))
		var b *Lease
		deadline := time.Now().Add(5 * time.Second)
		var tryAt time.Time
		for {
			tryAt = time.Now()
			b, err = TryAcquire(ctx, withTTL(cfg(url, "sandbox", "host-b:2"), 3*time.Second))
			if err == nil || !errors.Is(err, ErrHeld) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer b.Release(ctx)
		if b.Clean() {
			t.Fatal("takeover after a lost connection reported a clean release")
		}
		// The old holder's lease has run out one TTL after the takeover at the latest.
		if err := b.WaitOutPrevious(ctx); err != nil || time.Since(tryAt) < b.TTL() {
			t.Fatalf("WaitOutPrevious: %v, %v after the acquisition", err, time.Since(tryAt))
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
