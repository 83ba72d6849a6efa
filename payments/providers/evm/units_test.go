package evm

import (
	"math/big"
	"testing"

	"svc/payments/money"
)

// TestTokenUnits: minor units (micro-USDT) to a token's base units and back, for a token with
// the same, more and fewer decimals: exact upward, truncated downward (dust below a
// micro-unit is not credited), and representable only without digits the token cannot carry.
func TestTokenUnits(t *testing.T) {
	e12 := new(big.Int).Exp(big.NewInt(10), big.NewInt(12), nil)
	for _, c := range []struct {
		decimals  uint8
		minor     int64
		value     *big.Int
		fits      bool
		back      *big.Int // base units read back
		backMinor int64
	}{
		{6, 1_234_567, big.NewInt(1_234_567), true, big.NewInt(1_234_567), 1_234_567},
		{18, 1, new(big.Int).Set(e12), true, new(big.Int).Add(e12, big.NewInt(5)), 1},
		{2, 1_234_567, big.NewInt(123), false, big.NewInt(123), 1_230_000},
		{2, 1_230_000, big.NewInt(123), true, big.NewInt(123), 1_230_000},
	} {
		tok := Token{Asset: money.USDT, Decimals: c.decimals}
		a := money.New(money.USDT, c.minor)
		if got := tok.toValue(a); got.Cmp(c.value) != 0 {
			t.Errorf("decimals %d: toValue(%d) = %s, want %s", c.decimals, c.minor, got, c.value)
		}
		if got := tok.representable(a); got != c.fits {
			t.Errorf("decimals %d: representable(%d) = %v", c.decimals, c.minor, got)
		}
		if got, ok := tok.toAmount(c.back); !ok || got.Minor != c.backMinor {
			t.Errorf("decimals %d: toAmount(%s) = %v %v, want %d", c.decimals, c.back, got, ok, c.backMinor)
		}
	}
}
