package ratelimit_test

import (
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svc/gateway/ratelimit"
)

func TestLimiterRefill(t *testing.T) {
	now := time.Unix(1000, 0)
	l := ratelimit.New(func() time.Time { return now })
	for i := 0; i < 60; i++ {
		if !l.Take("k", 60).Allowed {
			t.Fatalf("request %d refused", i)
		}
	}
	d := l.Take("k", 60)
	if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Second {
		t.Fatalf("61st: %+v", d)
	}
	now = now.Add(time.Second)
	if !l.Take("k", 60).Allowed {
		t.Fatal("no refill after a second")
	}
	if l.Take("k", 60).Allowed {
		t.Fatal("refilled more than one token")
	}
	// Raising the limit keeps what was spent and grants the difference.
	if d := l.Take("k", 120); !d.Allowed || d.Remaining != 59 {
		t.Fatalf("raised: %+v", d)
	}
	if d := l.Take("other", 5); !d.Allowed || d.Remaining != 4 || d.Limit != 5 {
		t.Fatalf("separate key: %+v", d)
	}
}

func TestLimiterCountsRefusals(t *testing.T) {
	l := ratelimit.New(nil)
	allowed := 0
	for i := 0; i < 5; i++ {
		if l.Take("k", 2).Allowed {
			allowed++
		}
	}
	if got := l.Refused(); got != uint64(5-allowed) || got == 0 {
		t.Fatalf("Refused() = %d after %d of 5 allowed", got, allowed)
	}
}

func TestBurstLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := ratelimit.NewBurst(func() time.Time { return now }, func(limit int) int { return max(limit/10, 10) })
	cases := []struct {
		name    string
		limit   int
		allowed int // of a burst of 100 at one instant
	}{
		{"small limit gets the floor of 10", 60, 10},
		{"large limit gets a tenth", 600, 60},
		{"one a minute still bursts 10", 1, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := fmt.Sprint(c.limit)
			if d := l.Peek(key, c.limit); !d.Allowed || d.Remaining != c.allowed {
				t.Fatalf("peek of a new key: %+v", d)
			}
			n := 0
			for i := 0; i < 100; i++ {
				if l.Take(key, c.limit).Allowed {
					n++
				}
			}
			if n != c.allowed {
				t.Fatalf("allowed %d of 100, want %d", n, c.allowed)
			}
			d := l.Take(key, c.limit)
			if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Minute/time.Duration(c.limit) {
				t.Fatalf("after the burst: %+v", d)
			}
		})
	}
}

// Idle buckets are dropped once the set reaches its bound; a set full of live buckets
// raises the bound instead of sweeping again on every new key.
func TestSweepDropsIdleBuckets(t *testing.T) {
	now := time.Unix(1000, 0)
	const bound = 1024
	l := ratelimit.NewWith(ratelimit.Options{Now: func() time.Time { return now }, MaxBuckets: bound})
	for i := 0; i < bound; i++ {
		l.Take(fmt.Sprint(i), 60)
	}
	if l.Len() != bound {
		t.Fatalf("%d buckets", l.Len())
	}
	l.Take("one more", 60) // every bucket is in use: nothing to drop
	if l.Len() != bound+1 {
		t.Fatalf("%d buckets after a sweep of live ones", l.Len())
	}
	now = now.Add(2 * time.Second) // every earlier bucket has refilled
	for i := 0; i < bound; i++ {
		l.Take(fmt.Sprint("b", i), 60)
	}
	// At the raised bound (twice the first) one sweep dropped the bound+1 idle buckets.
	if l.Len() != bound {
		t.Fatalf("%d buckets, want only the %d new ones", l.Len(), bound)
	}
	if d := ratelimit.New(nil); d.Len() != 0 {
		t.Fatal("a new limiter holds buckets")
	}
}

func TestAddrKey(t *testing.T) {
	cases := []struct {
		name string
		a, b string
		same bool
	}{
		{"IPv4 by address", "192.0.2.1", "192.0.2.2", false},
		{"IPv4-mapped counts as IPv4", "::ffff:192.0.2.1", "192.0.2.1", true},
		{"IPv6 by /64", "2001:db8::1", "2001:db8::ffff:1", true},
		{"other /64", "2001:db8::1", "2001:db8:0:1::1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := ratelimit.AddrKey("p:", netip.MustParseAddr(c.a)), ratelimit.AddrKey("p:", netip.MustParseAddr(c.b))
			if (a == b) != c.same {
				t.Fatalf("%q vs %q", a, b)
			}
		})
	}
	if ratelimit.AddrKey("p:", netip.Addr{}) != "p:" {
		t.Fatal("zero address")
	}
}

// Concurrent takes of one bucket never grant more than it holds (run with -race).
func TestConcurrentTakes(t *testing.T) {
	now := time.Unix(1000, 0)
	l := ratelimit.New(func() time.Time { return now })
	const workers, each, limit = 8, 50, 100
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if l.Take("k", limit).Allowed {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != limit || l.Refused() != workers*each-limit {
		t.Fatalf("allowed %d, refused %d of %d with a limit of %d", allowed.Load(), l.Refused(), workers*each, limit)
	}
}
