package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/invoices"
	"svc/payments/products"
	"svc/persistence/postgres"
)

// PageView is what the hosted page shows.
type PageView struct {
	Link     Link
	Merchant string            // business name
	Invoice  *invoices.Invoice // invoice links
	Lines    []invoices.Line   // the link's items or the invoice's lines
	// Refusal is why the link takes no payment now (nil: it does): ErrLinkInactive,
	// ErrNotPayable, invoices.ErrPaid or a products.ErrOutOfStock.
	Refusal error
}

// Page reads a link by slug for its hosted page.
//
// Errors: ErrNotFound (unknown slug), ErrLinkDeleted.
func (s *Service) Page(ctx context.Context, slug string) (PageView, error) {
	var v PageView
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		v, err = s.view(ctx, tx, slug, false)
		return err
	})
	return v, err
}

func (s *Service) view(ctx context.Context, tx pgx.Tx, slug string, lock bool) (PageView, error) {
	if !ValidSlug(slug) {
		return PageView{}, ErrNotFound
	}
	l, err := linkBySlug(ctx, tx, slug, lock)
	if err != nil {
		return PageView{}, err
	}
	if l.DeletedAt != nil {
		return PageView{}, ErrLinkDeleted
	}
	v := PageView{Link: l, Lines: l.Lines}
	if err := tx.QueryRow(ctx, `select business_name from merchants where id=$1`, l.Tenant.MerchantID).Scan(&v.Merchant); err != nil {
		return PageView{}, fmt.Errorf("read merchant: %w", err)
	}
	if l.InvoiceID != nil {
		inv, err := invoices.GetTx(ctx, tx, l.Tenant, *l.InvoiceID, lock)
		if errors.Is(err, invoices.ErrNotFound) {
			return PageView{}, ErrLinkDeleted
		}
		if err != nil {
			return PageView{}, err
		}
		v.Invoice, v.Lines = &inv, inv.Lines
		v.Link.Amount = inv.TotalAmount
	}
	v.Refusal, err = s.refusal(ctx, tx, v)
	return v, err
}

// refusal says why the link cannot take a payment now, or nil.
func (s *Service) refusal(ctx context.Context, tx pgx.Tx, v PageView) (error, error) {
	if v.Link.Status != StatusActive {
		return ErrLinkInactive, nil
	}
	if v.Link.Type == TypeOneTime && v.Link.PaymentsCount > 0 {
		return ErrAlreadyPaid, nil // read under the link's row lock when a payment starts
	}
	if v.Invoice != nil {
		if v.Invoice.Status == invoices.StatusPaid {
			return invoices.ErrPaid, nil
		}
		if !invoices.Payable(*v.Invoice) {
			return ErrNotPayable, nil
		}
	}
	need := map[uuid.UUID]int64{}
	for _, l := range v.Lines {
		if l.ProductID != nil {
			need[*l.ProductID] += l.Quantity
		}
	}
	for id, qty := range need {
		ok, err := products.InStock(ctx, tx, v.Link.Tenant, id, qty)
		if errors.Is(err, products.ErrNotFound) {
			continue // deleted from the catalog: the line stands on its own
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			return products.ErrOutOfStock, nil
		}
	}
	return nil, nil
}

