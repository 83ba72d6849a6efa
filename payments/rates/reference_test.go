package rates

import (
	"math/big"
	"sync"
	"testing"
	"time"

	"svc/engine"
	"svc/payments/money"
)

// movingBook is a two-sided ladder around a mid that the test moves: ten levels of 50 units
// each side, 0.1 % apart, the first 0.1 % off the mid.
type movingBook struct {
	mu  sync.Mutex
	mid int64 // kobo
}

func (b *movingBook) set(mid int64) { b.mu.Lock(); b.mid = mid; b.mu.Unlock() }

func (b *movingBook) Depth(symbol string, n int) (engine.Depth, error) {
	b.mu.Lock()
	mid := b.mid
	b.mu.Unlock()
	d := engine.Depth{Symbol: symbol}
	for i := int64(1); i <= 10; i++ {
		d.Asks = append(d.Asks, lvl(mid+mid*i/1000, 50))
		d.Bids = append(d.Bids, lvl(mid-mid*i/1000, 50))
	}
	return d, nil
}

func (*movingBook) Pair(symbol string) (engine.PairConfig, bool) { return book{}.Pair(symbol) }

type simClock struct{ t time.Time }

func (c *simClock) now() time.Time          { return c.t }
func (c *simClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestTheReferenceFollowsADriftAndRefusesAJumpUntilItPersists: a market drifting 10 % over
// an hour keeps being quoted from the book (the band moves with it); a 5 % jump is not
// followed (quotes stay at the old reference) until it has persisted for Persist.
func TestTheReferenceFollowsADriftAndRefusesAJumpUntilItPersists(t *testing.T) {
	const start = 160000
	clk := &simClock{t: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}
	bk := &movingBook{mid: start}
	s, err := New(nil, Config{Exchanges: map[string]Exchange{"sandbox": bk}, Now: clk.now, QuoteSize: 100,
		References: map[money.Asset]int64{money.USDT: start}, Spread: new(big.Rat)})
	if err != nil {
		t.Fatal(err)
	}
	band := big.NewRat(2, 100)
	within := func(p, ref int64) bool {
		d := new(big.Rat).SetFrac64(p-ref, ref)
		return new(big.Rat).Abs(d).Cmp(band) <= 0
	}
	// Drift: +10 % linearly over an hour, quoted every second.
	for sec := 0; sec <= 3600; sec++ {
		mid := start + start*int64(sec)/36000
		bk.set(mid)
		for _, side := range []string{Buy, Sell} {
			p, err := s.Market("sandbox", money.USDT, side)
			if err != nil || p.Source != SourceBook {
				ref, _ := s.Reference("sandbox", money.USDT)
				t.Fatalf("second %d, mid %d, reference %+v: %s quote %+v %v", sec, mid, ref, side, p, err)
			}
		}
		if ref, _ := s.Reference("sandbox", money.USDT); !within(ref.Price, mid) || ref.Source != RefBook {
			t.Fatalf("second %d: reference %+v is not within the band of the mid %d", sec, ref, mid)
		}
		clk.advance(time.Second)
	}
	before, _ := s.Reference("sandbox", money.USDT)
	if before.Price < start*108/100 {
		t.Fatalf("after the drift the reference is %d", before.Price)
	}
	// A jump of 5 %: refused (the quotes come from the old reference) until it persists.
	jumped := before.Price * 105 / 100
	bk.set(jumped)
	clk.advance(time.Second)
	for sec := 0; sec < int(DefaultPersist/time.Second); sec++ {
		p, err := s.Market("sandbox", money.USDT, Buy)
		if err != nil || p.Source != SourceReference || !within(p.Price, before.Price) {
			t.Fatalf("%d s into the jump: %+v %v (reference before %d)", sec, p, err, before.Price)
		}
		if ref, _ := s.Reference("sandbox", money.USDT); ref.JumpSince.IsZero() {
			t.Fatalf("%d s into the jump: no jump recorded: %+v", sec, ref)
		}
		clk.advance(time.Second)
	}
	clk.advance(time.Second)
	if p, err := s.Market("sandbox", money.USDT, Buy); err != nil || p.Source != SourceBook || !within(p.Price, jumped) {
		ref, _ := s.Reference("sandbox", money.USDT)
		t.Fatalf("the persisted jump was not followed: %+v %v, reference %+v", p, err, ref)
	}
	// A book that stops giving samples (one side empty) leaves the reference alive for
	// MaxAge, then the operator's value is the reference again.
	s.cfg.Exchanges["sandbox"] = book{asks: []engine.Level{lvl(jumped, 1)}}
	clk.advance(DefaultMaxAge - time.Second)
	if ref, _ := s.Reference("sandbox", money.USDT); ref.Source != RefBook {
		t.Fatalf("the reference went stale early: %+v", ref)
	}
	clk.advance(2 * time.Second)
	if ref, _ := s.Reference("sandbox", money.USDT); ref.Source != RefOperator || ref.Price != start {
		t.Fatalf("a stale reference was kept: %+v", ref)
	}
}

type fixedFeed struct {
	price int64
	at    time.Time
}

func (f fixedFeed) Price(string, money.Asset) (int64, time.Time, bool) {
	return f.price, f.at, f.price > 0
}

// TestAFreshFeedIsPreferredToTheBook: a feed younger than MaxAge is the sample; an old one
// is ignored for the book's mid.
func TestAFreshFeedIsPreferredToTheBook(t *testing.T) {
	clk := &simClock{t: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}
	bk := &movingBook{mid: 160000}
	for _, tc := range []struct {
		age    time.Duration
		price  int64
		source string
	}{{time.Minute, 161000, RefFeed}, {time.Hour, 160000, RefBook}} {
		s, _ := New(nil, Config{Exchanges: map[string]Exchange{"sandbox": bk}, Now: clk.now,
			References: map[money.Asset]int64{money.USDT: 160000},
			Reference:  ReferenceConfig{Feed: fixedFeed{161000, clk.t.Add(-tc.age)}}})
		if ref, _ := s.Reference("sandbox", money.USDT); ref.Price != tc.price || ref.Source != tc.source {
			t.Fatalf("feed %v old: %+v", tc.age, ref)
		}
	}
}
