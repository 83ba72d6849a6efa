package partners

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"svc/payments/money"
	"svc/payments/providers"
)

// The sandbox partners' notification format (documented in docs/live.md). Both the sandbox
// bank and the sandbox custody post
//
//	{"id": "<event id>", "type": "<type>", "created_at": "<RFC 3339>", "data": {...}}
//
// signed with the sandbox secret: header X-Svc-Partner-Signature: sha256=<hex HMAC-SHA256
// of the raw body>. Amounts are integers in the asset's minor units (kobo, micro-USDT),
// never decimals. Types:
//
//	sandbox-bank    inbound_transfer  data {reference, bank_code, account_number, amount, currency,
//	                                        paid_at, sender_name?, sender_bank?, sender_account?,
//	                                        narration?, should_flag?}
//	sandbox-bank    payout.settled | payout.failed | payout.reversed
//	                                  data {reference, provider_reference, amount, currency,
//	                                        failure_reason?, at}
//	sandbox-custody deposit.confirmed data {reference, chain, asset, address, amount, tx_hash,
//	                                        confirmed_at}
//
// reference is ours: the PayoutRequest.Reference of a payout, the AddressRequest.Reference
// a deposit address was issued under (merchant:<id>, customer:<id>:<asset>, offramp:<id>).

// SandboxSignatureHeader carries the sandbox partners' signature.
const SandboxSignatureHeader = "X-Svc-Partner-Signature"

// Sandbox notification types.
const (
	TypeInboundTransfer  = "inbound_transfer"
	TypePayoutSettled    = "payout.settled"
	TypePayoutFailed     = "payout.failed"
	TypePayoutReversed   = "payout.reversed"
	TypeDepositConfirmed = "deposit.confirmed"
)

