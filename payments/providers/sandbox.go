package providers

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"svc/payments/money"
)

// SandboxConfig configures the simulators.
type SandboxConfig struct {
	BankCode string // 3 digits; default "999"
	BankName string // default "Svc Sandbox Bank"
	// KYCURL is the base of hosted verification URLs; default
	// "https://sandbox.svc.example/kyc/".
	KYCURL string
	// Rates are reference rates "FROM/TO" -> decimal (units of TO per FROM); default
	// USDT/NGN, USDC/NGN and USD/NGN at 1600. Inverses are derived; USD, USDT and USDC are
	// at par with each other.
	Rates map[string]string
	Now   func() time.Time
}

// Sandbox is the deterministic simulator of every provider: the same request always gives
// the same answer, nothing leaves the process. Rules (DESIGN.md section 6):
//
//   - bank: virtual account numbers are valid NUBANs at BankCode whose serial is derived
//     from the reference and attempt; payouts settle at once;
//   - custody: deposit addresses are derived from the reference and chain in the chain's
//     format; sends are confirmed at once with a derived transaction hash;
//   - KYC tier 1: any 11-digit BVN passes except one starting 000, which fails;
//   - KYC tier 2: passes unless most_recent_occupation is missing or acting_as_intermediary
//     is true;
//   - FX: the configured reference rates; CheckConversion refuses an NGN amount ending in .13;
//   - magic values that make a step fail (payouts, sends, conversions): see magic.go and
//     docs/sandbox.md.
type Sandbox struct {
	cfg   SandboxConfig
	rates map[[2]money.Asset]money.Rate
}

// NewSandbox returns the simulator set. It panics on a malformed configured rate or bank
// code (configuration is checked at start by the caller's flag parsing).
func NewSandbox(cfg SandboxConfig) Set {
	s := newSandbox(cfg)
	return Set{Bank: s, Custody: s, KYC: s, FX: s}
}