// StartPayment creates a payment attempt on the link: a TEMPORARY onramp for the amount.
//
// Errors: ErrNotFound, ErrLinkDeleted, the refusals of PageView, ErrTooManyAttempts,
// ErrUnavailable (no onramp machinery), or the onramps'.
func (s *Service) StartPayment(ctx context.Context, slug string) (Payment, error) {
	if s.cfg.Onramps == nil {
		return Payment{}, ErrUnavailable
	}
	var out Payment
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		v, err := s.view(ctx, tx, slug, true)
		if err != nil {
			return err
		}
		if v.Refusal != nil {
			return v.Refusal
		}
		now := s.stamp()
		var open int
		if err := tx.QueryRow(ctx, `select count(*) from checkout_payments where link_id=$1 and status='awaiting' and expires_at > $2`,
			v.Link.ID, now).Scan(&open); err != nil {
			return fmt.Errorf("count open payments: %w", err)
		}
		if open >= s.cfg.MaxOpenAttempts {
			return ErrTooManyAttempts
		}
		p := Payment{ID: uuid.Must(uuid.NewV7()), LinkID: v.Link.ID, Tenant: v.Link.Tenant, InvoiceID: v.Link.InvoiceID,
			Amount: v.Link.Amount, Currency: v.Link.Currency, Status: PaymentAwaiting, CreatedAt: now}
		o, err := s.cfg.Onramps.CreateTemporary(ctx, tx, OnrampRequest{Tenant: p.Tenant, Amount: p.Amount, Currency: p.Currency, Reference: p.ID.String()})
		if err != nil {
			return err
		}
		p.OnrampID, p.AmountNGN, p.Rate, p.ExpiresAt = o.ID, o.AmountNGN, o.Rate, o.ExpiresAt.UTC()
		p.AccountNumber, p.BankName, p.AccountName = o.AccountNumber, o.BankName, o.AccountName
		if err := insertPayment(ctx, tx, p); err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

// Payment reads a payment attempt of the link named by slug (the page's status poll).
// Errors: ErrNotFound, ErrLinkDeleted, ErrPaymentNotFound.
func (s *Service) Payment(ctx context.Context, slug string, id uuid.UUID) (Payment, Link, error) {
	l, err := linkBySlug(ctx, s.pool, slug, false)
	if err != nil {
		return Payment{}, Link{}, err
	}
	if l.DeletedAt != nil {
		return Payment{}, Link{}, ErrLinkDeleted
	}
	p, err := scanPayment(s.pool.QueryRow(ctx, `select `+paymentColumns+` from checkout_payments where id=$1 and link_id=$2`, id, l.ID))
	return p, l, err
}

// Now is the service's clock (for StatusAt).
func (s *Service) Now() time.Time { return s.cfg.Now() }

// SimulateTransfer runs the sandbox deposit into the payment's onramp (sandbox links only).
// The payment completes when that deposit settles.
//
// Errors: ErrNotFound, ErrLinkDeleted, ErrPaymentNotFound, ErrSandboxOnly, ErrPaymentClosed,
// ErrUnavailable, or the onramps'.
func (s *Service) SimulateTransfer(ctx context.Context, slug string, id uuid.UUID) error {
	p, l, err := s.Payment(ctx, slug, id)
	if err != nil {
		return err
	}
	if l.Tenant.Environment != "sandbox" {
		return ErrSandboxOnly
	}
	if p.StatusAt(s.cfg.Now()) != PaymentAwaiting {
		return ErrPaymentClosed
	}
	if s.cfg.Onramps == nil {
		return ErrUnavailable
	}
	return s.cfg.Onramps.SimulateDeposit(ctx, p.Tenant, p.OnrampID)
}

// OnDepositSettled completes the checkout payment of the deposit's onramp inside tx, the
// transaction that settles the deposit: checkout.payment.completed recorded, the linked
// invoice paid, product stock taken, a one_time link made inactive. A deposit into an
// onramp that no checkout created is none of its business (nil); a payment already
// completed is left alone (nil), so a redelivered settlement is harmless.
//
// Money that arrives for a payment the link can no longer take follows one rule (issue 32,
// docs/checkout.md): the deposit settles as every deposit does, so the money is credited to
// the merchant's balance, never kept silently nor lost; the payment ends failed with the
// refusal as its reason, checkout.payment.failed is recorded for the merchant to refund the
// payer, and nothing else changes (no invoice paid, no stock taken). The refusals, checked
// under the link's row lock: a one_time link already paid (payments_count), a link
// deactivated or deleted since the payment started, an invoice no longer payable, stock gone.
func (c *Completer) OnDepositSettled(ctx context.Context, tx pgx.Tx, d SettledDeposit) error {
	p, err := scanPayment(tx.QueryRow(ctx, `select `+paymentColumns+` from checkout_payments where onramp_id=$1 for update`, d.OnrampID))
	if due, err := payments.Due(err, ErrPaymentNotFound, p.Status, PaymentAwaiting); !due {
		return err
	}
	at := payments.Stamp(d.SettledAt)
	if at.IsZero() {
		at = c.stamp()
	}
	if _, err := tx.Exec(ctx, `savepoint checkout_completion`); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	invoiceEmail, err := c.complete(ctx, tx, p, at)
	if err != nil {
		var pe *payments.Error
		if !errors.As(err, &pe) {
			return err
		}
		// A business refusal (sold out, invoice no longer payable): undo the partial
		// completion, keep the deposit, record why.
		if _, rerr := tx.Exec(ctx, `rollback to savepoint checkout_completion`); rerr != nil {
			return fmt.Errorf("rollback to savepoint: %w", rerr)
		}
		if err := PaymentMachine.Check(p.Status, PaymentFailed); err != nil {
			return err
		}
		reason := pe.Code + ": " + pe.Message
		if _, err := tx.Exec(ctx, `update checkout_payments set status='failed', failure_reason=$2, deposit_id=$3, completed_at=$4 where id=$1`,
			p.ID, reason, d.ID, at); err != nil {
			return fmt.Errorf("fail checkout payment: %w", err)
		}
		ev := paymentEvent(p, d, invoiceEmail, &reason)
		if ev.Metadata, err = linkMetadata(ctx, tx, p.LinkID); err != nil {
			return err
		}
		_, err = c.events.Record(ctx, tx, p.Tenant.MerchantID, p.Tenant.Environment, events.CheckoutPaymentFailed, ev)
		return err
	}
	if err := PaymentMachine.Check(p.Status, PaymentCompleted); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `update checkout_payments set status='completed', deposit_id=$2, completed_at=$3 where id=$1`, p.ID, d.ID, at); err != nil {
		return fmt.Errorf("complete checkout payment: %w", err)
	}
	ev := paymentEvent(p, d, invoiceEmail, nil)
	if ev.Metadata, err = linkMetadata(ctx, tx, p.LinkID); err != nil {
		return err
	}
	_, err = c.events.Record(ctx, tx, p.Tenant.MerchantID, p.Tenant.Environment, events.CheckoutPaymentCompleted, ev)
	return err
}

