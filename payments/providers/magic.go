package providers

import (
	"context"
	"encoding/hex"
	"strings"

	"svc/payments/money"
)

// Sandbox magic values (issue 11, docs/sandbox.md): inputs that make a sandbox simulator
// refuse, deterministically, in the style of Stripe's test card numbers, so a merchant can
// drive every failure state with a test key. The live providers are separate values
// (Environments.Live) and never look at them.
//
//   - FX: an NGN amount whose kobo are .13 (e.g. 5000.13) is refused at conversion
//     (ConversionChecker): the deposit ends FAILED, its NGN returned to the sender;
//   - custody: a send to the family's SendRejected* address is refused by the chain
//     (SendFailed): withdrawals and on-chain deposit settlements end FAILED, funds back;
//   - bank: a payout to account number PayoutRejectedAccountNGN (NGN), PayoutRejectedAccountUS
//     (ACH or wire) or the IBAN PayoutRejectedIBAN (SWIFT) is refused by the bank
//     (PayoutFailed): transfers and offramp payouts end FAILED, funds back;
//   - KYC: tier 1 fails for a BVN starting 000; tier 2 is rejected without
//     most_recent_occupation or with acting_as_intermediary true (see Sandbox).
const (
	// FXRejectedKobo: an NGN amount whose minor units end in these two digits is refused.
	FXRejectedKobo = 13

	// SendRejectedEVM is refused on every EVM chain (ETHEREUM, BASE, POLYGON, CELO,
	// ARBITRUM, OPTIMISM); compared case-insensitively.
	SendRejectedEVM = "0x0000000000000000000000000000000000fa11ed"
	// SendRejectedAptos is refused on APTOS; compared case-insensitively.
	SendRejectedAptos = "0x0000000000000000000000000000000000000000000000000000000000fa11ed"
	// SendRejectedSolana is refused on SOLANA (a valid base58 encoding of 32 bytes).
	SendRejectedSolana = "SandboxSendRejected111111111111111111111111"
	// SendRejectedTron is refused on TRON (base58check of 0x41, 17 zero bytes, fa11ed).
	SendRejectedTron = "T9yD14Nj9j7xAB4dbGeiX9h95GPNcT4NnY"

	// PayoutRejectedAccountNGN is refused on the NGN rail (transfers to a domestic bank
	// account, offramp NGN payouts): "account does not exist".
	PayoutRejectedAccountNGN = "0000000000"
	// PayoutRejectedAccountUS is refused on US_ACH and US_WIRE (Stripe's "no account" test
	// number).
	PayoutRejectedAccountUS = "000111111116"
	// PayoutRejectedIBAN is refused on SWIFT (a valid IBAN: GB, bank REJT).
	PayoutRejectedIBAN = "GB98REJT00000000000000"
)

// SendRejected returns the address a sandbox send to chain is refused for ("" for an
// unknown chain).
func SendRejected(chain Chain) string {
	switch chain.Family() {
	case EVM:
		return SendRejectedEVM
	case AptosFamily:
		return SendRejectedAptos
	case SolanaFamily:
		return SendRejectedSolana
	case TronFamily:
		return SendRejectedTron
	}
	return ""
}

// sendRefused reports whether the sandbox chain refuses req, and why.
func sendRefused(req SendRequest) (string, bool) {
	magic := SendRejected(req.Chain)
	if magic == "" {
		return "", false
	}
	hit := req.To == magic
	if f := req.Chain.Family(); f == EVM || f == AptosFamily {
		hit = strings.EqualFold(req.To, magic)
	}
	if !hit {
		return "", false
	}
	return "the " + string(req.Chain) + " network rejected the transaction (sandbox rejected address " + magic + ")", true
}

// payoutRefused reports whether the sandbox bank refuses req, and why.
func payoutRefused(req PayoutRequest) (string, bool) {
	switch req.Rail {
	case RailNGN, "":
		if req.AccountNumber == PayoutRejectedAccountNGN {
			return "the beneficiary bank reported that the account does not exist (sandbox rejected account " + PayoutRejectedAccountNGN + ")", true
		}
	case RailUSACH, RailUSWire:
		if req.AccountNumber == PayoutRejectedAccountUS {
			return "no account found for this routing and account number (sandbox rejected account " + PayoutRejectedAccountUS + ")", true
		}
	case RailSWIFT:
		if req.Details["iban"] == PayoutRejectedIBAN || req.AccountNumber == PayoutRejectedIBAN {
			return "the beneficiary bank rejected the wire: invalid or closed account (sandbox rejected IBAN " + PayoutRejectedIBAN + ")", true
		}
	}
	return "", false
}

// ConversionChecker is implemented by an FX provider that can refuse a conversion before
// it happens (the sandbox's magic amount; a live FX adapter may implement it too). A
// service converting money asks it, when the environment's FX implements it, before it
// posts the conversion; a refusal is a business outcome (Decision.Approved false), a Go
// error means the answer is unknown (retry).
type ConversionChecker interface {
	CheckConversion(ctx context.Context, req ConversionRequest) (Decision, error)
}

// ConversionRequest is a conversion about to happen.
type ConversionRequest struct {
	Reference string       // e.g. "deposit:<id>"
	From      money.Amount // what is converted
	To        money.Asset
}

// CheckConversion implements ConversionChecker: an NGN amount whose kobo are .13 is
// refused (FXRejectedKobo); everything else converts.
func (s *Sandbox) CheckConversion(_ context.Context, req ConversionRequest) (Decision, error) {
	ref := "sbx_fx_" + hex.EncodeToString(derive("fx", req.Reference)[:8])
	if req.From.Asset == money.NGN && req.From.Minor%100 == FXRejectedKobo {
		return Decision{Approved: false, ProviderReference: ref,
			Reason: "the conversion desk refused the conversion (sandbox amount ending in .13)"}, nil
	}
	return Decision{Approved: true, ProviderReference: ref}, nil
}

var _ ConversionChecker = (*Sandbox)(nil)
