package paystack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"svc/payments/money"
	"svc/payments/providers"
)

// refund is Paystack's refund object (the fields we use). transaction is the refunded
// transaction: its id in lists, the transaction object in the create answer.
type refund struct {
	ID          int64           `json:"id"`
	Transaction json.RawMessage `json:"transaction"`
	Amount      int64           `json:"amount"`
	Currency    string          `json:"currency"`
	Status      string          `json:"status"`
}

// transactionID reads the refunded transaction's id from either shape.
func (r refund) transactionID() int64 {
	var id int64
	if json.Unmarshal(r.Transaction, &id) == nil {
		return id
	}
	var obj struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal(r.Transaction, &obj) == nil {
		return obj.ID
	}
	return 0
}

// Refund implements the optional refund capability (providers.RefundRequest): it returns an
// inbound transfer (a dedicated-account charge) to its sender with Paystack's Refund API, in
// full. Idempotent by the charge: Paystack keys refunds by transaction, so
//
//  1. GET /transaction/verify/{ProviderReference}: the charge and its id (not found:
//     RefundFailed, nothing to refund);
//  2. GET /refund?transaction={id}: a refund already made for the charge is the answer
//     (a retry after a lost answer never refunds twice);
//  3. POST /refund {transaction: reference, amount (kobo), currency NGN, customer_note,
//     merchant_note}; a refusal (4xx) is followed by another look (step 2), then is
//     RefundFailed with Paystack's message.
//
// Paystack's refund states map: pending, processing, needs-attention -> RefundPending (ask
// again later); processed -> RefundProcessed; failed -> RefundFailed.
//
// Errors: *providers.UnavailableError (Paystack down, slow, or refusing our key): retry
// with the same request; a refund of another amount than asked (never treated as this one).
func (c *Client) Refund(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	if req.Amount.Asset != money.NGN || !req.Amount.IsPositive() {
		return providers.RefundResult{}, fmt.Errorf("paystack: a refund must be a positive NGN amount, not %s %s", req.Amount.Asset, req.Amount)
	}
	if req.ProviderReference == "" || strings.ContainsAny(req.ProviderReference, "/?#%") {
		return providers.RefundResult{Status: providers.RefundFailed, FailureReason: fmt.Sprintf("no usable charge reference %q", req.ProviderReference)}, nil
	}
	var charge struct {
		ID     int64  `json:"id"`
		Amount int64  `json:"amount"`
		Status string `json:"status"`
	}
	err := c.call(ctx, "verify transaction", "GET", "/transaction/verify/"+req.ProviderReference, nil, nil, &charge)
	if notFound(err) {
		return providers.RefundResult{Status: providers.RefundFailed, FailureReason: "the partner holds no charge " + req.ProviderReference}, nil
	}
	if err != nil {
		return providers.RefundResult{}, c.refundErr(err)
	}
	if r, found, err := c.findRefund(ctx, charge.ID); err != nil || found {
		if err != nil {
			return providers.RefundResult{}, err
		}
		return c.refundResult(req, r)
	}
	note := req.Reason
	if note == "" {
		note = "returned: the receiving account cannot accept it"
	}
	var r refund
	err = c.call(ctx, "create refund", "POST", "/refund", nil, map[string]any{
		"transaction": req.ProviderReference, "amount": req.Amount.Minor, "currency": "NGN",
		"customer_note": note, "merchant_note": "svc " + req.Reference + ": " + note,
	}, &r)
	var ae *APIError
	if errors.As(err, &ae) {
		// Refused: perhaps a duplicate of a refund whose answer was lost. Look before deciding.
		if r, found, ferr := c.findRefund(ctx, charge.ID); ferr != nil || found {
			if ferr != nil {
				return providers.RefundResult{}, ferr
			}
			return c.refundResult(req, r)
		}
		c.log.Warn("paystack refused a refund", "reference", req.Reference, "charge", req.ProviderReference, "message", ae.Message)
		return providers.RefundResult{Status: providers.RefundFailed, FailureReason: "the bank partner refused the refund: " + ae.Message}, nil
	}
	if err != nil {
		return providers.RefundResult{}, err
	}
	return c.refundResult(req, r)
}

// findRefund is the refund Paystack holds for the transaction, if any (GET /refund filtered
// by transaction; the answer is filtered again here).
func (c *Client) findRefund(ctx context.Context, transactionID int64) (refund, bool, error) {
	var list []refund
	q := url.Values{"transaction": {strconv.FormatInt(transactionID, 10)}, "currency": {"NGN"}, "perPage": {"100"}}
	if err := c.call(ctx, "list refunds", "GET", "/refund", q, nil, &list); err != nil {
		return refund{}, false, c.refundErr(err)
	}
	for _, r := range list {
		if r.transactionID() == transactionID {
			return r, true, nil
		}
	}
	return refund{}, false, nil
}

// refundErr: a refusal of a lookup is not an answer about the refund; the job retries.
func (c *Client) refundErr(err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		return &providers.UnavailableError{Provider: "bank", Operation: "paystack " + ae.Op, Reason: "the partner refused the request: " + ae.Error()}
	}
	return err
}

func (c *Client) refundResult(req providers.RefundRequest, r refund) (providers.RefundResult, error) {
	if r.Amount != req.Amount.Minor {
		c.log.Error("paystack refund of the charge does not match", "reference", req.Reference, "refund", r.ID,
			"refund_kobo", r.Amount, "asked_kobo", req.Amount.Minor)
		return providers.RefundResult{}, fmt.Errorf("paystack: refund %d of charge %s is for %d kobo, %d asked: not treated as this refund",
			r.ID, req.ProviderReference, r.Amount, req.Amount.Minor)
	}
	out := providers.RefundResult{ProviderReference: strconv.FormatInt(r.ID, 10)}
	switch strings.ToLower(r.Status) {
	case "processed":
		out.Status = providers.RefundProcessed
	case "failed":
		out.Status, out.FailureReason = providers.RefundFailed, "the bank partner reported the refund failed"
	default: // pending, processing, needs-attention
		out.Status = providers.RefundPending
	}
	return out, nil
}
