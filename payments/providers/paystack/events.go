package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"svc/payments/money"
	"svc/payments/providers"
)

// SignatureHeader is the header of Paystack's notification signature.
const SignatureHeader = "X-Paystack-Signature"

// Notification errors. A caller answers ErrBadSignature (both of its forms) with 401 and
// does nothing else; ErrMalformedEvent is a body that was signed with our key but cannot be
// read (store it for audit and alert: Paystack would only send it again).
var (
	ErrBadSignature     = errors.New("paystack: notification signature is missing or wrong")
	ErrSignatureMissing = fmt.Errorf("%w: no %s header", ErrBadSignature, SignatureHeader)
	ErrSignatureInvalid = fmt.Errorf("%w: it does not match the body", ErrBadSignature)
	ErrMalformedEvent   = errors.New("paystack: malformed notification")
)

// Event types this package parses into values; every other type parses to an Event with
// neither Inbound nor Payout set (acknowledge it and move on).
const (
	EventChargeSuccess    = "charge.success"
	EventTransferSuccess  = "transfer.success"
	EventTransferFailed   = "transfer.failed"
	EventTransferReversed = "transfer.reversed"
	// Refund events (refund.pending, refund.processing, refund.processed, refund.failed,
	// refund.needs-attention) share this prefix.
	EventRefundPrefix = "refund."
)

// Event is one verified Paystack notification.
type Event struct {
	Type   string // e.g. "charge.success"
	ID     string // idempotency key: the type and Paystack's id of the object, "charge.success:302961"
	Domain string // "live" or "test", as Paystack says
	// Inbound is set for charge.success on a dedicated account (channel dedicated_nuban):
	// a bank transfer into one of our virtual accounts.
	Inbound *providers.InboundTransfer
	// Payout is set for transfer.success, transfer.failed and transfer.reversed.
	Payout *providers.PayoutOutcome
	// Identity is set for customeridentification.success and customeridentification.failed:
	// the answer to Identify.
	Identity *providers.IdentityOutcome
	// Refund is set for refund.*: a refund made by Refund changed state (ask Refund again).
	Refund *providers.RefundNotice
}

// VerifySignature checks that signature (the x-paystack-signature header: hex HMAC-SHA512
// of the raw body keyed with the secret key) matches body, in constant time.
//
// Errors: ErrSignatureMissing, ErrSignatureInvalid (both errors.Is ErrBadSignature).
func VerifySignature(secret, signature string, body []byte) error {
	signature = strings.TrimSpace(signature)
	if signature == "" {
		return ErrSignatureMissing
	}
	got, err := hex.DecodeString(signature)
	if err != nil || len(got) != sha512.Size || secret == "" {
		return ErrSignatureInvalid
	}
	if !hmac.Equal(got, Sign(secret, body)) {
		return ErrSignatureInvalid
	}
	return nil
}

