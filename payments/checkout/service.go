package checkout

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/idempotency"
	"svc/payments/invoices"
	"svc/payments/metadata"
	"svc/payments/products"
	"svc/persistence/postgres"
)

// Config is what the service is built with.
type Config struct {
	// BaseURL is the public address of the service (svcd --public-base-url); a link's url is
	// BaseURL + "/pay/" + slug.
	BaseURL string
	// Onramps creates the bank accounts payers transfer to; nil: paying answers 503
	// PROVIDER_UNAVAILABLE (every other operation works).
	Onramps Onramps
	// MaxOpenAttempts bounds the payment attempts awaiting a transfer on one link at once
	// (default 5), so an anonymous page cannot mint onramps without end.
	MaxOpenAttempts int
	Now             func() time.Time
}

// Service is the checkout links' rules over their store. Safe for concurrent use. A
// payment completes in the transaction that settles its deposit, through a Completer.
type Service struct {
	pool     *pgxpool.Pool
	invoices *invoices.Service
	cfg      Config
}

// NewService returns the service. invoices creates the invoices of the inline flavor.
func NewService(pool *pgxpool.Pool, inv *invoices.Service, cfg Config) *Service {
	cfg.Now = payments.OrNow(cfg.Now)
	if cfg.MaxOpenAttempts <= 0 {
		cfg.MaxOpenAttempts = 5
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Service{pool: pool, invoices: inv, cfg: cfg}
}

func (s *Service) stamp() time.Time { return payments.Stamp(s.cfg.Now()) }

// URL is the hosted page address of a slug.
func (s *Service) URL(slug string) string { return payURL(s.cfg.BaseURL, slug) }

func payURL(base, slug string) string { return base + "/pay/" + slug }

var slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidSlug reports whether s is 3 to 100 lowercase letters, digits and single inner dashes.
func ValidSlug(s string) bool {
	return len(s) >= MinSlugLen && len(s) <= MaxSlugLen && slugRE.MatchString(s)
}

// newSlug makes a slug from the title plus 8 random characters.
func newSlug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if b.Len() > 0 && !dash {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	base := strings.Trim(b.String(), "-")
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	for i := range suffix {
		suffix[i] = alphabet[int(suffix[i])%len(alphabet)]
	}
	if base == "" {
		return "pay-" + string(suffix)
	}
	return base + "-" + string(suffix)
}

func checkText(p *payments.Problems, field string, v *string, max int) {
	if v != nil {
		p.Check(utf8.RuneCountInString(*v) <= max, field, fmt.Sprintf("must be at most %d characters", max))
	}
}

func checkURL(p *payments.Problems, field string, v *string) {
	if v != nil {
		p.Check(products.ValidURL(*v), field, "must be an absolute http(s) URL")
	}
}

// Create makes a link in one of three flavors:
//   - invoice-linked: invoice_id (type invoice or omitted) of a draft, pending or overdue
//     invoice; the link takes the invoice's currency and total;
//   - inline: customer_name, customer_email and line_items create a pending invoice and its
//     link together;
//   - one-time: amount (with currency) or line_items (type one_time or omitted).
//
// The slug is generated from the title when omitted.
//
// Errors: *payments.ValidationError, ErrSlugTaken, invoices.ErrPaid, ErrNotPayable,
// products.ErrInactive, invoices.ErrNotFound or products.ErrNotFound (404) for an
// invoice_id or product_id that is unknown or another tenant's.
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Link, error) {
	return postgres.InTxValue(ctx, s.pool, idempotency.InTx, func(tx pgx.Tx) (Link, error) { return s.create(ctx, tx, t, in) })
}

