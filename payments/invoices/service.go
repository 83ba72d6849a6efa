package invoices

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/payments"
	"svc/payments/idempotency"
	"svc/payments/metadata"
	"svc/payments/products"
	"svc/persistence/postgres"
)

// Inserter enqueues a job inside a transaction; *river.Client[pgx.Tx] is one.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// PayLinks gives an invoice its hosted pay link (payments/checkout), creating one in tx
// when the invoice has none; it returns the page's address. DeleteInvoiceLinks deletes the
// invoice's links in tx (checkout owns checkout_links).
type PayLinks interface {
	InvoiceLink(ctx context.Context, tx pgx.Tx, inv Invoice) (string, error)
	DeleteInvoiceLinks(ctx context.Context, tx pgx.Tx, invoiceID uuid.UUID, at time.Time) error
}

// Service is the invoices' rules over their store. Safe for concurrent use.
type Service struct {
	pool     *pgxpool.Pool
	jobs     Inserter
	payLinks PayLinks
	now      func() time.Time
}

// NewService returns the service. jobs enqueues the invoice mail and overdue jobs;
// payLinks gives a sent invoice its pay link (payments/checkout.InvoiceLinks; nil: Send
// fails); now nil means time.Now.
func NewService(pool *pgxpool.Pool, jobs Inserter, payLinks PayLinks, now func() time.Time) *Service {
	return &Service{pool: pool, jobs: jobs, payLinks: payLinks, now: payments.OrNow(now)}
}

func (s *Service) stamp() time.Time { return payments.Stamp(s.now()) }

func (s *Service) today() time.Time {
	y, m, d := s.now().UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ValidEmail reports whether s is a plain email address.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 254
}

func parseDate(p *payments.Problems, field, s string) (time.Time, bool) {
	d, err := time.Parse(dateLayout, s)
	return d, p.Check(err == nil, field, "must be a date YYYY-MM-DD")
}

func checkLen(p *payments.Problems, field, v string, max int) {
	n := utf8.RuneCountInString(v)
	if n == 0 {
		p.Add(field, "is required")
		return
	}
	p.Check(n <= max, field, fmt.Sprintf("must be at most %d characters", max))
}

// validateHeader checks the invoice's own fields (not its lines).
func validateHeader(p *payments.Problems, inv *Invoice) {
	checkLen(p, "title", inv.Title, MaxTitleLen)
	checkLen(p, "customer_name", inv.CustomerName, MaxCustomerName)
	if inv.CustomerEmail == "" {
		p.Add("customer_email", "is required")
	} else {
		p.Check(ValidEmail(inv.CustomerEmail), "customer_email", "must be a valid email address")
	}
	p.Check(products.ValidCurrency(inv.Currency), "currency", fmt.Sprintf("must be one of %v", products.Currencies))
	if inv.Notes != nil {
		p.Check(utf8.RuneCountInString(*inv.Notes) <= MaxNotesLen, "notes", fmt.Sprintf("must be at most %d characters", MaxNotesLen))
	}
	if inv.DueDate != nil && !inv.IssueDate.IsZero() {
		p.Check(!inv.DueDate.Before(inv.IssueDate), "due_date", "must not be before issue_date")
	}
}

// Create validates and stores a new draft invoice with its line items and the tenant's next
// number.
//
// Errors: *payments.ValidationError, products.ErrInactive (PRODUCT_INACTIVE).
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Invoice, error) {
	return postgres.InTxValue(ctx, s.pool, idempotency.InTx, func(tx pgx.Tx) (Invoice, error) { return s.CreateTx(ctx, tx, t, in) })
}

