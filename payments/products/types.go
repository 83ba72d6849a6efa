// Package products is the merchant's catalog (spec "Product"): what invoices and checkout
// links can be built from. Prices are integers in the currency's minor unit; taxes and
// discounts are percentages or fixed amounts (Adjustment). The service owns the rules, the
// store the SQL; every read and write is scoped by Tenant.
package products

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"svc/payments"
	"svc/payments/metadata"
	"time"

	"github.com/google/uuid"
)

// Types, statuses and adjustment kinds of the spec.
const (
	TypePhysical = "physical"
	TypeDigital  = "digital"
	TypeService  = "service"

	StatusActive   = "active"
	StatusInactive = "inactive"
	StatusArchived = "archived"

	AdjustNone       = "none"
	AdjustPercentage = "percentage"
	AdjustFixed      = "fixed"
)

// Adjustment is a tax or a discount. Value is in units of 0.0001 percent for a percentage
// (7.5% = 75000) and in the currency's minor unit for a fixed amount; 0 for none.
type Adjustment struct {
	Type  string
	Value int64
}

// PercentScale is the number of Value units in one percent.
const PercentScale = 10_000

// Product is a catalog item.
type Product struct {
	ID            uuid.UUID
	Tenant        payments.Tenant
	Name          string
	Description   *string
	Type          string
	Price         int64 // minor units, > 0
	Currency      string
	Status        string
	StockQuantity *int64 // nil: unlimited
	ImageURLs     []string
	Tax           Adjustment
	Discount      Adjustment
	Metadata      metadata.Metadata // the merchant's own keys (issue 30)
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// CreateInput is a new product as the request gave it. Numbers are decimal texts (the raw
// JSON numbers), parsed with the currency's places by the service.
type CreateInput struct {
	Name          string
	Description   *string
	Type          string // default physical
	Price         string
	Currency      string // default DefaultCurrency
	Status        string // default active
	StockQuantity *int64
	ImageURLs     []string
	TaxType       string // default none
	TaxRate       *string
	DiscountType  string // default none
	Discount      *string
	Metadata      json.RawMessage // the request's metadata field, checked by payments/metadata
}

// UpdateInput changes only the fields that are Set.
type UpdateInput struct {
	Name          Patch[string]
	Description   Patch[string] // null clears
	Type          Patch[string]
	Status        Patch[string]
	Price         Patch[json.Number]
	Currency      Patch[string]
	StockQuantity Patch[int64] // null: unlimited
	ImageURLs     Patch[[]string]
	TaxType       Patch[string]
	TaxRate       Patch[json.Number]
	DiscountType  Patch[string]
	Discount      Patch[json.Number]
	Metadata      json.RawMessage // keys to set or ("") remove (metadata.Merge)
}

// Filter selects products in a list.
type Filter struct {
	Status   string          // "" for any
	Search   string          // case-insensitive substring of the name
	Metadata metadata.Filter // nil for any
	Page     int
	Limit    int
}

// DefaultCurrency is the currency of a product, invoice or link that names none.
const DefaultCurrency = "NGN"

// Patch is one field of a partial update. Set: the request named the field; Null: it was
// JSON null (Value is then the zero value). It decodes itself from JSON, so request bodies
// can use it directly: a field left out stays unset.
type Patch[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON records that the field was sent, and whether as null.
func (p *Patch[T]) UnmarshalJSON(b []byte) error {
	p.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		p.Null = true
		return nil
	}
	return json.Unmarshal(b, &p.Value)
}

// Apply makes the change to a field that null clears (a description, a stock quantity):
// unset leaves *dst, null clears it, a value replaces it.
func (p Patch[T]) Apply(dst **T) {
	if !p.Set {
		return
	}
	if p.Null {
		*dst = nil
		return
	}
	v := p.Value
	*dst = &v
}

// Require makes the change to a field that refuses null (a name, a status): unset leaves
// *dst, null is a problem of field in problems, a value replaces it.
func (p Patch[T]) Require(problems *payments.Problems, field string, dst *T) {
	if p.Set && problems.Check(!p.Null, field, "must not be null") {
		*dst = p.Value
	}
}

// RequireOneOf is Require for a field that takes one of allowed (a status): null or another
// value is a problem of field ("must be one of [a b]") and leaves *dst.
func RequireOneOf[T comparable](problems *payments.Problems, field string, in Patch[T], dst *T, allowed ...T) {
	if in.Set && problems.Check(!in.Null && slices.Contains(allowed, in.Value), field, fmt.Sprintf("must be one of %v", allowed)) {
		*dst = in.Value
	}
}