// Sign returns the HMAC-SHA512 of body keyed with secret (hex-encode it for the header).
func Sign(secret string, body []byte) []byte {
	m := hmac.New(sha512.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// ParseEvent verifies a notification's signature and parses its body. bankCodes maps the
// bank names Paystack puts in charge.success (e.g. "Wema Bank") to our bank codes; use
// Client.ParseEvent, which knows them, where a Client is at hand.
//
// Errors: ErrBadSignature (ErrSignatureMissing, ErrSignatureInvalid): 401, nothing done;
// ErrMalformedEvent (wrapped, with the reason): signed but unreadable.
func ParseEvent(secret, signature string, body []byte) (Event, error) {
	return parseEvent(secret, signature, body, nil)
}

// ParseEvent is the package's ParseEvent with this client's secret key, mapping a dedicated
// account's bank to the code CreateVirtualAccount reported for it.
func (c *Client) ParseEvent(signature string, body []byte) (Event, error) {
	return parseEvent(c.cfg.SecretKey, signature, body, c.cfg.BankCodes)
}

// wireEvent is a notification body.
type wireEvent struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// wireCharge is charge.success's data (the fields we use).
type wireCharge struct {
	ID            json.Number `json:"id"`
	Domain        string      `json:"domain"`
	Status        string      `json:"status"`
	Reference     string      `json:"reference"`
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	Channel       string      `json:"channel"`
	PaidAt        string      `json:"paid_at"`
	CreatedAt     string      `json:"created_at"`
	Authorization struct {
		Channel                   string `json:"channel"`
		SenderBank                string `json:"sender_bank"`
		SenderBankAccountNumber   string `json:"sender_bank_account_number"`
		SenderName                string `json:"sender_name"`
		Narration                 string `json:"narration"`
		ReceiverBankAccountNumber string `json:"receiver_bank_account_number"`
		ReceiverBank              string `json:"receiver_bank"`
	} `json:"authorization"`
	Metadata json.RawMessage `json:"metadata"` // any JSON (Paystack sends objects, "", 0)
}

// wireTransfer is transfer.*'s data (the fields we use).
type wireTransfer struct {
	ID              json.Number     `json:"id"`
	Domain          string          `json:"domain"`
	Amount          json.Number     `json:"amount"`
	Currency        string          `json:"currency"`
	Reference       string          `json:"reference"`
	Status          string          `json:"status"`
	TransferCode    string          `json:"transfer_code"`
	TransferredAt   *string         `json:"transferred_at"`
	UpdatedAt       string          `json:"updated_at"`
	UpdatedAtCamel  string          `json:"updatedAt"`
	GatewayResponse *string         `json:"gateway_response"`
	Failures        json.RawMessage `json:"failures"`
}

// dedicatedBanks maps Paystack's DVA bank names to their slugs (for bankCodes, keyed by slug).
var dedicatedBanks = map[string]string{"wema bank": "wema-bank", "titan paystack": "titan-paystack", "test bank": "test-bank"}

func parseEvent(secret, signature string, body []byte, bankCodes map[string]string) (Event, error) {
	if err := VerifySignature(secret, signature, body); err != nil {
		return Event{}, err
	}
	var w wireEvent
	if err := providers.StrictJSON(body, &w); err != nil {
		return Event{}, malformed("body: %v", err)
	}
	if w.Event == "" {
		return Event{}, malformed("no event type")
	}
	ev := Event{Type: w.Event}
	switch w.Event {
	case EventChargeSuccess:
		var d wireCharge
		if err := providers.StrictJSON(w.Data, &d); err != nil {
			return Event{}, malformed("charge.success data: %v", err)
		}
		id, err := objectID(d.ID, d.Reference)
		if err != nil {
			return Event{}, err
		}
		ev.ID, ev.Domain = w.Event+":"+id, d.Domain
		if d.Channel != "dedicated_nuban" && d.Authorization.Channel != "dedicated_nuban" {
			return ev, nil // a card or other payment: not money into a virtual account
		}
		in, err := inbound(ev.ID, d, bankCodes)
		if err != nil {
			return Event{}, err
		}
		ev.Inbound = in
	case EventTransferSuccess, EventTransferFailed, EventTransferReversed:
		var d wireTransfer
		if err := providers.StrictJSON(w.Data, &d); err != nil {
			return Event{}, malformed("%s data: %v", w.Event, err)
		}
		id, err := objectID(d.ID, d.TransferCode)
		if err != nil {
			return Event{}, err
		}
		ev.ID, ev.Domain = w.Event+":"+id, d.Domain
		out, err := outcome(ev.ID, w.Event, d)
		if err != nil {
			return Event{}, err
		}
		ev.Payout = out
	case EventIdentificationSuccess, EventIdentificationFailed:
		id, out, err := identity(w.Event, w.Data)
		if err != nil {
			return Event{}, err
		}
		ev.ID, ev.Identity = id, out
	case EventRefundPrefix + "pending", EventRefundPrefix + "processing", EventRefundPrefix + "processed",
		EventRefundPrefix + "failed", EventRefundPrefix + "needs-attention":
		var d struct {
			TransactionReference json.RawMessage `json:"transaction_reference"` // a string (or a number)
		}
		if err := providers.StrictJSON(w.Data, &d); err != nil {
			return Event{}, malformed("%s data: %v", w.Event, err)
		}
		ref := strings.Trim(strings.TrimSpace(string(d.TransactionReference)), `"`)
		if ref == "" || ref == "null" || strings.ContainsAny(ref, `\/?#% `) {
			return Event{}, malformed("%s without a usable transaction_reference", w.Event)
		}
		ev.ID = w.Event + ":" + ref
		ev.Refund = &providers.RefundNotice{EventID: ev.ID, ProviderReference: ref,
			Status: strings.TrimPrefix(w.Event, EventRefundPrefix)}
	default:
		var d struct {
			ID json.Number `json:"id"`
		}
		_ = json.Unmarshal(w.Data, &d)
		ev.ID = w.Event
		if d.ID != "" {
			ev.ID += ":" + d.ID.String()
		}
	}
	return ev, nil
}

func inbound(eventID string, d wireCharge, bankCodes map[string]string) (*providers.InboundTransfer, error) {
	if !strings.EqualFold(d.Status, "success") {
		return nil, malformed("charge.success with status %q", d.Status)
	}
	amount, err := kobo(d.Amount, d.Currency)
	if err != nil {
		return nil, err
	}
	acct := d.Authorization.ReceiverBankAccountNumber
	bank := d.Authorization.ReceiverBank
	if acct == "" {
		var md struct {
			ReceiverAccountNumber string `json:"receiver_account_number"`
			ReceiverBank          string `json:"receiver_bank"`
		}
		if json.Unmarshal(d.Metadata, &md) == nil {
			acct = md.ReceiverAccountNumber
			if bank == "" {
				bank = md.ReceiverBank
			}
		}
	}
	if acct == "" || !digitsOnly(acct) {
		return nil, malformed("charge.success on a dedicated account without the receiving account number")
	}
	paid := d.PaidAt
	if paid == "" {
		paid = d.CreatedAt
	}
	at, err := parseTime(paid)
	if err != nil {
		return nil, malformed("charge.success paid_at %q: %v", paid, err)
	}
	code := bank
	if slug, ok := dedicatedBanks[strings.ToLower(bank)]; ok {
		code = slug
		if c, ok := bankCodes[slug]; ok {
			code = c
		}
	}
	return &providers.InboundTransfer{
		EventID: eventID, ProviderReference: d.Reference, BankCode: code, AccountNumber: acct,
		Amount: amount, PaidAt: at, SenderName: d.Authorization.SenderName, SenderBank: d.Authorization.SenderBank,
		SenderAccount: d.Authorization.SenderBankAccountNumber, Narration: d.Authorization.Narration,
	}, nil
}

func outcome(eventID, typ string, d wireTransfer) (*providers.PayoutOutcome, error) {
	amount, err := kobo(d.Amount, d.Currency)
	if err != nil {
		return nil, err
	}
	out := &providers.PayoutOutcome{EventID: eventID, ProviderReference: d.TransferCode, Amount: amount}
	if ref, err := DecodeReference(d.Reference); err == nil {
		out.Reference = ref
	}
	gateway := ""
	if d.GatewayResponse != nil {
		gateway = *d.GatewayResponse
	}
	switch typ {
	case EventTransferSuccess:
		out.Status = providers.PayoutSettled
	case EventTransferFailed:
		out.Status, out.FailureReason = providers.PayoutFailed, failureReason("failed", gateway)
	case EventTransferReversed:
		out.Status, out.FailureReason = providers.PayoutReversed, failureReason("reversed", gateway)
	}
	for _, s := range []string{d.UpdatedAt, d.UpdatedAtCamel, deref(d.TransferredAt)} {
		if s == "" {
			continue
		}
		at, err := parseTime(s)
		if err != nil {
			return nil, malformed("%s time %q: %v", typ, s, err)
		}
		out.At = at
		break
	}
	return out, nil
}

// kobo reads an amount: a JSON integer (or an integer in quotes), positive, in NGN. No
// floats: "100.5", "1e5", "100.00" and out-of-range numbers are refused.
func kobo(n json.Number, currency string) (money.Amount, error) {
	if !strings.EqualFold(currency, "NGN") {
		return money.Amount{}, malformed("currency %q (only NGN is handled)", currency)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v <= 0 {
		return money.Amount{}, malformed("amount %q must be a positive whole number of kobo", string(n))
	}
	return money.New(money.NGN, v), nil
}

// objectID is Paystack's id of the notification's object (numeric id, else the code).
func objectID(id json.Number, fallback string) (string, error) {
	if id != "" {
		if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
			return "", malformed("id %q is not an integer", string(id))
		}
		return string(id), nil
	}
	if fallback != "" {
		return fallback, nil
	}
	return "", malformed("no id")
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedEvent, fmt.Sprintf(format, args...))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Errors of VerifyInbound.
var (
	ErrChargeNotFound = errors.New("paystack: no charge under this reference")
	ErrChargeNotPaid  = errors.New("paystack: the charge is not successful")
)

// VerifyInbound asks Paystack for the charge behind an inbound transfer (GET
// /transaction/verify/{reference}, reference = InboundTransfer.ProviderReference) and
// returns it as Paystack holds it now, in the notification's shape (same EventID). The job
// that credits a deposit compares it with the notification before giving value, as Paystack
// advises: a notification is only a claim until the API confirms it.
//
// Errors: ErrChargeNotFound, ErrChargeNotPaid (wrapped, with Paystack's status),
// ErrMalformedEvent (the charge is not a readable NGN transfer into a dedicated account),
// *providers.UnavailableError.
func (c *Client) VerifyInbound(ctx context.Context, reference string) (providers.InboundTransfer, error) {
	if reference == "" || strings.ContainsAny(reference, "/?#%") {
		return providers.InboundTransfer{}, fmt.Errorf("%w: reference %q", ErrChargeNotFound, reference)
	}
	var raw json.RawMessage
	err := c.call(ctx, "verify transaction", "GET", "/transaction/verify/"+reference, nil, nil, &raw)
	if notFound(err) {
		return providers.InboundTransfer{}, fmt.Errorf("%w: %s", ErrChargeNotFound, reference)
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return providers.InboundTransfer{}, fmt.Errorf("paystack: verifying charge %s: %w", reference, err)
	}
	if err != nil {
		return providers.InboundTransfer{}, err
	}
	var d wireCharge
	if err := providers.StrictJSON(raw, &d); err != nil {
		return providers.InboundTransfer{}, malformed("verified charge: %v", err)
	}
	if !strings.EqualFold(d.Status, "success") {
		return providers.InboundTransfer{}, fmt.Errorf("%w: status %q", ErrChargeNotPaid, d.Status)
	}
	if d.Channel != "dedicated_nuban" && d.Authorization.Channel != "dedicated_nuban" {
		return providers.InboundTransfer{}, malformed("charge %s is a %s payment, not a transfer into a dedicated account", reference, d.Channel)
	}
	id, err := objectID(d.ID, d.Reference)
	if err != nil {
		return providers.InboundTransfer{}, err
	}
	in, err := inbound(EventChargeSuccess+":"+id, d, c.cfg.BankCodes)
	if err != nil {
		return providers.InboundTransfer{}, err
	}
	return *in, nil
}