// CreateTx is Create inside the caller's transaction (checkout's inline flavor uses it).
// in.Status may be pending to issue the invoice at once.
func (s *Service) CreateTx(ctx context.Context, tx pgx.Tx, t payments.Tenant, in CreateInput) (Invoice, error) {
	var p payments.Problems
	now := s.stamp()
	inv := Invoice{
		ID: uuid.Must(uuid.NewV7()), Tenant: t, Title: in.Title, CustomerName: in.CustomerName,
		CustomerEmail: in.CustomerEmail, CustomerID: in.CustomerID, Currency: in.Currency, Status: StatusDraft,
		Notes: in.Notes, CreatedAt: now, UpdatedAt: now, IssueDate: s.today(),
	}
	if inv.Currency == "" {
		inv.Currency = products.DefaultCurrency
	}
	if in.Status == StatusPending {
		inv.Status = StatusPending
	}
	md, _, err := metadata.Parse(in.Metadata, false)
	p.Merge("", err)
	inv.Metadata = md.OrEmpty()
	if in.IssueDate != "" {
		if d, ok := parseDate(&p, "issue_date", in.IssueDate); ok {
			inv.IssueDate = d
		}
	}
	if in.DueDate != nil {
		if d, ok := parseDate(&p, "due_date", *in.DueDate); ok {
			inv.DueDate = &d
		}
	}
	validateHeader(&p, &inv)
	if len(in.Lines) == 0 {
		p.Add("line_items", "must hold at least one line item")
	}
	p.Check(len(in.Lines) <= MaxLineItems, "line_items", fmt.Sprintf("must hold at most %d line items", MaxLineItems))
	if !products.ValidCurrency(inv.Currency) {
		return Invoice{}, p.Err()
	}
	for i, li := range in.Lines {
		l, err := BuildLine(ctx, tx, t, inv.Currency, li, fmt.Sprintf("line_items[%d].", i), &p, now)
		if err != nil {
			return Invoice{}, err
		}
		inv.Lines = append(inv.Lines, l)
	}
	if err := p.Err(); err != nil {
		return Invoice{}, err
	}
	total, err := Total(inv.Lines)
	if err != nil {
		return Invoice{}, &payments.ValidationError{Fields: []payments.FieldError{{Field: "line_items", Message: "total is too large"}}}
	}
	inv.TotalAmount = total
	if inv.Number, err = nextNumber(ctx, tx, t); err != nil {
		return Invoice{}, err
	}
	if err := insertInvoice(ctx, tx, inv); err != nil {
		return Invoice{}, err
	}
	if err := InsertLines(ctx, tx, "invoice_line_items", "invoice_id", inv.ID, 0, inv.Lines); err != nil {
		return Invoice{}, err
	}
	if err := s.scheduleOverdue(ctx, tx, inv); err != nil {
		return Invoice{}, err
	}
	return inv, nil
}

// Get returns one invoice with its line items. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Invoice, error) {
	return getInvoice(ctx, s.pool, t, id, false)
}

// GetTx is Get inside a transaction, optionally locking the invoice.
func GetTx(ctx context.Context, tx pgx.Tx, t payments.Tenant, id uuid.UUID, lock bool) (Invoice, error) {
	return getInvoice(ctx, tx, t, id, lock)
}

// List returns a page of invoices, newest first, and the total matching.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Invoice, int64, error) {
	return listInvoices(ctx, s.pool, t, f)
}

// editable refuses changes to an invoice that is not draft or pending.
func editable(inv Invoice) error {
	switch inv.Status {
	case StatusDraft, StatusPending:
		return nil
	case StatusPaid:
		return ErrPaid
	}
	return stateError(fmt.Sprintf("a %s invoice cannot be edited; only draft and pending invoices can", inv.Status))
}

// loadEditable reads invoice id of the tenant FOR UPDATE in tx and refuses it unless it is
// editable. Errors: ErrNotFound, ErrPaid, ErrInvalidState, the database's.
func loadEditable(ctx context.Context, tx pgx.Tx, t payments.Tenant, id uuid.UUID) (Invoice, error) {
	inv, err := getInvoice(ctx, tx, t, id, true)
	if err != nil {
		return Invoice{}, err
	}
	return inv, editable(inv)
}

// Update changes the fields that are set, on a draft or pending invoice. status may move
// to draft, pending or canceled.
//
// Errors: ErrNotFound, ErrPaid, ErrInvalidState, *payments.ValidationError.
func (s *Service) Update(ctx context.Context, t payments.Tenant, id uuid.UUID, in UpdateInput) (Invoice, error) {
	var out Invoice
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		inv, err := loadEditable(ctx, tx, t, id)
		if err != nil {
			return err
		}
		var p payments.Problems
		in.Title.Require(&p, "title", &inv.Title)
		in.CustomerName.Require(&p, "customer_name", &inv.CustomerName)
		in.CustomerEmail.Require(&p, "customer_email", &inv.CustomerEmail)
		in.Currency.Require(&p, "currency", &inv.Currency)
		var issue string // the sent date; "" when unset or null (null is a problem of the field)
		in.IssueDate.Require(&p, "issue_date", &issue)
		if issue != "" {
			if d, ok := parseDate(&p, "issue_date", issue); ok {
				inv.IssueDate = d
			}
		}
		dueChanged := false
		if in.DueDate.Set {
			dueChanged = true
			if in.DueDate.Null {
				inv.DueDate = nil
			} else if d, ok := parseDate(&p, "due_date", in.DueDate.Value); ok {
				inv.DueDate = &d
			}
		}
		in.Notes.Apply(&inv.Notes)
		wasPending := inv.Status == StatusPending
		products.RequireOneOf(&p, "status", in.Status, &inv.Status, StatusDraft, StatusPending, StatusCanceled)
		if err := metadata.Update(&p, in.Metadata, &inv.Metadata); err != nil {
			return err
		}
		validateHeader(&p, &inv)
		if err := p.Err(); err != nil {
			return err
		}
		if in.Currency.Set {
			if err := recompute(&inv); err != nil {
				return err
			}
			if err := rewriteLineAmounts(ctx, tx, inv); err != nil {
				return err
			}
		}
		inv.UpdatedAt = s.stamp()
		if err := updateInvoice(ctx, tx, inv); err != nil {
			return err
		}
		if inv.Status == StatusPending && (dueChanged || !wasPending) {
			if err := s.scheduleOverdue(ctx, tx, inv); err != nil {
				return err
			}
		}
		out = inv
		return nil
	})
	return out, err
}

