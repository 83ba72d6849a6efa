package webhooks

import (
	"errors"

	"svc/payments"
)

// ErrNotFound: no endpoint with that id for this merchant and environment (another tenant's
// endpoint is not found either).
var ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "webhook endpoint not found"}

// invalid is a *payments.FieldError whose message names the field ("url must use https"), as
// the API answers it.
func invalid(field, message string) error {
	return &payments.FieldError{Field: field, Message: field + " " + message}
}

// ErrNoLiveKey: live endpoints need a configured encryption key (svcd --webhook-secret-key);
// with the development key only sandbox endpoints can be created.
var ErrNoLiveKey error = &payments.Error{Code: "PROVIDER_UNAVAILABLE",
	Message: "live webhook endpoints need the operator to configure --webhook-secret-key"}

// ErrRefused is returned (wrapped) by a delivery to an address the SSRF guard forbids.
var ErrRefused = errors.New("destination address refused")
