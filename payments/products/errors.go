package products

import "strings"

// Error is a business-rule failure with the API code the gateway answers with.
type Error struct {
	Code    string // e.g. NOT_FOUND, PRODUCT_INACTIVE
	Message string
}

func (e *Error) Error() string   { return e.Message }
func (e *Error) APICode() string { return e.Code }

// Is matches another *Error with the same code, so errors.Is(err, ErrNotFound) works for
// any not-found message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// ErrNotFound: no product with that id for this tenant (another tenant's is not found).
var ErrNotFound = &Error{Code: "NOT_FOUND", Message: "product not found"}

// ErrInactive: the product is inactive or archived and cannot be used in new invoices or links.
var ErrInactive = &Error{Code: "PRODUCT_INACTIVE", Message: "product is not active"}

// ErrOutOfStock: not enough stock left for the quantity.
var ErrOutOfStock = &Error{Code: "OUT_OF_STOCK", Message: "product is out of stock"}

// FieldError is one invalid request field.
type FieldError struct {
	Field   string
	Message string
}

// ValidationError lists every invalid field of a request (400 VALIDATION_ERROR).
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + " " + f.Message
	}
	return "invalid request: " + strings.Join(parts, "; ")
}

// APIField names the first invalid field (the gateway lists them all).
func (e *ValidationError) APIField() string { return e.Fields[0].Field }

// Problems collects field errors; Err returns nil when there were none.
type Problems struct {
	fields []FieldError
}

// Add records an invalid field.
func (p *Problems) Add(field, message string) {
	p.fields = append(p.fields, FieldError{field, message})
}

// Check records message for field unless ok, and returns ok.
func (p *Problems) Check(ok bool, field, message string) bool {
	if !ok {
		p.Add(field, message)
	}
	return ok
}

// Merge adds every field of err when it is a *ValidationError, prefixing the field names.
// It returns false for any other non-nil error.
func (p *Problems) Merge(prefix string, err error) bool {
	if err == nil {
		return true
	}
	ve, ok := err.(*ValidationError)
	if !ok {
		return false
	}
	for _, f := range ve.Fields {
		p.Add(prefix+f.Field, f.Message)
	}
	return true
}

// Ok reports whether nothing failed.
func (p *Problems) Ok() bool { return len(p.fields) == 0 }

// Err returns the collected failures as a *ValidationError, or nil.
func (p *Problems) Err() error {
	if len(p.fields) == 0 {
		return nil
	}
	return &ValidationError{Fields: p.fields}
}
