package webhooks

import "errors"

// ErrNotFound: no endpoint with that id for this merchant and environment (another tenant's
// endpoint is not found either).
var ErrNotFound = notFoundError{}

type notFoundError struct{}

func (notFoundError) Error() string   { return "webhook endpoint not found" }
func (notFoundError) APICode() string { return "NOT_FOUND" }

// FieldError is an invalid request field (400 VALIDATION_ERROR at the gateway).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string    { return e.Field + " " + e.Message }
func (e *FieldError) APIField() string { return e.Field }

// Is matches any *FieldError.
func (e *FieldError) Is(target error) bool {
	_, ok := target.(*FieldError)
	return ok
}

func invalid(field, message string) error { return &FieldError{Field: field, Message: message} }

// ErrNoLiveKey: live endpoints need a configured encryption key (svcd --webhook-secret-key);
// with the development key only sandbox endpoints can be created.
var ErrNoLiveKey = noLiveKeyError{}

type noLiveKeyError struct{}

func (noLiveKeyError) Error() string {
	return "live webhook endpoints need the operator to configure --webhook-secret-key"
}
func (noLiveKeyError) APICode() string { return "PROVIDER_UNAVAILABLE" }

// ErrRefused is returned (wrapped) by a delivery to an address the SSRF guard forbids.
var ErrRefused = errors.New("destination address refused")
