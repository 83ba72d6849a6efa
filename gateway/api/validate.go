package api

import (
	"fmt"
	"net/mail"
	"unicode/utf8"
)

// Validator collects field errors so a request reports all of its mistakes at once.
type Validator struct {
	fields []FieldError
}

// Add records an invalid field.
func (v *Validator) Add(field, message string) {
	v.fields = append(v.fields, FieldError{field, message})
}

// Check records message for field unless ok.
func (v *Validator) Check(ok bool, field, message string) bool {
	if !ok {
		v.Add(field, message)
	}
	return ok
}

// Required checks a string is present and not blank.
func (v *Validator) Required(field, value string) bool {
	return v.Check(value != "", field, "is required")
}

// Length checks a string's length in characters is within [min, max] (max 0: no limit).
func (v *Validator) Length(field, value string, min, max int) bool {
	n := utf8.RuneCountInString(value)
	if n < min {
		if min == 1 {
			return v.Check(false, field, "is required")
		}
		return v.Check(false, field, fmt.Sprintf("must be at least %d characters", min))
	}
	if max > 0 && n > max {
		return v.Check(false, field, fmt.Sprintf("must be at most %d characters", max))
	}
	return true
}

// OneOf checks value is one of allowed.
func (v *Validator) OneOf(field, value string, allowed ...string) bool {
	for _, a := range allowed {
		if value == a {
			return true
		}
	}
	return v.Check(false, field, fmt.Sprintf("must be one of %v", allowed))
}

// Email checks value is a plain email address.
func (v *Validator) Email(field, value string) bool {
	a, err := mail.ParseAddress(value)
	return v.Check(err == nil && a.Address == value && len(value) <= 254, field, "must be a valid email address")
}

// Ok reports whether no field failed so far.
func (v *Validator) Ok() bool { return len(v.fields) == 0 }

// Err returns nil, or a 400 VALIDATION_ERROR with every failed field.
func (v *Validator) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &Error{Code: CodeValidation, Detail: "request validation failed", Fields: v.fields}
}