func (s *Service) create(ctx context.Context, tx pgx.Tx, t payments.Tenant, in CreateInput) (Link, error) {
	var p payments.Problems
	now := s.stamp()
	l := Link{
		ID: uuid.Must(uuid.NewV7()), Tenant: t, Title: in.Title, Description: in.Description, Slug: in.Slug,
		Currency: in.Currency, Status: StatusActive, RedirectURL: in.RedirectURL, SuccessMessage: in.SuccessMessage,
		CreatedAt: now, UpdatedAt: now,
	}
	n := utf8.RuneCountInString(in.Title)
	if p.Check(n > 0, "title", "is required") {
		p.Check(n <= MaxTitleLen, "title", fmt.Sprintf("must be at most %d characters", MaxTitleLen))
	}
	checkText(&p, "description", in.Description, MaxDescriptionLen)
	checkText(&p, "success_message", in.SuccessMessage, MaxSuccessMessageLen)
	checkURL(&p, "redirect_url", in.RedirectURL)
	md, _, err := metadata.Parse(in.Metadata, false)
	p.Merge("", err)
	l.Metadata = md.OrEmpty()
	if in.Slug != "" {
		p.Check(ValidSlug(in.Slug), "slug", "must be 3 to 100 lowercase letters, digits and dashes (no leading, trailing or double dash)")
	} else {
		l.Slug = newSlug(in.Title)
	}
	if in.Currency != "" {
		p.Check(products.ValidCurrency(in.Currency), "currency", fmt.Sprintf("must be one of %v", products.Currencies))
	}
	if in.Type != "" {
		p.Check(in.Type == TypeOneTime || in.Type == TypeInvoice, "type", "must be one of [one_time invoice]")
	}
	inline := in.CustomerName != "" || in.CustomerEmail != ""
	switch {
	case in.InvoiceID != nil:
		l.Type = TypeInvoice
		p.Check(in.Type != TypeOneTime, "type", "must be invoice with invoice_id")
		p.Check(in.Amount == nil, "amount", "must not be sent with invoice_id (the invoice's total is charged)")
		p.Check(len(in.Lines) == 0, "line_items", "must not be sent with invoice_id")
		p.Check(!inline, "customer_name", "must not be sent with invoice_id")
		if !p.Ok() {
			return Link{}, p.Err()
		}
		inv, err := invoices.GetTx(ctx, tx, t, *in.InvoiceID, true)
		if errors.Is(err, invoices.ErrNotFound) {
			// Unknown and another tenant's invoice alike: 404, as for any foreign id.
			return Link{}, &payments.Error{Code: invoices.ErrNotFound.Code, Message: fmt.Sprintf("invoice_id: invoice %s not found", *in.InvoiceID), Family: products.Commerce}
		}
		if err != nil {
			return Link{}, err
		}
		switch inv.Status {
		case invoices.StatusPaid:
			return Link{}, invoices.ErrPaid
		case invoices.StatusCanceled:
			return Link{}, ErrNotPayable
		}
		if in.Currency != "" && in.Currency != inv.Currency {
			p.Add("currency", "must be the invoice's currency, "+inv.Currency)
			return Link{}, p.Err()
		}
		l.Currency, l.InvoiceID, l.Amount = inv.Currency, &inv.ID, inv.TotalAmount
	case inline:
		l.Type = TypeInvoice
		p.Check(in.Type != TypeOneTime, "type", "must be invoice (or omitted) when customer_name and customer_email create an invoice")
		p.Check(in.Amount == nil, "amount", "must not be sent with line_items and a customer (the items' total is charged)")
		p.Check(in.CustomerName != "", "customer_name", "is required with customer_email")
		p.Check(in.CustomerEmail != "", "customer_email", "is required with customer_name")
		p.Check(len(in.Lines) > 0, "line_items", "must hold at least one line item")
		if !p.Ok() {
			return Link{}, p.Err()
		}
		inv, err := s.invoices.CreateTx(ctx, tx, t, invoices.CreateInput{
			Title: in.Title, CustomerName: in.CustomerName, CustomerEmail: in.CustomerEmail, Currency: in.Currency,
			Notes: in.Description, Lines: in.Lines, Status: invoices.StatusPending,
		})
		if err != nil {
			return Link{}, err
		}
		l.Currency, l.InvoiceID, l.Amount = inv.Currency, &inv.ID, inv.TotalAmount
	default:
		l.Type = TypeOneTime
		if in.Type == TypeInvoice {
			p.Add("invoice_id", "is required for an invoice link (or send customer_name, customer_email and line_items)")
		}
		if l.Currency == "" {
			l.Currency = products.DefaultCurrency
		}
		switch {
		case in.Amount != nil && len(in.Lines) > 0:
			p.Add("amount", "send amount or line_items, not both")
		case in.Amount != nil:
			if products.ValidCurrency(l.Currency) {
				v, err := products.ParseAmount(l.Currency, *in.Amount)
				if err != nil {
					p.Add("amount", err.Error())
				} else {
					p.Check(v > 0, "amount", "must be greater than 0")
				}
				l.Amount = v
			}
		case len(in.Lines) > 0:
			p.Check(len(in.Lines) <= invoices.MaxLineItems, "line_items", fmt.Sprintf("must hold at most %d line items", invoices.MaxLineItems))
			if products.ValidCurrency(l.Currency) {
				for i, li := range in.Lines {
					line, err := invoices.BuildLine(ctx, tx, t, l.Currency, li, fmt.Sprintf("line_items[%d].", i), &p, now)
					if err != nil {
						return Link{}, err
					}
					l.Lines = append(l.Lines, line)
				}
				if p.Ok() {
					total, err := invoices.Total(l.Lines)
					p.Check(err == nil && total > 0, "line_items", "must add up to more than 0")
					l.Amount = total
				}
			}
		default:
			p.Add("amount", "is required when there are no line_items")
		}
	}
	if err := p.Err(); err != nil {
		return Link{}, err
	}
	if err := insertLink(ctx, tx, l); err != nil {
		return Link{}, err
	}
	if len(l.Lines) > 0 {
		if err := invoices.InsertLines(ctx, tx, "checkout_link_items", "link_id", l.ID, 0, l.Lines); err != nil {
			return Link{}, err
		}
	}
	return l, nil
}

// Get returns one live link. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Link, error) {
	return getLink(ctx, s.pool, t, id, false)
}

