// Package providers declares the outside parties the payments side depends on, with a
// deterministic sandbox simulator of each and an "unconfigured" implementation for live:
//
//   - Bank: the bank partner (NGN virtual accounts with NUBAN numbers, payouts);
//   - Custody: the chain custodian (deposit addresses per chain, on-chain sends);
//   - KYC: identity verification (tier 1 BVN + selfie, tier 2 profile, hosted flows);
//   - FX: the reference exchange rate (used when the exchange's book is empty).
//
// A Set holds one of each for one environment; Environments holds sandbox and live, and
// Default(cfg) is the simulators in sandbox and Unconfigured() in live. Every operation of
// an unconfigured provider returns *UnavailableError (errors.Is ErrProviderUnavailable;
// API code PROVIDER_UNAVAILABLE, 503) and does nothing. A service must call the provider
// BEFORE it writes (or inside its transaction, rolling back on the error), so a live
// request without a partner changes nothing:
//
//	set := envs.For(string(p.Environment))
//	va, err := set.Bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: id.String(), ...})
//	if err != nil { return err } // 503 in live without a bank partner
//
// Every method is idempotent by its request's Reference (retries from durable jobs are
// safe); a business refusal (payout FAILED, KYC rejected) is a result value, a Go error means
// the call failed or its outcome is unknown.
//
// Live adapters are subpackages: paystack is the bank partner (docs/providers.md). Partner
// notifications parse into the partner-neutral InboundTransfer and PayoutOutcome.
//
// Also here, because several domains validate them: chains and their address formats
// (Chain, WalletChains, RecipientChains, ValidateAddress) and NUBAN check digits (NUBAN,
// ValidNUBAN). Mail is in the subpackage mail (owned by identity).
package providers
