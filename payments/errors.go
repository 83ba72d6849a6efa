package payments

import "strings"

// Error is a refusal with the API code the gateway answers with (NOT_FOUND, INVALID_STATE,
// KYC_TIER_REQUIRED, ...; the status of each code is the gateway's) and a sentence for people.
// The domains declare their refusals as sentinels of this type:
//
//	var ErrNotFound = &payments.Error{Code: "NOT_FOUND", Message: "deposit not found"}
//
// errors.Is(err, target) holds when err is an *Error of target's Code and Message, so two
// sentinels of one code (a missing onramp, a missing customer) stay apart; a target without a
// Message stands for every refusal of its code. Errors of one Family match by code alone: the
// commerce domains (products, invoices, checkout) build refusals with sentences of their own
// ("product X is archived") that must still be ErrInactive.
type Error struct {
	Code    string // the API code
	Message string // a sentence for people (the API's detail)
	// Family, when set on both errors, makes errors.Is compare codes only.
	Family string
}

func (e *Error) Error() string { return e.Message }

// APICode is the gateway's error code.
func (e *Error) APICode() string { return e.Code }

// Is reports whether e is target's refusal (see Error).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Code != e.Code {
		return false
	}
	if e.Family != "" && e.Family == t.Family {
		return true
	}
	return t.Message == "" || t.Message == e.Message
}

// FieldError is one invalid request field (400 VALIDATION_ERROR at the gateway, with
// {field, message}). Message is what the API answers for the field.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Message }

// APIField names the field.
func (e *FieldError) APIField() string { return e.Field }

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

// Problems collects field errors; Err returns nil when there were none. The zero value is
// ready to use.
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
