package providers

import "errors"

// NUBAN account numbers (DESIGN.md section 6): a 9-digit serial and the CBN check digit
// computed over the partner bank's 3-digit code and the serial, with weights
// 3,7,3,3,7,3,3,7,3,3,7,3 and check = (10 - sum mod 10) mod 10.

var nubanWeights = [12]int{3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3}

// ErrNUBAN is a bank code or serial of the wrong shape.
var ErrNUBAN = errors.New("providers: bank code must be 3 digits and serial 9 digits")

// NUBANCheckDigit returns the check digit of serial at bankCode.
func NUBANCheckDigit(bankCode, serial string) (byte, error) {
	if len(bankCode) != 3 || len(serial) != 9 || !digits(bankCode) || !digits(serial) {
		return 0, ErrNUBAN
	}
	s := bankCode + serial
	sum := 0
	for i := 0; i < 12; i++ {
		sum += int(s[i]-'0') * nubanWeights[i]
	}
	return byte('0' + (10-sum%10)%10), nil
}

// NUBAN returns the 10-digit account number of serial at bankCode.
func NUBAN(bankCode, serial string) (string, error) {
	c, err := NUBANCheckDigit(bankCode, serial)
	if err != nil {
		return "", err
	}
	return serial + string(c), nil
}

// ValidNUBAN reports whether account is a valid 10-digit NUBAN at bankCode.
func ValidNUBAN(bankCode, account string) bool {
	if len(account) != 10 {
		return false
	}
	c, err := NUBANCheckDigit(bankCode, account[:9])
	return err == nil && c == account[9]
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
