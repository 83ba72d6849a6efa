package products

import (
	"fmt"
	"net/url"
	"slices"
	"svc/payments"
	"unicode/utf8"
)

// Limits of the spec ("Limits").
const (
	MaxNameLen        = 255
	MaxDescriptionLen = 2000
	MaxImageURLs      = 10
	maxURLLen         = 2048
)

// Types and statuses as lists, for validation messages and documentation.
var (
	Types      = []string{TypePhysical, TypeDigital, TypeService}
	Statuses   = []string{StatusActive, StatusInactive, StatusArchived}
	AdjustKind = []string{AdjustNone, AdjustPercentage, AdjustFixed}
)

func oneOf(p *payments.Problems, field, v string, allowed []string) bool {
	return p.Check(slices.Contains(allowed, v), field, fmt.Sprintf("must be one of %v", allowed))
}

func length(p *payments.Problems, field, v string, min, max int) bool {
	n := utf8.RuneCountInString(v)
	if n < min {
		p.Add(field, "is required")
		return false
	}
	return p.Check(n <= max, field, fmt.Sprintf("must be at most %d characters", max))
}

// ValidURL reports whether s is an absolute http(s) URL with a host.
func ValidURL(s string) bool {
	if len(s) > maxURLLen {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

func imageURLs(p *payments.Problems, urls []string) {
	if !p.Check(len(urls) <= MaxImageURLs, "image_urls", fmt.Sprintf("must hold at most %d URLs", MaxImageURLs)) {
		return
	}
	for i, u := range urls {
		p.Check(ValidURL(u), fmt.Sprintf("image_urls[%d]", i), "must be an absolute http(s) URL")
	}
}

// ParseAdjustment checks a tax or discount: typ one of none, percentage, fixed ("" is none);
// value required unless none; a percentage at most 100 with 4 decimal places; a fixed
// amount in currency. typeField and valueField name the request fields in errors.
func ParseAdjustment(p *payments.Problems, typeField, valueField, typ string, value *string, currency string) Adjustment {
	if typ == "" {
		typ = AdjustNone
	}
	if !oneOf(p, typeField, typ, AdjustKind) {
		return Adjustment{Type: AdjustNone}
	}
	if typ == AdjustNone {
		return Adjustment{Type: AdjustNone}
	}
	if value == nil || *value == "" {
		p.Add(valueField, fmt.Sprintf("is required when %s is %s", typeField, typ))
		return Adjustment{Type: AdjustNone}
	}
	if typ == AdjustPercentage {
		v, err := ParsePercent(*value)
		if err != nil {
			p.Add(valueField, err.Error())
			return Adjustment{Type: AdjustNone}
		}
		if !p.Check(v <= 100*PercentScale, valueField, "must be at most 100 (percent)") {
			return Adjustment{Type: AdjustNone}
		}
		return Adjustment{Type: typ, Value: v}
	}
	v, err := ParseAmount(currency, *value)
	if err != nil {
		p.Add(valueField, err.Error())
		return Adjustment{Type: AdjustNone}
	}
	return Adjustment{Type: typ, Value: v}
}

// validate checks a whole product (after defaults and parsing).
func (pr *Product) validate(p *payments.Problems) {
	length(p, "name", pr.Name, 1, MaxNameLen)
	if pr.Description != nil {
		length(p, "description", *pr.Description, 0, MaxDescriptionLen)
	}
	oneOf(p, "type", pr.Type, Types)
	oneOf(p, "status", pr.Status, Statuses)
	p.Check(ValidCurrency(pr.Currency), "currency", fmt.Sprintf("must be one of %v", Currencies))
	if pr.StockQuantity != nil {
		p.Check(*pr.StockQuantity >= 0, "stock_quantity", "must be 0 or greater, or null for unlimited")
	}
	imageURLs(p, pr.ImageURLs)
	if pr.Discount.Type == AdjustFixed && pr.Price > 0 {
		p.Check(pr.Discount.Value <= pr.Price, "discount", "a fixed discount must not exceed the price")
	}
}

func parsePrice(p *payments.Problems, raw, currency string) int64 {
	if raw == "" {
		p.Add("price", "is required")
		return 0
	}
	v, err := ParseAmount(currency, raw)
	if err != nil {
		p.Add("price", err.Error())
		return 0
	}
	p.Check(v > 0, "price", "must be greater than 0")
	return v
}
