package recipients

import "testing"

func TestValidIBAN(t *testing.T) {
	for iban, want := range map[string]bool{
		"GB82WEST12345698765432":      true,
		"DE89370400440532013000":      true,
		"NL91ABNA0417164300":          true,
		"FR1420041010050500013M02606": true,
		"GB82WEST12345698765433":      false, // checksum
		"GB82 WEST 1234 5698 7654 32": false, // spaces
		"gb82west12345698765432":      false, // lower case
		"1282WEST12345698765432":      false, // country not letters
		"GBXXWEST12345698765432":      false, // check digits not digits
		"GB82WEST":                    false, // too short
		"":                            false,
	} {
		if got := ValidIBAN(iban); got != want {
			t.Errorf("ValidIBAN(%q) = %v", iban, got)
		}
	}
}

func TestValidRoutingNumberBICAndCountry(t *testing.T) {
	for s, want := range map[string]bool{"021000021": true, "011000015": true, "021000022": false, "02100002": false, "02100002a": false} {
		if ValidRoutingNumber(s) != want {
			t.Errorf("routing %q", s)
		}
	}
	for s, want := range map[string]bool{"DEUTDEFF": true, "NWBKGB2L": true, "DEUTDEFF500": true, "DEUTDEF": false, "deutdeff": false, "DEU1DEFF": false, "DEUTDEFF5": false} {
		if ValidBIC(s) != want {
			t.Errorf("bic %q", s)
		}
	}
	for s, want := range map[string]bool{"NGA": true, "USA": true, "GBR": true, "DEU": true, "NG": false, "nga": false, "XXX": false, "ZZZ": false, "EUR": false, "001": false} {
		if ValidCountry(s) != want {
			t.Errorf("country %q", s)
		}
	}
}

type fields []string

func (f *fields) Add(field, _ string) { *f = append(*f, field) }

func TestDetailsRejectAnotherTypesObject(t *testing.T) {
	var f fields
	d := Details{BankAccount: &Bank{AccountNumber: "0123456789", BankCode: "058"}, CryptoAddress: &Crypto{}}
	d.Validate(&f, "destination", BankAccount)
	if len(f) != 1 || f[0] != "destination.crypto_address" {
		t.Fatal(f)
	}
}
