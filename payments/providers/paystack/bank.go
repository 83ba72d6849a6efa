package paystack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"svc/payments/money"
	"svc/payments/providers"
)

// customer is Paystack's customer object (the fields we use).
type customer struct {
	ID                int64              `json:"id"`
	CustomerCode      string             `json:"customer_code"`
	Email             string             `json:"email"`
	FirstName         string             `json:"first_name"`
	LastName          string             `json:"last_name"`
	Phone             string             `json:"phone"`
	DedicatedAccount  *dedicatedAccount  `json:"dedicated_account"`
	DedicatedAccounts []dedicatedAccount `json:"dedicated_accounts"`
}

// dedicatedAccount is Paystack's dedicated virtual account object.
type dedicatedAccount struct {
	ID            int64  `json:"id"`
	AccountName   string `json:"account_name"`
	AccountNumber string `json:"account_number"`
	Currency      string `json:"currency"`
	Active        bool   `json:"active"`
	Assigned      bool   `json:"assigned"`
	Bank          struct {
		Name string `json:"name"`
		ID   int64  `json:"id"`
		Slug string `json:"slug"`
	} `json:"bank"`
	Customer *struct {
		CustomerCode string `json:"customer_code"`
	} `json:"customer"`
}

// transfer is Paystack's transfer object (initiate and verify answers).
type transfer struct {
	ID              int64           `json:"id"`
	Amount          int64           `json:"amount"`
	Currency        string          `json:"currency"`
	Reference       string          `json:"reference"`
	Status          string          `json:"status"`
	TransferCode    string          `json:"transfer_code"`
	GatewayResponse string          `json:"gateway_response"`
	Failures        json.RawMessage `json:"failures"`
}

// CreateVirtualAccount implements providers.Bank with a Paystack dedicated virtual account
// (see the package doc). Paystack accounts are permanent: a TEMPORARY request's Amount and
// ExpiresAt are enforced by the onramp, not by the bank.
//
// Errors: *providers.UnavailableError when Paystack is down, slow, or refuses the request
// (its message in Reason); nothing is written on our side, and asking again with the same
// Reference and Attempt finds what an earlier call created.
func (c *Client) CreateVirtualAccount(ctx context.Context, req providers.VirtualAccountRequest) (providers.VirtualAccount, error) {
	if req.Reference == "" {
		return providers.VirtualAccount{}, errors.New("paystack: a virtual account needs a reference")
	}
	first, last := splitName(req.AccountName)
	email := c.customerEmail(req.Reference, req.Attempt)
	var cust customer
	err := c.call(ctx, "fetch customer", "GET", "/customer/"+email, nil, nil, &cust)
	if notFound(err) {
		body := map[string]any{"email": email, "first_name": first, "last_name": last, "phone": c.cfg.Phone,
			"metadata": map[string]string{"svc_reference": req.Reference, "svc_attempt": strconv.Itoa(req.Attempt)}}
		err = c.call(ctx, "create customer", "POST", "/customer", nil, body, &cust)
	}
	if err != nil {
		return providers.VirtualAccount{}, c.refused("virtual account", err)
	}
	if cust.CustomerCode == "" {
		return providers.VirtualAccount{}, c.down("fetch customer", "the answer has no customer_code")
	}
	if da := c.activeAccount(cust); da != nil {
		return c.account(*da, cust)
	}
	body := map[string]any{"customer": cust.CustomerCode, "preferred_bank": c.cfg.PreferredBank,
		"first_name": first, "last_name": last, "phone": c.cfg.Phone}
	var da dedicatedAccount
	if err := c.call(ctx, "create dedicated account", "POST", "/dedicated_account", nil, body, &da); err != nil {
		// An attempt whose answer was lost may have issued the account (a retry of the POST
		// is then refused): look again before giving up.
		var again customer
		if ferr := c.call(ctx, "fetch customer", "GET", "/customer/"+email, nil, nil, &again); ferr == nil {
			if da := c.activeAccount(again); da != nil {
				return c.account(*da, again)
			}
		}
		return providers.VirtualAccount{}, c.refused("virtual account", err)
	}
	return c.account(da, cust)
}