func newSandbox(cfg SandboxConfig) *Sandbox {
	if cfg.BankCode == "" {
		cfg.BankCode = "999"
	}
	if len(cfg.BankCode) != 3 || !digits(cfg.BankCode) {
		panic("providers: sandbox bank code must be 3 digits")
	}
	if cfg.BankName == "" {
		cfg.BankName = "Svc Sandbox Bank"
	}
	if cfg.KYCURL == "" {
		cfg.KYCURL = "https://sandbox.svc.example/kyc/"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rates == nil {
		cfg.Rates = map[string]string{"USDT/NGN": "1600", "USDC/NGN": "1600", "USD/NGN": "1600"}
	}
	s := &Sandbox{cfg: cfg, rates: map[[2]money.Asset]money.Rate{}}
	for _, a := range []money.Asset{money.USD, money.USDT, money.USDC} {
		for _, b := range []money.Asset{money.USD, money.USDT, money.USDC} {
			s.rates[[2]money.Asset{a, b}] = money.MustRate("1")
		}
	}
	s.rates[[2]money.Asset{money.NGN, money.NGN}] = money.MustRate("1")
	for pair, v := range cfg.Rates {
		from, to, ok := strings.Cut(pair, "/")
		if !ok || !money.Asset(from).Valid() || !money.Asset(to).Valid() {
			panic(fmt.Sprintf("providers: bad sandbox rate pair %q", pair))
		}
		r := money.MustRate(v)
		s.rates[[2]money.Asset{money.Asset(from), money.Asset(to)}] = r
		if _, ok := cfg.Rates[to+"/"+from]; !ok {
			inv, err := r.Inverse()
			if err != nil {
				panic(err)
			}
			s.rates[[2]money.Asset{money.Asset(to), money.Asset(from)}] = inv
		}
	}
	return s
}

func derive(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// CreateVirtualAccount implements Bank.
func (s *Sandbox) CreateVirtualAccount(_ context.Context, req VirtualAccountRequest) (VirtualAccount, error) {
	d := derive("va", req.Reference, fmt.Sprint(req.Attempt))
	serial := fmt.Sprintf("%09d", binary.BigEndian.Uint64(d[:8])%1_000_000_000)
	num, err := NUBAN(s.cfg.BankCode, serial)
	if err != nil {
		return VirtualAccount{}, err
	}
	return VirtualAccount{
		BankCode: s.cfg.BankCode, BankName: s.cfg.BankName, AccountNumber: num,
		AccountName: req.AccountName, ProviderReference: "sbx_va_" + hex.EncodeToString(d[8:16]),
	}, nil
}

// Payout implements Bank: settled at once, unless the account is a rejected magic value
// (magic.go), which fails.
func (s *Sandbox) Payout(_ context.Context, req PayoutRequest) (PayoutResult, error) {
	d := derive("payout", req.Reference)
	if reason, refused := payoutRefused(req); refused {
		return PayoutResult{Status: PayoutFailed, FailureReason: reason, ProviderReference: "sbx_po_" + hex.EncodeToString(d[:8])}, nil
	}
	return PayoutResult{Status: PayoutSettled, ProviderReference: "sbx_po_" + hex.EncodeToString(d[:8])}, nil
}

// DepositAddress implements Custody.
func (s *Sandbox) DepositAddress(_ context.Context, req AddressRequest) (Address, error) {
	d := derive("address", req.Reference, string(req.Chain))
	var addr string
	switch req.Chain.Family() {
	case EVM:
		addr = "0x" + hex.EncodeToString(d[:20])
	case AptosFamily:
		addr = "0x" + hex.EncodeToString(d)
	case SolanaFamily:
		k := d
		k[0] |= 0x80 // a leading byte that is never zero keeps the length at 43-44 characters
		addr = base58Encode(k)
	case TronFamily:
		raw := append([]byte{0x41}, d[:20]...)
		addr = base58Encode(append(raw, checksum(raw)...))
	default:
		return Address{}, fmt.Errorf("providers: unknown chain %q", req.Chain)
	}
	return Address{Chain: req.Chain, Asset: req.Asset, Address: addr}, nil
}

// Send implements Custody: confirmed at once, unless the destination is the chain's
// rejected magic address (magic.go), which fails.
func (s *Sandbox) Send(_ context.Context, req SendRequest) (SendResult, error) {
	if reason, refused := sendRefused(req); refused {
		return SendResult{Status: SendFailed, FailureReason: reason}, nil
	}
	d := derive("send", req.Reference)
	hash := "0x" + hex.EncodeToString(d)
	if req.Chain.Family() == SolanaFamily || req.Chain.Family() == TronFamily {
		hash = hex.EncodeToString(d)
	}
	return SendResult{Status: SendConfirmed, TxHash: hash}, nil
}

// VerifyTier1 implements KYC: a BVN starting 000 fails.
func (s *Sandbox) VerifyTier1(_ context.Context, req Tier1Request) (Decision, error) {
	ref := "sbx_kyc1_" + hex.EncodeToString(derive("kyc1", req.Reference, req.BVN)[:8])
	if strings.HasPrefix(req.BVN, "000") {
		return Decision{Approved: false, Reason: "BVN could not be verified", ProviderReference: ref}, nil
	}
	return Decision{Approved: true, ProviderReference: ref}, nil
}

// VerifyTier2 implements KYC: rejected without an occupation or when acting as an
// intermediary.
func (s *Sandbox) VerifyTier2(_ context.Context, req Tier2Request) (Decision, error) {
	ref := "sbx_kyc2_" + hex.EncodeToString(derive("kyc2", req.Reference)[:8])
	switch {
	case req.MostRecentOccupation == "":
		return Decision{Approved: false, Reason: "most_recent_occupation is missing", ProviderReference: ref}, nil
	case req.ActingAsIntermediary:
		return Decision{Approved: false, Reason: "acting as an intermediary is not supported", ProviderReference: ref}, nil
	}
	return Decision{Approved: true, ProviderReference: ref}, nil
}

// Initiate implements KYC: a hosted-flow URL valid for an hour.
func (s *Sandbox) Initiate(_ context.Context, req InitiateRequest) (Session, error) {
	ref := fmt.Sprintf("sbx_kyc%d_%s", req.Tier, hex.EncodeToString(derive("initiate", req.Reference, fmt.Sprint(req.Tier))[:8]))
	return Session{
		Reference: ref, Status: "PENDING",
		VerificationURL: s.cfg.KYCURL + ref,
		ExpiresAt:       s.cfg.Now().UTC().Add(time.Hour),
	}, nil
}

// Rate implements FX.
func (s *Sandbox) Rate(_ context.Context, from, to money.Asset) (Quote, error) {
	r, ok := s.rates[[2]money.Asset{from, to}]
	if !ok {
		return Quote{}, fmt.Errorf("providers: no sandbox rate %s/%s", from, to)
	}
	return Quote{From: from, To: to, Rate: r, At: s.cfg.Now().UTC(), Source: "sandbox"}, nil
}
