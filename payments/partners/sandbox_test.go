package partners_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"svc/payments/money"
	"svc/payments/partners"
	"svc/payments/providers"
)

const secret = "sandbox-secret-for-tests"

func header(sig string) func(string) string {
	h := http.Header{}
	if sig != "" {
		h.Set(partners.SandboxSignatureHeader, sig)
	}
	return h.Get
}

func TestSandboxBankVerifier(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	inbound := partners.SandboxInbound{Reference: "sbx_trf_1", BankCode: "999", AccountNumber: "0123456789", Amount: 500_050,
		Currency: "NGN", PaidAt: "2026-11-24T10:00:00.000Z", SenderName: "ADA", ShouldFlag: true}
	body, sig, err := partners.SandboxNotification(secret, "evt_1", partners.TypeInboundTransfer, at, inbound)
	if err != nil {
		t.Fatal(err)
	}
	v := partners.SandboxBankVerifier(secret)
	n, err := v.Verify(header(sig), body)
	if err != nil {
		t.Fatal(err)
	}
	want := providers.InboundTransfer{EventID: "evt_1", ProviderReference: "sbx_trf_1", BankCode: "999", AccountNumber: "0123456789",
		Amount: money.New(money.NGN, 500_050), PaidAt: at, SenderName: "ADA"}
	if n.EventID != "evt_1" || n.Inbound == nil || *n.Inbound != want || !n.Flag {
		t.Fatalf("parsed %+v %+v", n, n.Inbound)
	}

	payout, psig, _ := partners.SandboxNotification(secret, "evt_2", partners.TypePayoutFailed, at,
		partners.SandboxPayout{Reference: "transfer:x", ProviderReference: "sbx_po", Amount: 100, Currency: "NGN", FailureReason: "closed", At: stamp(at)})
	n, err = v.Verify(header(psig), payout)
	if err != nil || n.Payout == nil || n.Payout.Status != providers.PayoutFailed || n.Payout.FailureReason != "closed" || n.Payout.Amount != money.New(money.NGN, 100) {
		t.Fatalf("payout %+v %v", n.Payout, err)
	}

	cases := []struct {
		name string
		sig  string
		body string
		want error
	}{
		{"missing signature", "", string(body), partners.ErrBadSignature},
		{"wrong secret", partners.SandboxSign("other", body), string(body), partners.ErrBadSignature},
		{"body changed", sig, string(body) + " ", partners.ErrBadSignature},
		{"not hex", "sha256=zz", string(body), partners.ErrBadSignature},
		{"fractional amount", "", `{"id":"e","type":"inbound_transfer","data":{"bank_code":"999","account_number":"0123456789","amount":100.5,"currency":"NGN"}}`, partners.ErrMalformed},
		{"exponent", "", `{"id":"e","type":"inbound_transfer","data":{"bank_code":"999","account_number":"0123456789","amount":1e5,"currency":"NGN"}}`, partners.ErrMalformed},
		{"negative", "", `{"id":"e","type":"inbound_transfer","data":{"bank_code":"999","account_number":"0123456789","amount":-1,"currency":"NGN"}}`, partners.ErrMalformed},
		{"not NGN", "", `{"id":"e","type":"inbound_transfer","data":{"bank_code":"999","account_number":"0123456789","amount":1,"currency":"USD"}}`, partners.ErrMalformed},
		{"short account", "", `{"id":"e","type":"inbound_transfer","data":{"bank_code":"999","account_number":"123","amount":1,"currency":"NGN"}}`, partners.ErrMalformed},
		{"no id", "", `{"type":"inbound_transfer","data":{}}`, partners.ErrMalformed},
		{"trailing", "", `{"id":"e","type":"x","data":{}} {}`, partners.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sig := c.sig
			if sig == "" && c.want == partners.ErrMalformed {
				sig = partners.SandboxSign(secret, []byte(c.body))
			}
			_, err := v.Verify(header(sig), []byte(c.body))
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}

	other, osig, _ := partners.SandboxNotification(secret, "evt_3", "account.updated", at, map[string]any{})
	if n, err := v.Verify(header(osig), other); err != nil || n.Inbound != nil || n.Payout != nil || n.EventID != "evt_3" {
		t.Fatalf("unknown type: %+v %v", n, err)
	}
}

func TestSandboxCustodyVerifier(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	body, sig, _ := partners.SandboxNotification(secret, "dep_1", partners.TypeDepositConfirmed, at, partners.SandboxCrypto{
		Reference: "merchant:abc", Chain: "BASE", Asset: "USDT", Address: "0x52908400098527886e0f7030069857d2e4169ee7", Amount: 25_000_000, TxHash: "0xhash", ConfirmedAt: stamp(at)})
	n, err := partners.SandboxCustodyVerifier(secret).Verify(header(sig), body)
	if err != nil || n.Crypto == nil || n.Crypto.Amount != money.New(money.USDT, 25_000_000) || n.Crypto.Chain != "BASE" || n.Crypto.Reference != "merchant:abc" {
		t.Fatalf("%+v %v", n.Crypto, err)
	}
	bad, bsig, _ := partners.SandboxNotification(secret, "dep_2", partners.TypeDepositConfirmed, at, partners.SandboxCrypto{
		Reference: "merchant:abc", Chain: "base", Asset: "NGN", Address: "0xabc", Amount: 1, TxHash: "0xhash"})
	if _, err := partners.SandboxCustodyVerifier(secret).Verify(header(bsig), bad); !errors.Is(err, partners.ErrMalformed) {
		t.Fatalf("NGN by custody: %v", err)
	}
	// The bank's secret is the custody's too, but a bank body is not a custody deposit.
	if _, err := partners.SandboxCustodyVerifier("x").Verify(header(sig), body); !errors.Is(err, partners.ErrBadSignature) {
		t.Fatalf("wrong secret: %v", err)
	}
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func FuzzSandboxBankVerifier(f *testing.F) {
	f.Add([]byte(`{"id":"e","type":"inbound_transfer","data":{"bank_code":"999","account_number":"0123456789","amount":1,"currency":"NGN"}}`))
	f.Add([]byte(`{"id":"e","type":"payout.settled","data":{"reference":"payout:x","amount":"1","currency":"NGN"}}`))
	v := partners.SandboxBankVerifier(secret)
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := v.Verify(header(partners.SandboxSign(secret, body)), body)
		if err != nil {
			if !errors.Is(err, partners.ErrMalformed) {
				t.Fatalf("signed body: %v", err)
			}
			return
		}
		if n.Inbound != nil && !n.Inbound.Amount.IsPositive() {
			t.Fatalf("non-positive amount %+v", n.Inbound)
		}
	})
}