// activeAccount is the customer's active dedicated account at the preferred bank, if any.
func (c *Client) activeAccount(cust customer) *dedicatedAccount {
	all := cust.DedicatedAccounts
	if cust.DedicatedAccount != nil {
		all = append([]dedicatedAccount{*cust.DedicatedAccount}, all...)
	}
	for i := range all {
		if all[i].Active && all[i].AccountNumber != "" && all[i].Bank.Slug == c.cfg.PreferredBank {
			return &all[i]
		}
	}
	return nil
}

func (c *Client) account(da dedicatedAccount, cust customer) (providers.VirtualAccount, error) {
	if da.AccountNumber == "" || !digitsOnly(da.AccountNumber) {
		return providers.VirtualAccount{}, c.down("create dedicated account", fmt.Sprintf("the answer has no usable account number (%q)", da.AccountNumber))
	}
	if da.Currency != "" && da.Currency != "NGN" {
		return providers.VirtualAccount{}, c.down("create dedicated account", "the account is not in NGN but "+da.Currency)
	}
	code, ok := c.cfg.BankCodes[da.Bank.Slug]
	if !ok {
		code = da.Bank.Slug
	}
	return providers.VirtualAccount{
		BankCode: code, BankName: da.Bank.Name, AccountNumber: da.AccountNumber,
		AccountName: da.AccountName, ProviderReference: cust.CustomerCode,
	}, nil
}

// customerEmail is the email of the Paystack customer holding reference's account at
// attempt: derived, so every retry finds the same customer.
func (c *Client) customerEmail(ref string, attempt int) string {
	local := encode(ref)
	if len(local) > 48 {
		h := sha256.Sum256([]byte(ref))
		local = "ref-" + hex.EncodeToString(h[:16])
	}
	if attempt > 0 {
		local += "+a" + strconv.Itoa(attempt)
	}
	return local + "@" + c.cfg.CustomerEmailDomain
}

// refused turns Paystack's refusal of a synchronous call into the 503 the caller answers
// (the request cannot succeed now; nothing was written).
func (c *Client) refused(op string, err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		c.log.Warn("paystack refused a request", "op", ae.Op, "status", ae.HTTPStatus, "message", ae.Message)
		return &providers.UnavailableError{Provider: "bank", Operation: "paystack " + op, Reason: "the partner refused the request: " + ae.Error()}
	}
	return err
}

// ErrAccountNotResolved: the bank does not know the account (or Paystack could not ask it).
var ErrAccountNotResolved = errors.New("paystack: the account could not be resolved")

// ResolveAccount returns the name the bank holds for accountNumber at bankCode (GET
// /bank/resolve).
//
// Errors: ErrAccountNotResolved (wrapping Paystack's message), *providers.UnavailableError.
func (c *Client) ResolveAccount(ctx context.Context, bankCode, accountNumber string) (string, error) {
	var out struct {
		AccountNumber string `json:"account_number"`
		AccountName   string `json:"account_name"`
	}
	q := url.Values{"account_number": {accountNumber}, "bank_code": {bankCode}}
	err := c.call(ctx, "resolve account", "GET", "/bank/resolve", q, nil, &out)
	var ae *APIError
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d", ae.HTTPStatus)
		}
		return "", fmt.Errorf("%w: %s", ErrAccountNotResolved, msg)
	}
	if err != nil {
		return "", err
	}
	if out.AccountName == "" {
		return "", fmt.Errorf("%w: the bank returned no account name", ErrAccountNotResolved)
	}
	return out.AccountName, nil
}

// Capabilities declares what Paystack pays: NGN, on the NGN rail (its transfers API pays
// Nigerian bank accounts only), so a live US or SWIFT transfer is refused at creation
// (providers.Can) instead of debited and failed by Payout.
func (c *Client) Capabilities() providers.Capabilities {
	return providers.Capabilities{Rails: []string{providers.RailNGN}, Assets: []money.Asset{money.NGN}}
}

var _ providers.Capable = (*Client)(nil)