// List returns a page of live links, newest first, and the total matching.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Link, int64, error) {
	return listLinks(ctx, s.pool, t, f)
}

// Update changes title, description, redirect_url, success_message and status. A one_time
// link already paid cannot be made active again (it would take a second payment).
//
// Errors: ErrNotFound, *payments.ValidationError, ErrAlreadyPaid.
func (s *Service) Update(ctx context.Context, t payments.Tenant, id uuid.UUID, in UpdateInput) (Link, error) {
	var out Link
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		l, err := getLink(ctx, tx, t, id, true)
		if err != nil {
			return err
		}
		var p payments.Problems
		if in.Title.Set {
			n := utf8.RuneCountInString(in.Title.Value)
			if p.Check(!in.Title.Null && n > 0, "title", "is required") &&
				p.Check(n <= MaxTitleLen, "title", fmt.Sprintf("must be at most %d characters", MaxTitleLen)) {
				l.Title = in.Title.Value
			}
		}
		in.Description.Apply(&l.Description)
		in.RedirectURL.Apply(&l.RedirectURL)
		in.SuccessMessage.Apply(&l.SuccessMessage)
		checkText(&p, "description", l.Description, MaxDescriptionLen)
		checkText(&p, "success_message", l.SuccessMessage, MaxSuccessMessageLen)
		checkURL(&p, "redirect_url", l.RedirectURL)
		products.RequireOneOf(&p, "status", in.Status, &l.Status, StatusActive, StatusInactive)
		if err := metadata.Update(&p, in.Metadata, &l.Metadata); err != nil {
			return err
		}
		if err := p.Err(); err != nil {
			return err
		}
		if in.Status.Set && l.Status == StatusActive && l.Type == TypeOneTime && l.PaymentsCount > 0 {
			return ErrAlreadyPaid
		}
		l.UpdatedAt = s.stamp()
		if _, err := tx.Exec(ctx, `update checkout_links set title=$2, description=$3, redirect_url=$4, success_message=$5,
			status=$6, updated_at=$7, metadata=$8 where id=$1`, l.ID, l.Title, l.Description, l.RedirectURL, l.SuccessMessage,
			l.Status, l.UpdatedAt, l.Metadata.OrEmpty()); err != nil {
			return fmt.Errorf("update checkout link: %w", err)
		}
		out = l
		return nil
	})
	return out, err
}

// Delete removes a link: its page answers 410 Gone from now on and its slug is not reused.
// Errors: ErrNotFound.
func (s *Service) Delete(ctx context.Context, t payments.Tenant, id uuid.UUID) error {
	now := s.stamp()
	tag, err := s.pool.Exec(ctx, `update checkout_links set deleted_at=$4, status='inactive', updated_at=$4
		where merchant_id=$1 and environment=$2 and id=$3 and deleted_at is null`, t.MerchantID, t.Environment, id, now)
	if err != nil {
		return fmt.Errorf("delete checkout link: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// InvoiceLinks gives invoices their pay links (invoices.PayLinks). It needs only the base
// address and a clock, so the invoices service is built with it before this package's
// Service, which creates invoices itself.
type InvoiceLinks struct {
	baseURL string
	now     func() time.Time
}

// NewInvoiceLinks returns the pay links of baseURL (svcd --public-base-url; a link's url is
// baseURL + "/pay/" + slug); now nil means time.Now.
func NewInvoiceLinks(baseURL string, now func() time.Time) InvoiceLinks {
	return InvoiceLinks{baseURL: strings.TrimRight(baseURL, "/"), now: payments.OrNow(now)}
}

// InvoiceLink returns the address of the invoice's newest active link, creating one in tx
// when it has none (used when an invoice is sent).
func (s InvoiceLinks) InvoiceLink(ctx context.Context, tx pgx.Tx, inv invoices.Invoice) (string, error) {
	var slug string
	err := tx.QueryRow(ctx, `select slug from checkout_links where invoice_id=$1 and merchant_id=$2 and environment=$3
		and deleted_at is null and status='active' order by created_at desc limit 1`,
		inv.ID, inv.Tenant.MerchantID, inv.Tenant.Environment).Scan(&slug)
	if err == nil {
		return payURL(s.baseURL, slug), nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("find invoice link: %w", err)
	}
	title := fmt.Sprintf("%s (%s)", inv.Title, inv.InvoiceNumber())
	if utf8.RuneCountInString(title) > MaxTitleLen {
		title = inv.Title
	}
	now := payments.Stamp(s.now())
	l := Link{ID: uuid.Must(uuid.NewV7()), Tenant: inv.Tenant, Slug: newSlug(inv.InvoiceNumber()), Title: title,
		Type: TypeInvoice, Currency: inv.Currency, Status: StatusActive, InvoiceID: &inv.ID, CreatedAt: now, UpdatedAt: now}
	if err := insertLink(ctx, tx, l); err != nil {
		return "", err
	}
	return payURL(s.baseURL, l.Slug), nil
}

var _ invoices.PayLinks = InvoiceLinks{}