// SandboxSign returns the X-Svc-Partner-Signature value of body under secret.
func SandboxSign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func sandboxVerify(secret, signature string, body []byte) error {
	sig, ok := strings.CutPrefix(strings.TrimSpace(signature), "sha256=")
	if !ok || secret == "" {
		return ErrBadSignature
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return ErrBadSignature
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

// SandboxEvent is a sandbox notification body.
type SandboxEvent struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	Data      any    `json:"data"`
}

// SandboxInbound is inbound_transfer's data.
type SandboxInbound struct {
	Reference     string `json:"reference"`
	BankCode      string `json:"bank_code"`
	AccountNumber string `json:"account_number"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
	PaidAt        string `json:"paid_at"`
	SenderName    string `json:"sender_name,omitempty"`
	SenderBank    string `json:"sender_bank,omitempty"`
	SenderAccount string `json:"sender_account,omitempty"`
	Narration     string `json:"narration,omitempty"`
	ShouldFlag    bool   `json:"should_flag,omitempty"`
}

// SandboxPayout is payout.*'s data.
type SandboxPayout struct {
	Reference         string `json:"reference"`
	ProviderReference string `json:"provider_reference"`
	Amount            int64  `json:"amount"`
	Currency          string `json:"currency"`
	FailureReason     string `json:"failure_reason,omitempty"`
	At                string `json:"at"`
}

// SandboxCrypto is deposit.confirmed's data.
type SandboxCrypto struct {
	Reference   string `json:"reference"`
	Chain       string `json:"chain"`
	Asset       string `json:"asset"`
	Address     string `json:"address"`
	Amount      int64  `json:"amount"`
	TxHash      string `json:"tx_hash"`
	ConfirmedAt string `json:"confirmed_at"`
}

// SandboxNotification returns a signed sandbox notification: its body and signature.
func SandboxNotification(secret, id, typ string, at time.Time, data any) (body []byte, signature string, err error) {
	body, err = json.Marshal(SandboxEvent{ID: id, Type: typ, CreatedAt: stamp(at), Data: data})
	if err != nil {
		return nil, "", err
	}
	return body, SandboxSign(secret, body), nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// wireSandbox is a sandbox body as read (numbers kept exact).
type wireSandbox struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// SandboxBankVerifier verifies and parses the sandbox bank's notifications.
func SandboxBankVerifier(secret string) Verifier {
	return sandboxVerifier(secret, func(w wireSandbox, n *Notification) error {
		switch w.Type {
		case TypeInboundTransfer:
			var d struct {
				SandboxInbound
				Amount json.Number `json:"amount"`
			}
			if err := providers.StrictJSON(w.Data, &d); err != nil {
				return malformed("inbound_transfer data: %v", err)
			}
			amt, err := minor(d.Amount, d.Currency, money.NGN)
			if err != nil {
				return err
			}
			if len(d.AccountNumber) != 10 || strings.Trim(d.AccountNumber, "0123456789") != "" || d.BankCode == "" {
				return malformed("inbound_transfer needs bank_code and a 10-digit account_number")
			}
			at, err := when(d.PaidAt)
			if err != nil {
				return err
			}
			n.Inbound = &providers.InboundTransfer{EventID: w.ID, ProviderReference: d.Reference, BankCode: d.BankCode,
				AccountNumber: d.AccountNumber, Amount: amt, PaidAt: at, SenderName: d.SenderName, SenderBank: d.SenderBank,
				SenderAccount: d.SenderAccount, Narration: d.Narration}
			n.Flag = d.ShouldFlag
		case TypePayoutSettled, TypePayoutFailed, TypePayoutReversed:
			var d struct {
				SandboxPayout
				Amount json.Number `json:"amount"`
			}
			if err := providers.StrictJSON(w.Data, &d); err != nil {
				return malformed("%s data: %v", w.Type, err)
			}
			amt, err := minor(d.Amount, d.Currency, "")
			if err != nil {
				return err
			}
			at, err := when(d.At)
			if err != nil {
				return err
			}
			status := map[string]string{TypePayoutSettled: providers.PayoutSettled, TypePayoutFailed: providers.PayoutFailed,
				TypePayoutReversed: providers.PayoutReversed}[w.Type]
			n.Payout = &providers.PayoutOutcome{EventID: w.ID, Reference: d.Reference, ProviderReference: d.ProviderReference,
				Status: status, Amount: amt, FailureReason: d.FailureReason, At: at}
		}
		return nil
	})
}

// SandboxCustodyVerifier verifies and parses the sandbox custodian's notifications.
func SandboxCustodyVerifier(secret string) Verifier {
	return sandboxVerifier(secret, func(w wireSandbox, n *Notification) error {
		if w.Type != TypeDepositConfirmed {
			return nil
		}
		var d struct {
			SandboxCrypto
			Amount json.Number `json:"amount"`
		}
		if err := providers.StrictJSON(w.Data, &d); err != nil {
			return malformed("deposit.confirmed data: %v", err)
		}
		asset := money.Asset(d.Asset)
		if asset != money.USDT && asset != money.USDC {
			return malformed("deposit.confirmed asset %q (USDT or USDC)", d.Asset)
		}
		amt, err := minor(d.Amount, d.Asset, asset)
		if err != nil {
			return err
		}
		if d.Reference == "" || d.Address == "" || d.Chain == "" || d.TxHash == "" {
			return malformed("deposit.confirmed needs reference, chain, address and tx_hash")
		}
		if err := providers.ValidateAddress(providers.Chain(d.Chain), d.Address); err != nil {
			return malformed("deposit.confirmed: %v", err)
		}
		at, err := when(d.ConfirmedAt)
		if err != nil {
			return err
		}
		n.Crypto = &CryptoDeposit{Reference: d.Reference, Chain: providers.Chain(d.Chain), Address: d.Address, Amount: amt,
			TxHash: d.TxHash, ConfirmedAt: at}
		return nil
	})
}

// sandboxVerifier verifies a sandbox partner's envelope and lets parse fill the
// notification from it (the two sandbox partners' verifiers).
func sandboxVerifier(secret string, parse func(w wireSandbox, n *Notification) error) Verifier {
	return VerifierFunc(func(header func(string) string, body []byte) (Notification, error) {
		w, err := sandboxEnvelope(secret, header, body)
		if err != nil {
			return Notification{}, err
		}
		n := Notification{EventID: w.ID, Type: w.Type}
		if err := parse(w, &n); err != nil {
			return Notification{}, err
		}
		return n, nil
	})
}

func sandboxEnvelope(secret string, header func(string) string, body []byte) (wireSandbox, error) {
	if err := sandboxVerify(secret, header(SandboxSignatureHeader), body); err != nil {
		return wireSandbox{}, err
	}
	var w wireSandbox
	if err := providers.StrictJSON(body, &w); err != nil {
		return wireSandbox{}, malformed("body: %v", err)
	}
	if w.ID == "" || len(w.ID) > 200 || w.Type == "" {
		return wireSandbox{}, malformed("id (at most 200 characters) and type are required")
	}
	return w, nil
}

// minor reads an amount in minor units: a JSON integer, positive; currency must be want
// (any known asset when want is "").
func minor(n json.Number, currency string, want money.Asset) (money.Amount, error) {
	asset := money.Asset(strings.ToUpper(currency))
	if want != "" && asset != want {
		return money.Amount{}, malformed("currency %q, want %s", currency, want)
	}
	switch asset {
	case money.NGN, money.USD, money.USDT, money.USDC:
	default:
		return money.Amount{}, malformed("currency %q", currency)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v <= 0 {
		return money.Amount{}, malformed("amount %q must be a positive whole number of minor units", string(n))
	}
	return money.New(asset, v), nil
}

func when(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, malformed("time %q: %v", s, err)
	}
	return t.UTC(), nil
}
