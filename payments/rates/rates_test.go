package rates

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"svc/engine"
	"svc/payments"
	"svc/payments/money"
)

// book is a fixed depth snapshot of every symbol (prices in kobo, quantities in lots of 0.01).
type book struct{ bids, asks []engine.Level }

func (b book) Depth(symbol string, n int) (engine.Depth, error) {
	d := engine.Depth{Symbol: symbol, Bids: b.bids, Asks: b.asks}
	if len(d.Bids) > n {
		d.Bids = d.Bids[:n]
	}
	if len(d.Asks) > n {
		d.Asks = d.Asks[:n]
	}
	return d, nil
}

func (book) Pair(symbol string) (engine.PairConfig, bool) {
	for _, p := range engine.DefaultPairs() {
		if p.Symbol == symbol {
			return p, true
		}
	}
	return engine.PairConfig{}, false
}

func lvl(kobo, units int64) engine.Level {
	return engine.Level{Price: engine.Price(kobo), Qty: engine.Qty(units * 100), Count: 1}
}

func TestMarketPricesFromTheBookWithSpreadElseReference(t *testing.T) {
	s, err := New(nil, Config{Exchanges: map[string]Exchange{
		"sandbox": book{bids: []engine.Level{lvl(159001, 1000)}, asks: []engine.Level{lvl(160001, 1000)}},
		"live":    book{}}, Spread: big.NewRat(1, 100), References: map[money.Asset]int64{money.USDT: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env, side string
		asset     money.Asset
		price     int64
		source    string
	}{
		{"sandbox", Buy, money.USDT, 161602, SourceBook},  // 1600.01 x 1.01 = 1616.0101, rounded up
		{"sandbox", Sell, money.USDT, 157410, SourceBook}, // 1590.01 x 0.99 = 1574.1099, rounded down
		{"live", Buy, money.USDT, 161600, SourceReference},
		{"live", Sell, money.USDT, 158400, SourceReference},
	} {
		p, err := s.Market(tc.env, tc.asset, tc.side)
		if err != nil || p.Price != tc.price || p.Source != tc.source {
			t.Fatalf("%+v: %+v %v", tc, p, err)
		}
	}
	if _, err := s.Market("live", money.USDC, Buy); err != ErrNoPrice {
		t.Fatal(err)
	}
	if _, err := s.Market("sandbox", money.USDC, Buy); err != ErrNoPrice {
		t.Fatal("a book without a reference to check it against was used:", err)
	}
	if _, err := New(nil, Config{Spread: big.NewRat(1, 2)}); err == nil {
		t.Fatal("a 50% spread was accepted")
	}
	if _, err := New(nil, Config{Band: big.NewRat(0, 1)}); err == nil {
		t.Fatal("a zero band was accepted")
	}
}

func TestMarketForWeighsTheLevelsTheSizeTakes(t *testing.T) {
	ex := book{
		asks: []engine.Level{lvl(160000, 10), lvl(160500, 10), lvl(161000, 100)},
		bids: []engine.Level{lvl(159500, 10), lvl(159000, 10), lvl(158000, 100)},
	}
	s, err := New(nil, Config{Exchanges: map[string]Exchange{"live": ex}, Spread: new(big.Rat),
		References: map[money.Asset]int64{money.USDT: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		side  string
		size  money.Amount
		price int64
	}{
		{"a small buy takes the best ask", Buy, money.MustParse(money.USDT, "5"), 160000},
		{"20 units take two ask levels", Buy, money.MustParse(money.USDT, "20"), 160250},
		{"30 units reach the third", Buy, money.MustParse(money.USDT, "30"), 160500},
		{"a fraction of a lot rounds up to a lot", Buy, money.MustParse(money.USDT, "0.000001"), 160000},
		{"20 units sold take two bid levels", Sell, money.MustParse(money.USDT, "20"), 159250},
		{"an NGN amount fills by notional", Buy, money.MustParse(money.NGN, "32050"), 160250},
		{"the default size is 100 units", Sell, money.Amount{}, 158250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.MarketFor("live", money.USDT, tc.side, tc.size)
			if err != nil || p.Price != tc.price || p.Source != SourceBook {
				t.Fatalf("%+v %v, want %d", p, err, tc.price)
			}
		})
	}
	t.Run("a size the book cannot fill is refused", func(t *testing.T) {
		if _, err := s.MarketFor("live", money.USDT, Buy, money.MustParse(money.USDT, "121")); err != ErrRateUnavailable {
			t.Fatal(err)
		}
		if _, err := s.MarketFor("live", money.USDT, Sell, money.MustParse(money.NGN, "100000000")); err != ErrRateUnavailable {
			t.Fatal(err)
		}
	})
	t.Run("a size of another asset is a field error", func(t *testing.T) {
		_, err := s.MarketFor("live", money.USDT, Buy, money.MustParse(money.USDC, "1"))
		if fe, ok := err.(*payments.FieldError); !ok || fe.Field != "amount" {
			t.Fatal(err)
		}
	})
	t.Run("a market that left the band is not followed: its levels are ignored as if absent", func(t *testing.T) {
		far := book{asks: []engine.Level{lvl(170000, 1000)}, bids: []engine.Level{lvl(150000, 1000)}}
		s2, _ := New(nil, Config{Exchanges: map[string]Exchange{"live": far}, Spread: new(big.Rat),
			References: map[money.Asset]int64{money.USDT: 160000}})
		for _, side := range []string{Buy, Sell} {
			if p, err := s2.Market("live", money.USDT, side); err != nil || p.Source != SourceReference || p.Price != 160000 {
				t.Fatal(side, p, err)
			}
		}
	})
}

// TestAnOrderFarOffTheMarketMovesNoQuoteBeyondTheBand: over every size from the pair's
// minimum (1 unit) up to far more than the book holds, an order at ten times (or a tenth
// of) the market, on either side, never moves a quote of any size beyond the band around the
// reference (plus the spread); it is either skipped or the quote is refused as too thin.
func TestAnOrderFarOffTheMarketMovesNoQuoteBeyondTheBand(t *testing.T) {
	const ref = 160000
	rng := rand.New(rand.NewPCG(15, 3))
	honestAsks := []engine.Level{lvl(160100, 50), lvl(160800, 200), lvl(162500, 500)}
	honestBids := []engine.Level{lvl(159900, 50), lvl(159200, 200), lvl(157500, 500)}
	insert := func(levels []engine.Level, l engine.Level, better func(a, b engine.Price) bool) []engine.Level {
		out := []engine.Level{}
		done := false
		for _, x := range levels {
			if !done && better(l.Price, x.Price) {
				out, done = append(out, l), true
			}
			out = append(out, x)
		}
		if !done {
			out = append(out, l)
		}
		return out
	}
	lower := func(a, b engine.Price) bool { return a < b }
	higher := func(a, b engine.Price) bool { return a > b }
	spread := big.NewRat(5, 1000)
	band := big.NewRat(2, 100)
	// Bounds of any quote: ref x (1 -+ band) x (1 -+ spread), rounded outward.
	maxBuy := ceilRat(new(big.Rat).Mul(big.NewRat(ref*102*1005, 100*1000), big.NewRat(1, 1)))
	minSell := floorRat(big.NewRat(ref*98*995, 100*1000))
	for i := 0; i < 2000; i++ {
		attack := int64(100 + rng.Int64N(1_000_000)) // lots: from the minimum quantity (1 unit) up
		price := engine.Price(ref * 10)
		if rng.IntN(2) == 0 {
			price = ref / 10
		}
		ex := book{asks: honestAsks, bids: honestBids}
		if rng.IntN(2) == 0 {
			ex.asks = insert(honestAsks, engine.Level{Price: price, Qty: engine.Qty(attack), Count: 1}, lower)
		} else {
			ex.bids = insert(honestBids, engine.Level{Price: price, Qty: engine.Qty(attack), Count: 1}, higher)
		}
		s, err := New(nil, Config{Exchanges: map[string]Exchange{"live": ex}, Spread: spread, Band: band,
			References: map[money.Asset]int64{money.USDT: ref}})
		if err != nil {
			t.Fatal(err)
		}
		size := money.New(money.USDT, 1+rng.Int64N(2_000_000_000)) // 0.000001 to 2,000 USDT
		if rng.IntN(3) == 0 {
			size = money.New(money.NGN, 1+rng.Int64N(400_000_000)) // up to 4,000,000 NGN
		}
		for _, side := range []string{Buy, Sell} {
			p, err := s.MarketFor("live", money.USDT, side, size)
			if err == ErrRateUnavailable {
				continue
			}
			if err != nil {
				t.Fatalf("case %d %s %v: %v", i, side, size, err)
			}
			if p.Price > maxBuy || p.Price < minSell {
				t.Fatalf("case %d: %s quote of %v at %d is beyond the band [%d, %d] (attack %d lots at %d)",
					i, side, size, p.Price, minSell, maxBuy, attack, price)
			}
			if p.Source != SourceBook {
				t.Fatalf("case %d: %+v", i, p)
			}
		}
	}
	// The example: one 1-unit buy at 10x the market on an otherwise healthy book
	// leaves the sell quote where the honest bids put it.
	ex := book{asks: honestAsks, bids: insert(honestBids, lvl(ref*10, 1), higher)}
	s, _ := New(nil, Config{Exchanges: map[string]Exchange{"live": ex}, Spread: new(big.Rat), References: map[money.Asset]int64{money.USDT: ref}})
	if p, err := s.MarketFor("live", money.USDT, Sell, money.MustParse(money.USDT, "1")); err != nil || p.Price != 159900 {
		t.Fatal(p, err)
	}
}

// desk is a treasury with a fixed capacity per side, in minor units of the asset.
type desk struct{ capacity int64 }

func (d desk) Covers(env string, _ money.Asset, _ string, units int64) (bool, bool) {
	if env != "sandbox" {
		return false, false
	}
	return units <= d.capacity, true
}

// TestAThinBookIsRefused: a side holding less than the size within the band answers
// ErrRateUnavailable (503 RATE_UNAVAILABLE) without a treasury, whatever lies beyond the
// band, and a side holding nothing inside the band is priced as an empty one (the
// reference). With a treasury both are quoted from the treasury at the reference while its
// capacity covers the size, and refused once it does not.
func TestAThinBookIsRefused(t *testing.T) {
	ex := book{asks: []engine.Level{lvl(160000, 1), lvl(1600000, 1_000_000)}, bids: []engine.Level{lvl(16000, 1_000_000)}}
	s, _ := New(nil, Config{Exchanges: map[string]Exchange{"sandbox": ex}, References: map[money.Asset]int64{money.USDT: 160000}})
	if _, err := s.Market("sandbox", money.USDT, Buy); err != ErrRateUnavailable {
		t.Fatal(err)
	}
	if p, err := s.Market("sandbox", money.USDT, Sell); err != nil || p.Source != SourceReference {
		t.Fatal(p, err)
	}
	for _, tc := range []struct {
		capacity int64
		want     error
	}{{100_000_000, nil}, {99_999_999, ErrRateUnavailable}} {
		s, _ := New(nil, Config{Exchanges: map[string]Exchange{"sandbox": ex}, References: map[money.Asset]int64{money.USDT: 160000},
			Treasury: desk{tc.capacity}, Spread: new(big.Rat)})
		for _, side := range []string{Buy, Sell} {
			p, err := s.Market("sandbox", money.USDT, side)
			if err != tc.want || (err == nil && (p.Source != SourceTreasury || p.Price != 160000)) {
				t.Fatal(tc, side, p, err)
			}
		}
	}
	if e, ok := ErrRateUnavailable.(*payments.Error); !ok || e.APICode() != "RATE_UNAVAILABLE" {
		t.Fatal(ErrRateUnavailable)
	}
}

func ceilRat(r *big.Rat) int64 {
	q := ceilDiv(r.Num(), r.Denom())
	return q.Int64()
}

func floorRat(r *big.Rat) int64 { return new(big.Int).Quo(r.Num(), r.Denom()).Int64() }

func TestConvertRoundsHalfEven(t *testing.T) {
	for _, tc := range []struct {
		kobo, price, want int64
	}{
		{1608000, 160800, 10_000000}, // 16,080.00 NGN at 1,608.00 = 10 USDT
		{100, 300, 333333},           // 1 NGN at 3.00 = 0.3333333... -> 0.333333
		{1, 200000000, 0},            // 0.005 micro-USDT -> 0
		{1, 2, 500000},
	} {
		got, err := Convert(money.New(money.NGN, tc.kobo), money.USDT, tc.price)
		if err != nil || got.Minor != tc.want || got.Asset != money.USDT {
			t.Fatalf("%+v: %v %v", tc, got, err)
		}
	}
	// Ties go to the even micro-unit: at 20,000.00 NGN, 1 kobo is 0.5 micro -> 0, 3 kobo
	// 1.5 -> 2, 5 kobo 2.5 -> 2.
	for kobo, want := range map[int64]int64{1: 0, 3: 2, 5: 2} {
		if got, _ := Convert(money.New(money.NGN, kobo), money.USDT, 2000000); got.Minor != want {
			t.Fatal(kobo, got)
		}
	}
	if got, _ := ToNGN(money.New(money.USD, 1050), 160050); got.Minor != 1680525 {
		t.Fatal(got) // 10.50 USD x 1,600.50 = 16,805.25 NGN
	}
	if _, err := Convert(money.New(money.USDT, 1), money.USDT, 1); err == nil {
		t.Fatal("converted USDT as NGN")
	}
}

func TestRateStringAndReferences(t *testing.T) {
	if s := RateString(160000, true); s != "0.000625" {
		t.Fatal(s)
	}
	if s := RateString(160050, false); s != "1600.50" {
		t.Fatal(s)
	}
	refs, err := ParseReferences(" USDT-NGN=1600, USDC-NGN=1600.5,USD-NGN=1590 ")
	if err != nil || refs[money.USDT] != 160000 || refs[money.USDC] != 160050 || refs[money.USD] != 159000 {
		t.Fatal(refs, err)
	}
	for _, bad := range []string{"USDT=1600", "BTC-NGN=1", "USDT-NGN=-1", "USDT-NGN=1.001", "USDT-USD=1"} {
		if _, err := ParseReferences(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
