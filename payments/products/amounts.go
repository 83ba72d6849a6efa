package products

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"svc/payments/money"
)

// Currencies lists the currencies of prices, invoices and links.
var Currencies = []string{"NGN", "USD"}

// ValidCurrency reports whether c is one of Currencies.
func ValidCurrency(c string) bool { return c == "NGN" || c == "USD" }

// ParseAmount reads a decimal text (a JSON number: no sign, at most the currency's places,
// no exponent) as minor units of currency (payments/money).
func ParseAmount(currency, s string) (int64, error) {
	if !ValidCurrency(currency) {
		currency = DefaultCurrency // the currency field reports its own error
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("must not be negative")
	}
	a, err := money.Parse(money.Asset(currency), s)
	if err != nil {
		return 0, err
	}
	if a.Minor > maxAmount {
		return 0, fmt.Errorf("is too large")
	}
	return a.Minor, nil
}

// maxAmount bounds one amount so quantity x price and sums of lines stay far from overflow.
const maxAmount = 1 << 50

// FormatAmount prints minor units of currency as a decimal text with all its places.
func FormatAmount(currency string, v int64) string {
	return money.Format(money.Asset(currency), v)
}

// Percent returns pct (in PercentScale units) of amount, rounded half up to the minor unit.
func Percent(currency string, amount, pct int64) (int64, error) {
	if amount == 0 || pct == 0 {
		return 0, nil
	}
	rate, err := money.ParseRate(formatFixed(pct, 6)) // a fraction: 7.5% = 0.075000
	if err != nil {
		return 0, err
	}
	a, err := money.Convert(money.New(money.Asset(currency), amount), money.Asset(currency), rate, money.HalfUp)
	if err != nil {
		return 0, err
	}
	return a.Minor, nil
}

// ParsePercent reads a percentage with at most 4 decimal places, in PercentScale units.
func ParsePercent(s string) (int64, error) { return parseFixed(s, 4) }

// FormatPercent prints a percentage kept in PercentScale units, without trailing zeros.
func FormatPercent(v int64) string {
	s := formatFixed(v, 4)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatAdjustment prints an adjustment's value: a percentage or an amount of currency.
func FormatAdjustment(a Adjustment, currency string) string {
	switch a.Type {
	case AdjustPercentage:
		return FormatPercent(a.Value)
	case AdjustFixed:
		return FormatAmount(currency, a.Value)
	}
	return "0"
}

// parseFixed parses an unsigned decimal with at most places fractional digits into an
// integer scaled by 10^places. Exponents, signs and overflow are errors.
func parseFixed(s string, places int) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("must be a number")
	}
	if s[0] == '-' {
		return 0, fmt.Errorf("must not be negative")
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("must be a plain decimal number")
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > places {
		return 0, fmt.Errorf("must have at most %d decimal places", places)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("is too large")
	}
	scale := int64(math.Pow10(places))
	if w > math.MaxInt64/scale/1000 { // keep room for quantity x price and sums
		return 0, fmt.Errorf("is too large")
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", places-len(frac)), 10, 64)
	}
	return w*scale + f, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func formatFixed(v int64, places int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	scale := int64(math.Pow10(places))
	s := strconv.FormatInt(v/scale, 10)
	if places > 0 {
		f := strconv.FormatInt(v%scale, 10)
		s += "." + strings.Repeat("0", places-len(f)) + f
	}
	if neg {
		s = "-" + s
	}
	return s
}