func recompute(inv *Invoice) error {
	for i := range inv.Lines {
		if err := Compute(inv.Currency, &inv.Lines[i]); err != nil {
			return err
		}
	}
	total, err := Total(inv.Lines)
	if err != nil {
		return err
	}
	inv.TotalAmount = total
	return nil
}

func rewriteLineAmounts(ctx context.Context, tx pgx.Tx, inv Invoice) error {
	for _, l := range inv.Lines {
		if _, err := tx.Exec(ctx, `update invoice_line_items set subtotal=$2, discount_amount=$3, tax_amount=$4, total=$5 where id=$1`,
			l.ID, l.Subtotal, l.DiscountAmount, l.TaxAmount, l.Total); err != nil {
			return fmt.Errorf("update line item: %w", err)
		}
	}
	return nil
}

// Delete removes an invoice that is not paid, with its line items; checkout links to it are
// deleted with it (their pages stop at once).
//
// Errors: ErrNotFound, ErrPaid.
func (s *Service) Delete(ctx context.Context, t payments.Tenant, id uuid.UUID) error {
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		inv, err := getInvoice(ctx, tx, t, id, true)
		if err != nil {
			return err
		}
		if inv.Status == StatusPaid {
			return ErrPaid
		}
		if s.payLinks != nil {
			if err := s.payLinks.DeleteInvoiceLinks(ctx, tx, id, s.stamp()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `delete from invoices where id = $1`, id); err != nil {
			return fmt.Errorf("delete invoice: %w", err)
		}
		return nil
	})
}

// Send emails the invoice to customer_email with its pay link (creating the link when there
// is none) and moves a draft to pending. A pending or overdue invoice is sent again as a
// reminder. The mail leaves from a job after the commit.
//
// Errors: ErrNotFound, ErrPaid, ErrInvalidState (canceled), *payments.ValidationError
// (customer_email not valid).
func (s *Service) Send(ctx context.Context, t payments.Tenant, id uuid.UUID) (Invoice, error) {
	var out Invoice
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		inv, err := getInvoice(ctx, tx, t, id, true)
		if err != nil {
			return err
		}
		switch inv.Status {
		case StatusPaid:
			return ErrPaid
		case StatusCanceled:
			return stateError("a canceled invoice cannot be sent")
		}
		if !ValidEmail(inv.CustomerEmail) {
			return &payments.ValidationError{Fields: []payments.FieldError{{Field: "customer_email", Message: "must be a valid email address to send the invoice"}}}
		}
		if s.payLinks == nil {
			return fmt.Errorf("invoices: no pay-link service configured")
		}
		url, err := s.payLinks.InvoiceLink(ctx, tx, inv)
		if err != nil {
			return err
		}
		now := s.stamp()
		wasDraft := inv.Status == StatusDraft
		if wasDraft {
			inv.Status = StatusPending
		}
		inv.SentAt = &now
		inv.UpdatedAt = now
		if err := updateInvoice(ctx, tx, inv); err != nil {
			return err
		}
		if _, err := s.jobs.InsertTx(ctx, tx, MailArgs{InvoiceID: inv.ID, PayURL: url}, nil); err != nil {
			return fmt.Errorf("enqueue invoice mail: %w", err)
		}
		if wasDraft {
			if err := s.scheduleOverdue(ctx, tx, inv); err != nil {
				return err
			}
		}
		out = inv
		return nil
	})
	return out, err
}

