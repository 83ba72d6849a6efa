package engine

import "strconv"

// DecimalReason says why a decimal string or a fixed-point value was refused.
// The gateway turns a *DecimalError into a field error naming the field it parsed.
type DecimalReason uint8

// Reasons a decimal is refused.
const (
	ReasonEmpty           DecimalReason = iota + 1 // the string is empty
	ReasonSyntax                                   // not digits with at most one inner '.'
	ReasonNegative                                 // a leading '-'
	ReasonZero                                     // the value is zero
	ReasonExponent                                 // scientific notation such as 1e3
	ReasonTooManyDecimals                          // more fractional digits than the precision
	ReasonOverflow                                 // does not fit the int64 fixed-point range
	ReasonNotOnTick                                // price is not a multiple of the pair's tick size
	ReasonNotOnStep                                // quantity is not a multiple of the pair's step size
	ReasonBelowMinimum                             // quantity below the pair's minimum quantity
)

var decimalReasonNames = [...]string{
	ReasonEmpty:           "empty",
	ReasonSyntax:          "not a decimal number",
	ReasonNegative:        "negative",
	ReasonZero:            "zero",
	ReasonExponent:        "exponent not allowed",
	ReasonTooManyDecimals: "too many decimal places",
	ReasonOverflow:        "too large",
	ReasonNotOnTick:       "not a multiple of the tick size",
	ReasonNotOnStep:       "not a multiple of the step size",
	ReasonBelowMinimum:    "below the minimum",
}

func (r DecimalReason) String() string {
	if int(r) < len(decimalReasonNames) && decimalReasonNames[r] != "" {
		return decimalReasonNames[r]
	}
	return "DecimalReason(" + strconv.Itoa(int(r)) + ")"
}

// DecimalError is returned by every parser in this package.
type DecimalError struct {
	Reason   DecimalReason
	Decimals int // the precision the value was parsed at
}

func (e *DecimalError) Error() string {
	return "engine: invalid decimal: " + e.Reason.String()
}

// Is reports whether target is a *DecimalError with the same Reason, so callers can
// write errors.Is(err, &engine.DecimalError{Reason: engine.ReasonZero}).
func (e *DecimalError) Is(target error) bool {
	t, ok := target.(*DecimalError)
	return ok && t.Reason == e.Reason
}

// pow10 holds 10^0 .. 10^18, every power of ten that fits an int64.
var pow10 = [19]int64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
}

const maxDecimals = 18

// ParseDecimal parses a strictly positive decimal string ("1500", "1500.25") into an int64
// scaled by 10^decimals: ParseDecimal("1500.25", 2) == 150025. It refuses an empty string,
// signs, exponents, a leading or trailing '.', more than decimals fractional digits,
// zero, and values beyond int64. It never allocates on success.
func ParseDecimal(s string, decimals int) (int64, error) {
	if decimals < 0 || decimals > maxDecimals {
		return 0, &DecimalError{Reason: ReasonOverflow, Decimals: decimals}
	}
	if len(s) == 0 {
		return 0, &DecimalError{Reason: ReasonEmpty, Decimals: decimals}
	}
	switch s[0] {
	case '-':
		return 0, &DecimalError{Reason: ReasonNegative, Decimals: decimals}
	case '+':
		return 0, &DecimalError{Reason: ReasonSyntax, Decimals: decimals}
	}
	var (
		v       uint64
		frac    = -1 // number of fractional digits seen; -1 before the '.'
		digits  int
		overflw bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if frac >= 0 {
				frac++
				if frac > decimals {
					// keep scanning: an exponent later is the better message
					continue
				}
			}
			if v > (1<<63-1)/10 {
				overflw = true
				continue
			}
			v = v*10 + uint64(c-'0')
			if v > 1<<63-1 {
				overflw = true
			}
		case c == '.':
			if frac >= 0 || digits == 0 || i == len(s)-1 {
				return 0, &DecimalError{Reason: ReasonSyntax, Decimals: decimals}
			}
			frac = 0
		case c == 'e' || c == 'E':
			return 0, &DecimalError{Reason: ReasonExponent, Decimals: decimals}
		default:
			return 0, &DecimalError{Reason: ReasonSyntax, Decimals: decimals}
		}
	}
	if frac > decimals {
		return 0, &DecimalError{Reason: ReasonTooManyDecimals, Decimals: decimals}
	}
	if overflw {
		return 0, &DecimalError{Reason: ReasonOverflow, Decimals: decimals}
	}
	if frac < 0 {
		frac = 0
	}
	scale := pow10[decimals-frac]
	if v > uint64((1<<63-1)/scale) {
		return 0, &DecimalError{Reason: ReasonOverflow, Decimals: decimals}
	}
	r := int64(v) * scale
	if r == 0 {
		return 0, &DecimalError{Reason: ReasonZero, Decimals: decimals}
	}
	return r, nil
}

// AppendDecimal appends v / 10^decimals to dst with exactly decimals fractional digits
// ("1500.25", "-0.01", "7.000000").
func AppendDecimal(dst []byte, v int64, decimals int) []byte {
	u := uint64(v)
	if v < 0 {
		dst = append(dst, '-')
		u = uint64(-v) // correct for MinInt64 too, as an unsigned magnitude
	}
	var buf [24]byte
	i := len(buf)
	for n := 0; n < decimals || u > 0 || n <= decimals; n++ {
		if n == decimals && decimals > 0 {
			i--
			buf[i] = '.'
		}
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if n >= decimals && u == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}

// FormatDecimal is AppendDecimal to a new string.
func FormatDecimal(v int64, decimals int) string {
	var b [32]byte
	return string(AppendDecimal(b[:0], v, decimals))
}
