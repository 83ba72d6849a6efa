package rates

import (
	"math/big"
	"testing"

	"svc/engine"
	"svc/payments/money"
)

type book struct {
	bid, ask     int64
	bidOK, askOK bool
}

func (b book) BestBidAsk(string) (bid, ask engine.Level, bidOK, askOK bool, err error) {
	return engine.Level{Price: engine.Price(b.bid)}, engine.Level{Price: engine.Price(b.ask)}, b.bidOK, b.askOK, nil
}

func TestMarketPricesFromTheBookWithSpreadElseReference(t *testing.T) {
	s, err := New(nil, Config{Exchanges: map[string]Exchange{"sandbox": book{bid: 149001, ask: 150001, bidOK: true, askOK: true},
		"live": book{}}, Spread: big.NewRat(1, 100), References: map[money.Asset]int64{money.USDT: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env, side string
		asset     money.Asset
		price     int64
		source    string
	}{
		{"sandbox", Buy, money.USDT, 151502, SourceBook},  // 1500.01 x 1.01 = 1515.0101, rounded up
		{"sandbox", Sell, money.USDT, 147510, SourceBook}, // 1490.01 x 0.99 = 1475.1099, rounded down
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
	if _, err := New(nil, Config{Spread: big.NewRat(1, 2)}); err == nil {
		t.Fatal("a 50% spread was accepted")
	}
}

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
