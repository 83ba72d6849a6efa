package rates

import (
	"math/big"
	"testing"

	"svc/engine"
	"svc/payments/money"
)

// fineBook is a book whose pair prices in tenths of a kobo (PriceDecimals 3).
type fineBook struct{ book }

func (fineBook) Pair(symbol string) (engine.PairConfig, bool) {
	p, ok := book{}.Pair(symbol)
	p.PriceDecimals = 3
	return p, ok
}

// Issue 32 item 5: a level's price is exact in kobo, whatever the pair's price decimals; the
// one rounding is the spread's, in payments/money with its mode (up to buy, down to sell).
// Before, prices with more than 2 decimals were truncated to the kobo by hand, so a buyer was
// quoted below the book (1600.009 NGN quoted 1600.00).
func TestSubKoboPricesAreExactUntilTheOneRounding(t *testing.T) {
	lvlFine := func(tenthsOfKobo, units int64) engine.Level {
		return engine.Level{Price: engine.Price(tenthsOfKobo), Qty: engine.Qty(units * 100), Count: 1}
	}
	s, err := New(nil, Config{Spread: big.NewRat(0, 1), References: map[money.Asset]int64{money.USDT: 160000},
		Exchanges: map[string]Exchange{"sandbox": fineBook{book{
			asks: []engine.Level{lvlFine(1600009, 1000)}, // 1600.009 NGN
			bids: []engine.Level{lvlFine(1599991, 1000)}, // 1599.991 NGN
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		side string
		size money.Amount
		want int64
	}{
		{Buy, money.MustParse(money.USDT, "10"), 160001},      // 160000.9 kobo, up
		{Sell, money.MustParse(money.USDT, "10"), 159999},     // 159999.1 kobo, down
		{Buy, money.MustParse(money.NGN, "16000.09"), 160001}, // an NGN size fills the same level
		{Sell, money.MustParse(money.NGN, "15999.91"), 159999},
	} {
		p, err := s.MarketFor("sandbox", money.USDT, c.side, c.size)
		if err != nil || p.Price != c.want || p.Source != SourceBook {
			t.Errorf("%s %v: %+v %v, want %d from the book", c.side, c.size, p, err, c.want)
		}
	}
}