// AddLine adds a line item to a draft or pending invoice and recalculates its total.
//
// Errors: ErrNotFound, ErrPaid, ErrInvalidState, *payments.ValidationError,
// products.ErrInactive.
func (s *Service) AddLine(ctx context.Context, t payments.Tenant, id uuid.UUID, in LineInput) (Line, error) {
	var out Line
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		inv, err := loadEditable(ctx, tx, t, id)
		if err != nil {
			return err
		}
		if len(inv.Lines) >= MaxLineItems {
			return stateError(fmt.Sprintf("an invoice holds at most %d line items", MaxLineItems))
		}
		var p payments.Problems
		l, err := BuildLine(ctx, tx, t, inv.Currency, in, "", &p, s.stamp())
		if err != nil {
			return err
		}
		if err := p.Err(); err != nil {
			return err
		}
		last := 0
		if n := len(inv.Lines); n > 0 {
			last = inv.Lines[n-1].Position
		}
		lines := []Line{l}
		if err := InsertLines(ctx, tx, "invoice_line_items", "invoice_id", inv.ID, last, lines); err != nil {
			return err
		}
		inv.Lines = append(inv.Lines, lines[0])
		if err := s.saveTotal(ctx, tx, &inv); err != nil {
			return err
		}
		out = lines[0]
		return nil
	})
	return out, err
}

// RemoveLine deletes a line item of a draft or pending invoice and recalculates its total.
// The last line item cannot be removed (an invoice holds at least one).
//
// Errors: ErrNotFound, ErrLineNotFound, ErrPaid, ErrInvalidState.
func (s *Service) RemoveLine(ctx context.Context, t payments.Tenant, id, lineID uuid.UUID) (Invoice, error) {
	var out Invoice
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		inv, err := getInvoice(ctx, tx, t, id, true)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(inv.Lines, func(l Line) bool { return l.ID == lineID })
		if i < 0 {
			return ErrLineNotFound
		}
		if err := editable(inv); err != nil {
			return err
		}
		if len(inv.Lines) == 1 {
			return stateError("an invoice keeps at least one line item; add another before removing this one")
		}
		if _, err := tx.Exec(ctx, `delete from invoice_line_items where id = $1`, lineID); err != nil {
			return fmt.Errorf("delete line item: %w", err)
		}
		inv.Lines = slices.Delete(inv.Lines, i, i+1)
		if err := s.saveTotal(ctx, tx, &inv); err != nil {
			return err
		}
		out = inv
		return nil
	})
	return out, err
}

func (s *Service) saveTotal(ctx context.Context, tx pgx.Tx, inv *Invoice) error {
	total, err := Total(inv.Lines)
	if err != nil {
		return &payments.ValidationError{Fields: []payments.FieldError{{Field: "unit_price", Message: "the invoice total would be too large"}}}
	}
	inv.TotalAmount = total
	inv.UpdatedAt = s.stamp()
	return updateInvoice(ctx, tx, *inv)
}

// Payable reports whether a checkout payment can pay the invoice now.
func Payable(inv Invoice) bool {
	return inv.Status == StatusPending || inv.Status == StatusOverdue
}

// MarkPaid marks a pending or overdue invoice paid at `at`, in the caller's transaction
// (the checkout payment's).
//
// Errors: ErrNotFound, ErrPaid, ErrInvalidState.
func MarkPaid(ctx context.Context, tx pgx.Tx, t payments.Tenant, id uuid.UUID, at time.Time) (Invoice, error) {
	inv, err := getInvoice(ctx, tx, t, id, true)
	if err != nil {
		return Invoice{}, err
	}
	if inv.Status == StatusPaid {
		return Invoice{}, ErrPaid
	}
	if !Payable(inv) {
		return Invoice{}, stateError(fmt.Sprintf("a %s invoice cannot be paid", inv.Status))
	}
	at = payments.Stamp(at)
	inv.Status, inv.PaidAt, inv.UpdatedAt = StatusPaid, &at, at
	if err := updateInvoice(ctx, tx, inv); err != nil {
		return Invoice{}, err
	}
	return inv, nil
}

// scheduleOverdue enqueues the job that makes a pending invoice overdue once its due date
// has passed (at the start of the next day, UTC). The job checks again when it runs, so a
// job made stale by a later change does nothing.
func (s *Service) scheduleOverdue(ctx context.Context, tx pgx.Tx, inv Invoice) error {
	if inv.Status != StatusPending || inv.DueDate == nil {
		return nil
	}
	at := inv.DueDate.AddDate(0, 0, 1)
	if _, err := s.jobs.InsertTx(ctx, tx, OverdueArgs{InvoiceID: inv.ID}, &river.InsertOpts{ScheduledAt: at}); err != nil {
		return fmt.Errorf("enqueue overdue check: %w", err)
	}
	return nil
}
