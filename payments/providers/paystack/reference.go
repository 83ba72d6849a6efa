package paystack

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Paystack transfer references hold lowercase letters, digits, '-' and '_' only, 16 to 50 of
// them. Ours are like "payout:0190d5e4-...". EncodeReference maps ours onto Paystack's
// alphabet reversibly, so a transfer notification names our payout again (DecodeReference):
//
//	a-z 0-9 '-'   themselves
//	':'           "__"
//	'_'           "_u"
//	any other     '_' and two lowercase hex digits ("A" -> "_41")
//
// "payout:0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88" becomes
// "payout__0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88" (44 characters).

// ErrReference is a reference that cannot be a Paystack transfer reference (too short or too
// long once encoded), or a Paystack reference that is not an encoding of ours.
var ErrReference = errors.New("paystack: reference cannot be mapped")

const (
	minTransferRef = 16
	maxTransferRef = 50
)

// encode maps s onto Paystack's reference alphabet (no length rule).
func encode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		case c == ':':
			b.WriteString("__")
		case c == '_':
			b.WriteString("_u")
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// EncodeReference returns the Paystack transfer reference of our reference.
func EncodeReference(ref string) (string, error) {
	if !utf8.ValidString(ref) {
		return "", fmt.Errorf("%w: %q is not UTF-8", ErrReference, ref)
	}
	e := encode(ref)
	if len(e) < minTransferRef || len(e) > maxTransferRef {
		return "", fmt.Errorf("%w: %q is %d characters once encoded (Paystack takes %d to %d)", ErrReference, ref, len(e), minTransferRef, maxTransferRef)
	}
	return e, nil
}

// DecodeReference returns our reference from a Paystack transfer reference made by
// EncodeReference; ErrReference for any other (a transfer made outside this adapter).
func DecodeReference(p string) (string, error) {
	if len(p) < minTransferRef || len(p) > maxTransferRef {
		return "", ErrReference
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		case c == '_' && i+1 < len(p) && p[i+1] == '_':
			b.WriteByte(':')
			i++
		case c == '_' && i+1 < len(p) && p[i+1] == 'u':
			b.WriteByte('_')
			i++
		case c == '_' && i+2 < len(p) && hexDigit(p[i+1]) && hexDigit(p[i+2]):
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			if v >= 'a' && v <= 'z' || v >= '0' && v <= '9' || v == '-' || v == ':' || v == '_' {
				return "", ErrReference // never encoded this way: not ours
			}
			b.WriteByte(v)
			i += 2
		default:
			return "", ErrReference
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", ErrReference
	}
	return b.String(), nil
}

func hexDigit(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}