// Payout implements providers.Bank on the NGN rail (see the package doc): a transfer from
// the Paystack balance, idempotent by req.Reference (sent as EncodeReference of it).
// PayoutSettled when Paystack says success; PayoutFailed when the account does not resolve,
// the recipient or transfer is refused, or the transfer ended failed, reversed, abandoned,
// blocked or rejected; PayoutSubmitted otherwise (pending, otp, received, ...): ask again
// later, or wait for transfer.success / transfer.failed / transfer.reversed.
//
// Errors (the outcome is unknown or the call cannot be made now; retry with the same
// Reference): *providers.UnavailableError; Paystack refusing a transfer for want of balance
// (*APIError, wrapped); a transfer found under the reference for another amount (never
// treated as this payout); a reference that cannot be encoded (ErrReference).
func (c *Client) Payout(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	if req.Rail != "" && req.Rail != providers.RailNGN {
		return providers.PayoutResult{Status: providers.PayoutFailed,
			FailureReason: "the bank partner (Paystack) pays out on the NGN rail only, not " + req.Rail}, nil
	}
	if req.Amount.Asset != money.NGN || !req.Amount.IsPositive() {
		return providers.PayoutResult{}, fmt.Errorf("paystack: a payout must be a positive NGN amount, not %s %s", req.Amount.Asset, req.Amount)
	}
	ref, err := EncodeReference(req.Reference)
	if err != nil {
		return providers.PayoutResult{}, err
	}
	if t, found, err := c.verifyTransfer(ctx, ref); err != nil || found {
		if err != nil {
			return providers.PayoutResult{}, err
		}
		return c.result(req, t)
	}
	name, err := c.ResolveAccount(ctx, req.BankCode, req.AccountNumber)
	if errors.Is(err, ErrAccountNotResolved) {
		return providers.PayoutResult{Status: providers.PayoutFailed,
			FailureReason: "the beneficiary account could not be verified: " + strings.TrimPrefix(err.Error(), ErrAccountNotResolved.Error()+": ")}, nil
	}
	if err != nil {
		return providers.PayoutResult{}, err
	}
	var rcp struct {
		RecipientCode string `json:"recipient_code"`
	}
	err = c.call(ctx, "create transfer recipient", "POST", "/transferrecipient", nil, map[string]any{
		"type": "nuban", "name": name, "account_number": req.AccountNumber, "bank_code": req.BankCode,
		"currency": "NGN", "metadata": map[string]string{"svc_reference": req.Reference},
	}, &rcp)
	if ae := (*APIError)(nil); errors.As(err, &ae) {
		return providers.PayoutResult{Status: providers.PayoutFailed, FailureReason: "the bank partner refused the beneficiary: " + ae.Message}, nil
	}
	if err != nil {
		return providers.PayoutResult{}, err
	}
	if rcp.RecipientCode == "" {
		return providers.PayoutResult{}, c.down("create transfer recipient", "the answer has no recipient_code")
	}
	var t transfer
	err = c.call(ctx, "create transfer", "POST", "/transfer", nil, map[string]any{
		"source": "balance", "amount": req.Amount.Minor, "currency": "NGN",
		"recipient": rcp.RecipientCode, "reference": ref, "reason": narration(req.Reference),
	}, &t)
	var ae *APIError
	if errors.As(err, &ae) {
		// A refusal may be of a duplicate reference: an earlier attempt whose answer was lost
		// made the transfer. Ask for it before deciding anything.
		if t, found, verr := c.verifyTransfer(ctx, ref); verr != nil || found {
			if verr != nil {
				return providers.PayoutResult{}, verr
			}
			return c.result(req, t)
		}
		if ae.Code == "insufficient_balance" || strings.Contains(strings.ToLower(ae.Message), "balance") {
			c.log.Error("paystack balance does not cover a payout", "reference", req.Reference, "message", ae.Message)
			return providers.PayoutResult{}, fmt.Errorf("paystack: the Paystack balance does not cover the payout (top it up; the payout is retried): %w", ae)
		}
		return providers.PayoutResult{Status: providers.PayoutFailed, FailureReason: "the bank partner refused the transfer: " + ae.Message}, nil
	}
	if err != nil {
		return providers.PayoutResult{}, err
	}
	return c.result(req, t)
}

// ErrTransferNotFound: Paystack holds no transfer under the reference.
var ErrTransferNotFound = errors.New("paystack: no transfer under this reference")

