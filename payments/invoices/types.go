// Package invoices is the merchant's invoices (spec "Invoice"): numbered per merchant and
// environment without gaps, built from line items (catalog products or inline), totalled
// with discounts and taxes in the currency's minor unit, moved through the spec's states,
// emailed with their pay link, made overdue by a durable job and paid only through a
// checkout payment (payments/checkout).
package invoices

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/metadata"
	"svc/payments/products"
)

// Statuses of the spec's state table.
const (
	StatusDraft    = "draft"
	StatusPending  = "pending"
	StatusPaid     = "paid"
	StatusOverdue  = "overdue"
	StatusCanceled = "canceled"
)

// Machine is the invoice's state machine (the spec's state table); every status change goes
// through it (updateInvoice, MarkOverdue): a draft is issued (pending) or canceled; a pending
// invoice goes back to draft, is canceled, falls overdue or is paid; an overdue one is paid.
var Machine = payments.Machine{Name: "invoice", Moves: map[string][]string{
	StatusDraft:   {StatusPending, StatusCanceled},
	StatusPending: {StatusDraft, StatusCanceled, StatusOverdue, StatusPaid},
	StatusOverdue: {StatusPaid},
}}

// Statuses lists every status (filters, documentation).
var Statuses = []string{StatusDraft, StatusPending, StatusPaid, StatusOverdue, StatusCanceled}

// Limits of the spec.
const (
	MaxTitleLen       = 255
	MaxCustomerName   = 255
	MaxNotesLen       = 2000
	MaxLineDescLen    = 500
	MaxLineItems      = 100
	MaxLineQuantity   = 1_000_000
	invoiceNumberForm = "INV-%06d"
)

// Invoice is an invoice with its line items.
type Invoice struct {
	ID            uuid.UUID
	Tenant        payments.Tenant
	Number        int64
	Title         string
	CustomerName  string
	CustomerEmail string
	CustomerID    *uuid.UUID
	Currency      string
	Status        string
	TotalAmount   int64 // minor units: the sum of the lines' totals
	IssueDate     time.Time
	DueDate       *time.Time
	Notes         *string
	PaidAt        *time.Time
	SentAt        *time.Time
	Metadata      metadata.Metadata // the merchant's own keys (issue 30)
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Lines         []Line
}

// InvoiceNumber is the human-readable number, INV-000001.
func (inv Invoice) InvoiceNumber() string { return FormatNumber(inv.Number) }

// FormatNumber prints an invoice number.
func FormatNumber(n int64) string { return fmt.Sprintf(invoiceNumberForm, n) }

// Line is one line item with its computed amounts (all in minor units).
type Line struct {
	ID             uuid.UUID
	Position       int
	Description    string
	Quantity       int64
	UnitPrice      int64
	ProductID      *uuid.UUID
	Tax            products.Adjustment
	Discount       products.Adjustment
	Subtotal       int64 // quantity x unit price
	DiscountAmount int64
	TaxAmount      int64
	Total          int64 // subtotal - discount + tax
	CreatedAt      time.Time
}

// LineInput is a line item as the request gave it. Numbers are decimal texts.
type LineInput struct {
	Description  string
	Quantity     *int64
	UnitPrice    *string
	ProductID    *uuid.UUID
	TaxType      string
	TaxRate      *string
	DiscountType string
	Discount     *string
}

// CreateInput is a new invoice.
type CreateInput struct {
	Title         string
	CustomerName  string
	CustomerEmail string
	CustomerID    *uuid.UUID
	Currency      string // default NGN
	IssueDate     string // YYYY-MM-DD, default today (UTC)
	DueDate       *string
	Notes         *string
	Lines         []LineInput
	// Status is the starting status: "" or draft; checkout's inline flavor starts pending.
	Status   string
	Metadata json.RawMessage // the request's metadata field, checked by payments/metadata
}

// UpdateInput changes only the fields that are set.
type UpdateInput struct {
	Title         products.Patch[string]
	CustomerName  products.Patch[string]
	CustomerEmail products.Patch[string]
	Currency      products.Patch[string]
	IssueDate     products.Patch[string]
	DueDate       products.Patch[string] // null removes
	Notes         products.Patch[string] // null clears
	Status        products.Patch[string] // draft, pending or canceled
	Metadata      json.RawMessage        // keys to set or ("") remove (metadata.Merge)
}

// Filter selects invoices in a list.
type Filter struct {
	Status   string
	Metadata metadata.Filter // nil for any
	Search   string          // customer name, email or invoice number; case-insensitive substring
	Page     int
	Limit    int
}

const dateLayout = "2006-01-02"

// FormatDate prints a date as YYYY-MM-DD.
func FormatDate(t time.Time) string { return t.Format(dateLayout) }
