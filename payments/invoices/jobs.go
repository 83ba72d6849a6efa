package invoices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/payments"
	"svc/payments/products"
	"svc/payments/providers/mail"
)

// Queue is the river queue of the invoices' jobs (mail and overdue checks).
const Queue = "commerce"

// MailArgs is the job that emails an invoice with its pay link, after Send commits.
type MailArgs struct {
	InvoiceID uuid.UUID `json:"invoice_id"`
	PayURL    string    `json:"pay_url"`
}

// Kind is the river job kind.
func (MailArgs) Kind() string { return "invoice_mail" }

// InsertOpts puts the job on the commerce queue.
func (MailArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue, MaxAttempts: 10} }

// OverdueArgs is the job that moves a pending invoice to overdue once its due date passed.
type OverdueArgs struct {
	InvoiceID uuid.UUID `json:"invoice_id"`
}

// Kind is the river job kind.
func (OverdueArgs) Kind() string { return "invoice_overdue" }

// InsertOpts puts the job on the commerce queue.
func (OverdueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 25}
}

// Register adds the invoices' workers. now nil means time.Now.
func Register(workers *river.Workers, pool *pgxpool.Pool, sender mail.Sender, log *slog.Logger, now func() time.Time) error {
	now = payments.OrNow(now)
	log = payments.OrDiscard(log)
	if err := river.AddWorkerSafely(workers, NewMailWorker(pool, sender, log)); err != nil {
		return err
	}
	// OverdueArgs: the invoice becomes overdue if it is still pending and its due date is
	// before today (UTC); otherwise nothing happens.
	return river.AddWorkerSafely(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[OverdueArgs]) error {
		return MarkOverdue(ctx, pool, job.Args.InvoiceID, now())
	}))
}

// MarkOverdue moves the invoice to overdue when it is pending and due before now's date.
func MarkOverdue(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID, now time.Time) error {
	now = now.UTC()
	_, err := pool.Exec(ctx, `update invoices set status = $4, updated_at = $3
		where id = $1 and status = any($5) and due_date is not null and due_date < $2::date`,
		id, now.Format(dateLayout), payments.Stamp(now), StatusOverdue, Machine.From(StatusOverdue))
	if err != nil {
		return fmt.Errorf("mark invoice overdue: %w", err)
	}
	return nil
}

// MailWorker runs MailArgs jobs.
type MailWorker struct {
	river.WorkerDefaults[MailArgs]
	pool   *pgxpool.Pool
	sender mail.Sender // the service's mail (SMTP when configured)
	outbox mail.Sender // the mail_outbox table: sandbox mail to anyone but the merchant
	log    *slog.Logger
}

// NewMailWorker returns the worker Register adds (tests run it directly).
func NewMailWorker(pool *pgxpool.Pool, sender mail.Sender, log *slog.Logger) *MailWorker {
	log = payments.OrDiscard(log)
	return &MailWorker{pool: pool, sender: sender, outbox: &mail.Outbox{DB: pool, Log: log}, log: log}
}

// Work renders the invoice as it is now and sends it; an invoice deleted since is skipped.
//
// A sandbox invoice is mailed for real only to the merchant's own verified address: a test
// key must not be a free way to send mail that looks like a real invoice to anyone (spam,
// phishing under the service's name). Sandbox mail to any other address goes to the outbox
// (svc mail outbox), where the merchant's developers can read it.
func (w *MailWorker) Work(ctx context.Context, job *river.Job[MailArgs]) error {
	var t payments.Tenant
	var business string
	var ownAddress *string
	err := w.pool.QueryRow(ctx, `select i.merchant_id, i.environment, m.business_name,
			case when m.email_verified_at is not null then m.email end
		from invoices i join merchants m on m.id = i.merchant_id where i.id = $1`,
		job.Args.InvoiceID).Scan(&t.MerchantID, &t.Environment, &business, &ownAddress)
	if errors.Is(err, pgx.ErrNoRows) {
		w.log.Info("invoice deleted before its mail was sent", "invoice_id", job.Args.InvoiceID)
		return nil
	}
	if err != nil {
		return err
	}
	inv, err := getInvoice(ctx, w.pool, t, job.Args.InvoiceID, false)
	if err != nil {
		return err
	}
	msg := RenderMail(business, inv, job.Args.PayURL)
	if t.Environment != "live" && (ownAddress == nil || !strings.EqualFold(strings.TrimSpace(msg.To), *ownAddress)) {
		w.log.Info("sandbox invoice mail kept in the outbox (only the merchant's own verified address gets sandbox mail)",
			"invoice_id", inv.ID, "merchant_id", t.MerchantID)
		return w.outbox.Send(ctx, msg)
	}
	return w.sender.Send(ctx, msg)
}

// RenderMail is the plain-text email of an invoice.
func RenderMail(business string, inv Invoice, payURL string) mail.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\n%s has sent you invoice %s: %s.\n\n", inv.CustomerName, business, inv.InvoiceNumber(), inv.Title)
	for _, l := range inv.Lines {
		fmt.Fprintf(&b, "  %s x %d  %s %s\n", l.Description, l.Quantity, inv.Currency, products.FormatAmount(inv.Currency, l.Total))
	}
	fmt.Fprintf(&b, "\nTotal due: %s %s\n", inv.Currency, products.FormatAmount(inv.Currency, inv.TotalAmount))
	fmt.Fprintf(&b, "Issued: %s\n", FormatDate(inv.IssueDate))
	if inv.DueDate != nil {
		fmt.Fprintf(&b, "Due: %s\n", FormatDate(*inv.DueDate))
	}
	if inv.Notes != nil && *inv.Notes != "" {
		fmt.Fprintf(&b, "\n%s\n", *inv.Notes)
	}
	fmt.Fprintf(&b, "\nPay by bank transfer here: %s\n", payURL)
	if inv.Tenant.Environment == "sandbox" {
		b.WriteString("\n(This is a test invoice from a sandbox account: no real money moves.)\n")
	}
	return mail.Message{
		To:      inv.CustomerEmail,
		Subject: fmt.Sprintf("Invoice %s from %s", inv.InvoiceNumber(), business),
		Text:    b.String(),
	}
}
