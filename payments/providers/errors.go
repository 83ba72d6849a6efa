package providers

import "fmt"

// UnavailableError: the operation needs a provider that is not configured for the
// environment (live without a bank partner, say). The operation did nothing; the gateway
// answers 503 PROVIDER_UNAVAILABLE (APICode). Callers must ask the provider BEFORE writing
// anything, or roll back, so "changes nothing" holds.
//
// A live adapter returns it too when its partner is down: no answer within the deadline,
// 5xx or network errors after its bounded retries, or the partner refusing our credentials.
// Reason then says why; the operation may or may not have reached the partner, and repeating
// it with the same Reference is safe (every method is idempotent by Reference).
type UnavailableError struct {
	Provider  string // bank, custody, kyc, fx
	Operation string
	Reason    string // set by a live adapter: why its partner could not be used
}

// ErrProviderUnavailable matches every *UnavailableError (errors.Is).
var ErrProviderUnavailable error = &UnavailableError{}

func (e *UnavailableError) Error() string {
	if e.Provider == "" {
		return "provider unavailable"
	}
	if e.Reason != "" {
		return fmt.Sprintf("the %s partner is unavailable (%s): %s", e.Provider, e.Operation, e.Reason)
	}
	return fmt.Sprintf("no %s provider is configured for this environment (%s)", e.Provider, e.Operation)
}

// APICode is the gateway's error code.
func (e *UnavailableError) APICode() string { return "PROVIDER_UNAVAILABLE" }

// Is matches by type.
func (e *UnavailableError) Is(target error) bool {
	_, ok := target.(*UnavailableError)
	return ok
}

func unavailable(provider, op string) error {
	return &UnavailableError{Provider: provider, Operation: op}
}
