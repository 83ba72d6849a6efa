package providers

import "fmt"

// UnavailableError: the operation needs a provider that is not configured for the
// environment (live without a bank partner, say). The operation did nothing; the gateway
// answers 503 PROVIDER_UNAVAILABLE (APICode). Callers must ask the provider BEFORE writing
// anything, or roll back, so "changes nothing" holds.
type UnavailableError struct {
	Provider  string // bank, custody, kyc, fx
	Operation string
}

// ErrProviderUnavailable matches every *UnavailableError (errors.Is).
var ErrProviderUnavailable error = &UnavailableError{}

func (e *UnavailableError) Error() string {
	if e.Provider == "" {
		return "provider unavailable"
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
