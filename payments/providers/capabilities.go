package providers

import (
	"fmt"
	"slices"
	"strings"

	"svc/payments/money"
)

// Capabilities is what a provider can pay, hold or send: the rails a Bank pays out on, the
// assets it moves and the chains a Custody works on. A nil list declares no limit of that
// kind (the sandbox simulators pay everything their interface names).
type Capabilities struct {
	Rails  []string      // payout rails (RailNGN, RailUSACH, ...)
	Assets []money.Asset // assets it pays out, holds or sends
	Chains []Chain       // chains it gives deposit addresses on and sends on
}

// Capable is implemented by a provider that does only part of what its interface names
// (Paystack pays the NGN rail only; a custodian works on the chains it has nodes for).
// Services ask it through Can before they write anything, so what the partner cannot do is
// refused up front instead of debited and failed later.
type Capable interface {
	Capabilities() Capabilities
}

// Need is what one operation needs of its provider; an empty field needs nothing of that kind.
type Need struct {
	Rail  string
	Asset money.Asset
	Chain Chain
}

// Can checks, before anything is written, that p (a Bank, Custody, KYC or FX of a Set) can
// do what need asks: *UnavailableError (503 PROVIDER_UNAVAILABLE) when no provider is
// configured, *UnsupportedError (422 NOT_SUPPORTED) when the configured one declares (Capable)
// that it cannot, nil otherwise. provider and operation name them in the error ("bank",
// "payout").
func Can(p any, provider, operation string, need Need) error {
	if !Configured(p) {
		return &UnavailableError{Provider: provider, Operation: operation}
	}
	// A provider made of several (ChainCustody: a custodian per chain) may have none for
	// this need: that is "not configured" (503), not "cannot" (422).
	if cf, ok := p.(interface{ ConfiguredFor(Need) bool }); ok && !cf.ConfiguredFor(need) {
		return &UnavailableError{Provider: provider, Operation: operation,
			Reason: fmt.Sprintf("no %s partner is configured for %s in this environment", provider, needName(need))}
	}
	c, ok := p.(Capable)
	if !ok {
		return nil
	}
	caps := c.Capabilities()
	var missing []string
	if need.Rail != "" && caps.Rails != nil && !slices.Contains(caps.Rails, need.Rail) {
		missing = append(missing, "the "+need.Rail+" rail")
	}
	if need.Asset != "" && caps.Assets != nil && !slices.Contains(caps.Assets, need.Asset) {
		missing = append(missing, string(need.Asset))
	}
	if need.Chain != "" && caps.Chains != nil && !slices.Contains(caps.Chains, need.Chain) {
		missing = append(missing, "the "+string(need.Chain)+" chain")
	}
	if len(missing) == 0 {
		return nil
	}
	return &UnsupportedError{Provider: provider, Operation: operation, Need: need, Missing: missing, Offered: caps}
}

// UnsupportedError: the environment's configured provider cannot do what the request needs
// (a live US wire through a bank partner that pays the NGN rail only). Nothing was written;
// asking again will not help, so the gateway answers 422 NOT_SUPPORTED (APICode), not 503.
type UnsupportedError struct {
	Provider  string // bank, custody, ...
	Operation string
	Need      Need
	Missing   []string     // what of Need it cannot do
	Offered   Capabilities // what it declares it can
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("the %s partner of this environment does not support %s (%s)", e.Provider, strings.Join(e.Missing, ", "), e.Operation)
	var offers []string
	if e.Need.Rail != "" && e.Offered.Rails != nil && !slices.Contains(e.Offered.Rails, e.Need.Rail) {
		offers = append(offers, "rails "+strings.Join(e.Offered.Rails, ", "))
	}
	if e.Need.Asset != "" && e.Offered.Assets != nil && !slices.Contains(e.Offered.Assets, e.Need.Asset) {
		offers = append(offers, "assets "+joinAssets(e.Offered.Assets))
	}
	if e.Need.Chain != "" && e.Offered.Chains != nil && !slices.Contains(e.Offered.Chains, e.Need.Chain) {
		offers = append(offers, "chains "+strings.Join(ChainNames(e.Offered.Chains), ", "))
	}
	if len(offers) > 0 {
		msg += "; it offers " + strings.Join(offers, "; ")
	}
	return msg
}

func needName(n Need) string {
	var parts []string
	for _, s := range []string{string(n.Asset), string(n.Chain), n.Rail} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "this operation"
	}
	return strings.Join(parts, " on ")
}

func joinAssets(as []money.Asset) string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	return strings.Join(out, ", ")
}

// APICode is the gateway's error code.
func (e *UnsupportedError) APICode() string { return "NOT_SUPPORTED" }

// Is matches by type (errors.Is(err, ErrUnsupported)).
func (e *UnsupportedError) Is(target error) bool {
	_, ok := target.(*UnsupportedError)
	return ok
}

// ErrUnsupported matches every *UnsupportedError (errors.Is).
var ErrUnsupported error = &UnsupportedError{}