// linkMetadata is the link's metadata for its payment's event (issue 30).
func linkMetadata(ctx context.Context, tx pgx.Tx, linkID uuid.UUID) (map[string]string, error) {
	md := map[string]string{}
	if err := tx.QueryRow(ctx, `select metadata from checkout_links where id = $1`, linkID).Scan(&md); err != nil {
		return nil, fmt.Errorf("checkout link metadata: %w", err)
	}
	return md, nil
}

// paymentEvent is the data of checkout.payment.completed and checkout.payment.failed.
func paymentEvent(p Payment, d SettledDeposit, email, reason *string) events.CheckoutPayment {
	var invID *string
	if p.InvoiceID != nil {
		id := p.InvoiceID.String()
		invID = &id
	}
	return events.CheckoutPayment{ID: d.ID, CheckoutLinkID: p.LinkID.String(), InvoiceID: invID,
		Amount: products.FormatAmount(p.Currency, p.Amount), Currency: p.Currency, CustomerEmail: email, FailureReason: reason}
}

// complete applies the payment's effects; it returns the invoice's customer email, if any.
func (c *Completer) complete(ctx context.Context, tx pgx.Tx, p Payment, at time.Time) (*string, error) {
	l, err := scanLink(tx.QueryRow(ctx, linkSelect+`where l.id=$1 for update of l`, p.LinkID))
	if err != nil {
		return nil, fmt.Errorf("read checkout link: %w", err)
	}
	lines := []Link{l}
	if err := withLines(ctx, tx, lines); err != nil {
		return nil, err
	}
	items := lines[0].Lines
	switch {
	case l.Type == TypeOneTime && l.PaymentsCount > 0:
		return nil, ErrAlreadyPaid
	case l.DeletedAt != nil:
		return nil, &payments.Error{Code: ErrLinkInactive.Code, Message: "the payment link was deleted before the money arrived", Family: products.Commerce}
	case l.Status != StatusActive:
		return nil, &payments.Error{Code: ErrLinkInactive.Code, Message: "the payment link was deactivated before the money arrived", Family: products.Commerce}
	}
	var email *string
	if p.InvoiceID != nil {
		inv, err := invoices.MarkPaid(ctx, tx, p.Tenant, *p.InvoiceID, at)
		if err != nil {
			return nil, err
		}
		items, email = inv.Lines, &inv.CustomerEmail
	}
	for _, it := range items {
		if it.ProductID != nil {
			if err := products.TakeStock(ctx, tx, p.Tenant, *it.ProductID, it.Quantity); err != nil {
				return nil, err
			}
		}
	}
	status := l.Status
	if l.Type == TypeOneTime {
		status = StatusInactive
	}
	if _, err := tx.Exec(ctx, `update checkout_links set payments_count = payments_count + 1, status=$2, updated_at=$3 where id=$1`,
		l.ID, status, at); err != nil {
		return nil, fmt.Errorf("update checkout link: %w", err)
	}
	return email, nil
}
