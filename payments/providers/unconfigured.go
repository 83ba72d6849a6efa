package providers

import (
	"context"

	"svc/payments/money"
)

// Unconfigured is the set whose every operation answers *UnavailableError (503
// PROVIDER_UNAVAILABLE) and does nothing: live, until the operator configures a partner.
func Unconfigured() Set {
	return Set{Bank: noBank{}, Custody: noCustody{}, KYC: noKYC{}, FX: noFX{}}
}

type noBank struct{}

func (noBank) CreateVirtualAccount(context.Context, VirtualAccountRequest) (VirtualAccount, error) {
	return VirtualAccount{}, unavailable("bank", "virtual account")
}

func (noBank) Payout(context.Context, PayoutRequest) (PayoutResult, error) {
	return PayoutResult{}, unavailable("bank", "payout")
}

type noCustody struct{}

func (noCustody) DepositAddress(context.Context, AddressRequest) (Address, error) {
	return Address{}, unavailable("custody", "deposit address")
}

func (noCustody) Send(context.Context, SendRequest) (SendResult, error) {
	return SendResult{}, unavailable("custody", "send")
}

type noKYC struct{}

func (noKYC) VerifyTier1(context.Context, Tier1Request) (Decision, error) {
	return Decision{}, unavailable("kyc", "tier 1 verification")
}

func (noKYC) VerifyTier2(context.Context, Tier2Request) (Decision, error) {
	return Decision{}, unavailable("kyc", "tier 2 verification")
}

func (noKYC) Initiate(context.Context, InitiateRequest) (Session, error) {
	return Session{}, unavailable("kyc", "verification flow")
}

type noFX struct{}

func (noFX) Rate(context.Context, money.Asset, money.Asset) (Quote, error) {
	return Quote{}, unavailable("fx", "reference rate")
}

// Configured reports whether p (a Bank, Custody, KYC or FX of a Set) is a real provider and
// not the unconfigured stand-in. Services whose provider call runs later, in a durable job
// (withdrawals, payouts, transfers), ask it before they debit anything, so a live request
// without a partner answers 503 PROVIDER_UNAVAILABLE and changes nothing.
func Configured(p any) bool {
	switch p.(type) {
	case nil, noBank, noCustody, noKYC, noFX:
		return false
	}
	return true
}