// VerifyPayout asks Paystack for the transfer made under our reference (GET
// /transfer/verify/{EncodeReference(reference)}) and answers it as a PayoutOutcome: status
// PayoutSettled (success), PayoutReversed (reversed: paid, then returned by the bank),
// PayoutFailed (failed, abandoned, blocked, rejected) or PayoutSubmitted (anything else),
// with its transfer_code and amount. The partner-events job confirms a transfer.reversed
// notification with it before crediting a settled payout back (the API is the record).
//
// Errors: ErrTransferNotFound, ErrReference, ErrMalformedEvent (an amount that is not whole
// kobo), *providers.UnavailableError.
func (c *Client) VerifyPayout(ctx context.Context, reference string) (providers.PayoutOutcome, error) {
	ref, err := EncodeReference(reference)
	if err != nil {
		return providers.PayoutOutcome{}, err
	}
	t, found, err := c.verifyTransfer(ctx, ref)
	if err != nil {
		return providers.PayoutOutcome{}, err
	}
	if !found {
		return providers.PayoutOutcome{}, fmt.Errorf("%w: %s", ErrTransferNotFound, reference)
	}
	if t.Amount <= 0 || (t.Currency != "" && t.Currency != "NGN") {
		return providers.PayoutOutcome{}, malformed("transfer %s: %d %s", t.TransferCode, t.Amount, t.Currency)
	}
	out := providers.PayoutOutcome{Reference: reference, ProviderReference: t.TransferCode, Amount: money.New(money.NGN, t.Amount)}
	switch status := strings.ToLower(t.Status); status {
	case "success":
		out.Status = providers.PayoutSettled
	case "reversed":
		out.Status, out.FailureReason = providers.PayoutReversed, failureReason(status, t.GatewayResponse)
	case "failed", "abandoned", "blocked", "rejected":
		out.Status, out.FailureReason = providers.PayoutFailed, failureReason(status, t.GatewayResponse)
	default:
		out.Status = providers.PayoutSubmitted
	}
	return out, nil
}

// verifyTransfer fetches the transfer made under ref (found false on Paystack's 404).
func (c *Client) verifyTransfer(ctx context.Context, ref string) (transfer, bool, error) {
	var t transfer
	err := c.call(ctx, "verify transfer", "GET", "/transfer/verify/"+ref, nil, nil, &t)
	if notFound(err) {
		return transfer{}, false, nil
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return transfer{}, false, fmt.Errorf("paystack: verifying transfer %s: %w", ref, err)
	}
	if err != nil {
		return transfer{}, false, err
	}
	return t, true, nil
}

// result maps a transfer to the payout's result, after checking it is this payout.
func (c *Client) result(req providers.PayoutRequest, t transfer) (providers.PayoutResult, error) {
	if t.Amount != req.Amount.Minor || (t.Currency != "" && t.Currency != "NGN") {
		c.log.Error("paystack transfer under our reference does not match the payout", "reference", req.Reference,
			"transfer_code", t.TransferCode, "transfer_kobo", t.Amount, "payout_kobo", req.Amount.Minor)
		return providers.PayoutResult{}, fmt.Errorf("paystack: transfer %s under reference %q is for %d %s kobo, the payout for %d: not treated as this payout",
			t.TransferCode, req.Reference, t.Amount, t.Currency, req.Amount.Minor)
	}
	res := providers.PayoutResult{ProviderReference: t.TransferCode}
	switch status := strings.ToLower(t.Status); status {
	case "success":
		res.Status = providers.PayoutSettled
	case "failed", "reversed", "abandoned", "blocked", "rejected":
		res.Status = providers.PayoutFailed
		res.FailureReason = failureReason(status, t.GatewayResponse)
	default: // pending, otp, received, processing, queued: not conclusive
		res.Status = providers.PayoutSubmitted
	}
	return res, nil
}

func failureReason(status, gateway string) string {
	r := "the bank partner reported the transfer " + status
	if gateway != "" {
		r += ": " + gateway
	}
	return r
}

// narration is the transfer's reason (shown to the beneficiary by some banks).
func narration(ref string) string {
	kind, _, _ := strings.Cut(ref, ":")
	return "svc " + kind
}

// splitName splits an account name into Paystack's first and last names (both required).
func splitName(name string) (string, string) {
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return "Customer", "Customer"
	}
	first, last, ok := strings.Cut(name, " ")
	if !ok {
		return name, name
	}
	return first, last
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
