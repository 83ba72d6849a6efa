package money

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"svc/payments"
)

// ParseError says why a decimal string is not an amount of an asset. Its message is a phrase
// fit for a field error ("must have at most 2 decimal places"); Field turns it into one.
type ParseError struct {
	Input  string
	Asset  Asset
	Reason string
}

func (e *ParseError) Error() string { return e.Reason }

// Field returns the error as a validation error of a request field: it implements the
// gateway's FieldCoded interface (APIField), so api.Fail answers 400 VALIDATION_ERROR with
// {field, message}.
func (e *ParseError) Field(name string) error {
	return &payments.FieldError{Field: name, Message: e.Reason}
}

// AsField returns err as a *payments.FieldError of field name when it is a *ParseError, else err.
func AsField(err error, name string) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe.Field(name)
	}
	return err
}

// Parse reads a decimal string as an amount of asset. Accepted: an optional leading '-',
// digits, and optionally '.' followed by at least one and at most Places(asset) digits.
// Refused (with a *ParseError): empty strings, '+', spaces, exponents, a bare or trailing
// '.', more places than the asset has, and values beyond int64 minor units.
func Parse(asset Asset, s string) (Amount, error) {
	places := asset.Places()
	if places == 0 {
		return Amount{}, &ParseError{s, asset, fmt.Sprintf("unknown asset %q", string(asset))}
	}
	neg := false
	body := s
	if len(body) > 0 && body[0] == '-' {
		neg = true
		body = body[1:]
	}
	intPart, frac, err := splitDecimal(body)
	if err != nil {
		return Amount{}, &ParseError{s, asset, "must be a decimal string such as \"10.50\""}
	}
	if len(frac) > places {
		return Amount{}, &ParseError{s, asset, fmt.Sprintf("must have at most %d decimal places for %s", places, asset)}
	}
	var u uint64
	for _, c := range intPart {
		u, err = mulAdd(u, 10, uint64(c-'0'))
		if err != nil {
			return Amount{}, &ParseError{s, asset, "is too large"}
		}
	}
	for i := 0; i < places; i++ {
		d := uint64(0)
		if i < len(frac) {
			d = uint64(frac[i] - '0')
		}
		u, err = mulAdd(u, 10, d)
		if err != nil {
			return Amount{}, &ParseError{s, asset, "is too large"}
		}
	}
	if u > math.MaxInt64 {
		return Amount{}, &ParseError{s, asset, "is too large"}
	}
	m := int64(u)
	if neg {
		m = -m
	}
	return Amount{asset, m}, nil
}

// ParsePositive is Parse that also requires the amount to be above zero.
func ParsePositive(asset Asset, s string) (Amount, error) {
	a, err := Parse(asset, s)
	if err != nil {
		return a, err
	}
	if a.Minor <= 0 {
		return Amount{}, &ParseError{s, asset, "must be greater than 0"}
	}
	return a, nil
}

// MustParse is Parse for constants; it panics on a bad literal.
func MustParse(asset Asset, s string) Amount {
	a, err := Parse(asset, s)
	if err != nil {
		panic(fmt.Sprintf("money.MustParse(%s, %q): %v", asset, s, err))
	}
	return a
}

var errSyntax = errors.New("syntax")

// splitDecimal splits an unsigned decimal "123.45" into "123" and "45"; "123" gives "123",
// "". It refuses anything else (sign, exponent, spaces, "", ".", "1.", ".5").
func splitDecimal(s string) (intPart, frac string, err error) {
	if s == "" {
		return "", "", errSyntax
	}
	dot := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0:
			dot = i
		default:
			return "", "", errSyntax
		}
	}
	if dot < 0 {
		return s, "", nil
	}
	if dot == 0 || dot == len(s)-1 {
		return "", "", errSyntax
	}
	return s[:dot], s[dot+1:], nil
}

func mulAdd(u, m, d uint64) (uint64, error) {
	if u > (math.MaxUint64-d)/m {
		return 0, strconv.ErrRange
	}
	return u*m + d, nil
}
