package partners

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/idempotency"
	"svc/payments/money"
	"svc/payments/offramps"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

// SandboxDeposits is the deposits service whose sandbox simulation (POST
// /payments/sandbox/deposits) is the sandbox bank posting an inbound_transfer notification:
// the notification is signed with the sandbox secret, verified and stored exactly as the
// partner-events route takes it, and processed by the same code as its job would, in the
// intake's transaction: no job is enqueued (one commit, not two, and no job that finds the
// notification done; issue 27), so the simulation exercises the live path and still
// answers with the deposit. The onramp is read once, FOR UPDATE in that transaction, to
// build the notification, and that read is what processing takes (a bank's webhook has its
// onramp read by account instead).
type SandboxDeposits struct {
	*deposits.Service
	Onramps  *onramps.Service
	Partners *Service
	Secret   string // the sandbox bank's signing secret
}

// Simulate emits the sandbox bank's notification of NGN arriving in the onramp and answers
// the deposit it created.
//
// Errors: deposits.ErrSandboxOnly, onramps.ErrNotFound, onramps.ErrNotActive,
// *payments.FieldError (amount), the database's.
func (s SandboxDeposits) Simulate(ctx context.Context, t payments.Tenant, in deposits.SimulateInput) (deposits.Deposit, error) {
	if t.Environment != payments.Sandbox {
		return deposits.Deposit{}, deposits.ErrSandboxOnly
	}
	if in.Amount != nil && (in.Amount.Asset != money.NGN || !in.Amount.IsPositive()) {
		return deposits.Deposit{}, &payments.FieldError{Field: "amount", Message: "must be a positive NGN amount"}
	}
	// The onramp is read and locked FOR UPDATE in the intake's transaction, and handed to
	// the inline processing, which would otherwise read it again by account (issue 27).
	now := s.Partners.cfg.Now()
	eid := uuid.Must(uuid.NewV7())
	var rc Receipt
	var done *Result
	err := postgres.InTx(ctx, s.Partners.pool, func(tx pgx.Tx) error {
		o, err := s.Onramps.GetTx(ctx, tx, t, in.OnrampID, true)
		if err != nil {
			return err
		}
		if o.StatusAt(now) != onramps.Active {
			return onramps.ErrNotActive
		}
		amount := deposits.SandboxDefaultAmount
		switch {
		case in.Amount != nil:
			amount = *in.Amount
		case o.Amount != nil:
			amount = *o.Amount
		}
		body, sig, err := SandboxNotification(s.Secret, "sbx_evt_"+eid.String(), TypeInboundTransfer, now, SandboxInbound{
			Reference: "sbx_trf_" + eid.String(), BankCode: o.BankCode, AccountNumber: o.AccountNumber, Amount: amount.Minor,
			Currency: string(money.NGN), PaidAt: stamp(now), SenderName: "SANDBOX PAYER", SenderBank: "Sandbox Bank",
			Narration: "sandbox deposit", ShouldFlag: in.ShouldFlag,
		})
		if err != nil {
			return err
		}
		v, err := s.Partners.verify(SandboxBank, sandboxIncoming(body, sig))
		if err != nil {
			return err
		}
		rc, done, err = s.Partners.storeTx(ctx, tx, v, &o)
		return err
	})
	if err != nil {
		return deposits.Deposit{}, err
	}
	var res Result
	if done != nil {
		res = *done
	} else if res, err = s.Partners.Process(ctx, rc.ID); err != nil { // a duplicate: its stored result
		return deposits.Deposit{}, err
	}
	if res.DepositID == nil {
		if res.Refusal != nil {
			return deposits.Deposit{}, res.Refusal
		}
		return deposits.Deposit{}, errors.New("partners: the sandbox deposit was not credited: " + res.Outcome)
	}
	if res.Deposit != nil && res.Deposit.Tenant == t { // as written (PENDING_FX, or SETTLED when converted on receipt): no read back
		return *res.Deposit, nil
	}
	return s.Service.Get(ctx, t, *res.DepositID)
}

// receiveSandbox stores a simulated notification of a sandbox partner, signed with sig, as
// its webhook would arrive (Service.receive).
func (s *Service) receiveSandbox(ctx context.Context, partner string, body []byte, sig string) (Receipt, error) {
	return s.receive(ctx, partner, sandboxIncoming(body, sig))
}

// sandboxIncoming is a sandbox partner's notification, signed with sig, as its webhook
// would arrive.
func sandboxIncoming(body []byte, sig string) Incoming {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(SandboxSignatureHeader, sig)
	return Incoming{Header: h, Body: body, RemoteAddr: "sandbox"}
}

// ErrSandboxOnly: a sandbox simulation called with a live key (403).
var ErrSandboxOnly = deposits.ErrSandboxOnly // one SANDBOX_ONLY refusal for every simulation

// ErrAddressNotFound: the address is none of the tenant's deposit addresses (404).
var ErrAddressNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "no deposit address of yours on that chain and asset"}

// CryptoArrival is crypto to simulate at one of the tenant's deposit addresses.
type CryptoArrival struct {
	Chain   providers.Chain
	Address string
	Amount  money.Amount // USDT or USDC, positive
}

// CustodySimulator simulates the sandbox custodian confirming crypto at one of the tenant's
// deposit addresses (POST /payments/sandbox/crypto-deposits): its deposit.confirmed
// notification is taken in by Receive as the partner route takes it and processed at once.
// The address is the merchant's funding address, a customer's funding request address or an
// offramp's deposit address, of this tenant only.
type CustodySimulator struct {
	Partners *Service
	Custody  providers.Custody // the sandbox custodian; nil: the Partners' sandbox custody
	Secret   string
}

// Simulate emits and processes the notification and answers what processing did.
//
// Errors: ErrSandboxOnly, *payments.FieldError (chain, address, amount), ErrAddressNotFound,
// the database's.
func (s CustodySimulator) Simulate(ctx context.Context, t payments.Tenant, in CryptoArrival) (Receipt, Result, error) {
	if t.Environment != payments.Sandbox {
		return Receipt{}, Result{}, ErrSandboxOnly
	}
	if in.Amount.Asset != money.USDT && in.Amount.Asset != money.USDC {
		return Receipt{}, Result{}, &payments.FieldError{Field: "asset", Message: "must be USDT or USDC"}
	}
	if !in.Amount.IsPositive() {
		return Receipt{}, Result{}, &payments.FieldError{Field: "amount", Message: "must be greater than 0"}
	}
	if err := providers.ValidateAddress(in.Chain, in.Address); err != nil {
		return Receipt{}, Result{}, &payments.FieldError{Field: "address", Message: err.Error()}
	}
	ref, err := s.reference(ctx, t, in)
	if err != nil {
		return Receipt{}, Result{}, err
	}
	now := s.Partners.cfg.Now()
	eid := uuid.Must(uuid.NewV7())
	sum := sha256.Sum256([]byte("sandbox-custody:" + eid.String()))
	body, sig, err := SandboxNotification(s.Secret, "sbx_dep_"+eid.String(), TypeDepositConfirmed, now, SandboxCrypto{
		Reference: ref, Chain: string(in.Chain), Asset: string(in.Amount.Asset), Address: in.Address, Amount: in.Amount.Minor,
		TxHash: "0x" + hex.EncodeToString(sum[:]), ConfirmedAt: stamp(now)})
	if err != nil {
		return Receipt{}, Result{}, err
	}
	rc, err := s.Partners.receiveSandbox(ctx, SandboxCustody, body, sig)
	if err != nil {
		return Receipt{}, Result{}, err
	}
	res, err := s.Partners.Process(ctx, rc.ID)
	if err != nil {
		return Receipt{}, Result{}, err
	}
	return rc, res, nil
}

// reference finds which of the tenant's addresses in.Address is.
func (s CustodySimulator) reference(ctx context.Context, t payments.Tenant, in CryptoArrival) (string, error) {
	custody := s.Custody
	if custody == nil {
		custody = s.Partners.cfg.Providers.For(payments.Sandbox).Custody
	}
	merchant := "merchant:" + t.MerchantID.String()
	a, err := custody.DepositAddress(ctx, providers.AddressRequest{Reference: merchant, Chain: in.Chain, Asset: in.Amount.Asset})
	if err != nil {
		return "", err
	}
	if strings.EqualFold(a.Address, in.Address) {
		return merchant, nil
	}
	var id uuid.UUID
	err = s.Partners.pool.QueryRow(ctx, `select customer_id from crypto_funding_requests
		where merchant_id = $1 and environment = $2 and chain = $3 and asset = $4 and lower(deposit_address) = lower($5)
		order by created_at desc limit 1`, t.MerchantID, t.Environment, string(in.Chain), string(in.Amount.Asset), in.Address).Scan(&id)
	if err == nil {
		return "customer:" + id.String() + ":" + string(in.Amount.Asset), nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("partners: funding address: %w", err)
	}
	err = s.Partners.pool.QueryRow(ctx, `select id from offramps
		where merchant_id = $1 and environment = $2 and chain = $3 and asset = $4 and deposit_address = $5
		order by created_at desc limit 1`, t.MerchantID, t.Environment, string(in.Chain), string(in.Amount.Asset), in.Address).Scan(&id)
	if err == nil {
		return "offramp:" + id.String(), nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("partners: offramp address: %w", err)
	}
	return "", ErrAddressNotFound
}

// SandboxOfframps simulates the sandbox custodian confirming crypto at an offramp's deposit
// address (POST /payments/sandbox/deposits with offramp_id): its deposit.confirmed
// notification for the offramp (reference "offramp:<id>", the offramp's chain, asset and
// address) is signed with the sandbox secret, taken in by Receive exactly as the
// partner-events route takes it and processed at once by Process (its job finds it done),
// so the simulation exercises the live path and still answers with the crypto deposit.
type SandboxOfframps struct {
	Offramps *offramps.Service
	Partners *Service
	Secret   string // the sandbox custodian's signing secret
}

// OfframpArrival is crypto to simulate at an offramp's deposit address.
type OfframpArrival struct {
	OfframpID uuid.UUID
	Amount    string // a decimal string in the offramp's asset; required
	// Key is the request's idempotency key ("": none). The notification's event id is
	// derived from it (with the tenant and the offramp), so a repeat of the key finds the
	// stored notification: it is processed once and the repeat answers the same deposit.
	Key string
}

// Simulate emits the sandbox custodian's notification of amount confirmed at the offramp's
// address, processes it, and answers the crypto deposit it created.
//
// Errors: offramps.ErrSandboxOnly, offramps.ErrNotFound, a field error on amount,
// offramps.ErrNotActive, idempotency.ErrKeyReused (the key was used with another amount),
// offramps.ErrNoPrice and *providers.UnavailableError (the notification stays stored and
// its job retries: a repeat of the key takes it up), the database's.
func (s SandboxOfframps) Simulate(ctx context.Context, t payments.Tenant, in OfframpArrival) (offramps.CryptoDeposit, error) {
	if t.Environment != payments.Sandbox {
		return offramps.CryptoDeposit{}, offramps.ErrSandboxOnly
	}
	o, err := s.Offramps.Get(ctx, t, in.OfframpID)
	if err != nil {
		return offramps.CryptoDeposit{}, err
	}
	if in.Amount == "" {
		return offramps.CryptoDeposit{}, &payments.FieldError{Field: "amount", Message: "is required with offramp_id"}
	}
	amt, err := offramps.ParseAmount(o.Asset, in.Amount)
	if err != nil {
		return offramps.CryptoDeposit{}, money.AsField(err, "amount")
	}
	eid := "sbx_dep_" + uuid.Must(uuid.NewV7()).String()
	if in.Key != "" {
		sum := sha256.Sum256([]byte("offramp-simulation\x00" + t.MerchantID.String() + "\x00" + t.Environment + "\x00" + o.ID.String() +
			"\x00" + in.Key))
		eid = "sbx_dep_key_" + hex.EncodeToString(sum[:16])
		stored, found, err := s.storedAmount(ctx, eid)
		switch {
		case err != nil:
			return offramps.CryptoDeposit{}, err
		case found && stored != amt.Minor:
			return offramps.CryptoDeposit{}, idempotency.ErrKeyReused
		case found: // a repeat: the stored notification answers, whatever the offramp's state now
			return s.take(ctx, t, eid, nil, "", amt.Minor)
		}
	}
	if o.Status != offramps.Active { // refused before anything is emitted
		return offramps.CryptoDeposit{}, offramps.ErrNotActive
	}
	now := s.Partners.cfg.Now()
	sum := sha256.Sum256([]byte("sandbox-custody:" + eid))
	body, sig, err := SandboxNotification(s.Secret, eid, TypeDepositConfirmed, now, SandboxCrypto{
		Reference: "offramp:" + o.ID.String(), Chain: string(o.Chain), Asset: string(o.Asset), Address: o.DepositAddress,
		Amount: amt.Minor, TxHash: "0x" + hex.EncodeToString(sum[:]), ConfirmedAt: stamp(now)})
	if err != nil {
		return offramps.CryptoDeposit{}, err
	}
	return s.take(ctx, t, eid, body, sig, amt.Minor)
}

// take hands the signed notification (body, sig) to Receive, then Process, and answers
// the crypto deposit it created; body nil: the notification eid is already stored. A
// notification another request stored under the same id meanwhile (the same key at the
// same time) must carry the same amount (minor).
func (s SandboxOfframps) take(ctx context.Context, t payments.Tenant, eid string, body []byte, sig string, minor int64) (offramps.CryptoDeposit, error) {
	var id uuid.UUID
	if body != nil {
		rc, err := s.Partners.receiveSandbox(ctx, SandboxCustody, body, sig)
		if err != nil {
			return offramps.CryptoDeposit{}, err
		}
		if rc.Duplicate {
			if stored, _, err := s.storedAmount(ctx, eid); err != nil {
				return offramps.CryptoDeposit{}, err
			} else if stored != minor {
				return offramps.CryptoDeposit{}, idempotency.ErrKeyReused
			}
		}
		id = rc.ID
	} else if err := s.Partners.pool.QueryRow(ctx, `select id from partner_events where provider = $1 and event_id = $2`,
		SandboxCustody, eid).Scan(&id); err != nil {
		return offramps.CryptoDeposit{}, fmt.Errorf("partners: stored sandbox notification: %w", err)
	}
	res, err := s.Partners.Process(ctx, id)
	switch {
	case err != nil:
		return offramps.CryptoDeposit{}, err
	case res.DepositID != nil:
		return s.Offramps.CryptoDeposit(ctx, t, *res.DepositID)
	case res.Refusal != nil:
		return offramps.CryptoDeposit{}, res.Refusal
	case res.Status == Rejected: // a repeat of a refused simulation: the refusal is not kept, its outcome is
		return offramps.CryptoDeposit{}, &payments.Error{Code: "INVALID_STATE", Message: "the deposit under this idempotency key was refused: " + res.Outcome}
	}
	return offramps.CryptoDeposit{}, errors.New("partners: the sandbox offramp deposit was not credited: " + res.Outcome)
}

// storedAmount reads the amount of the sandbox custodian's stored notification eid.
func (s SandboxOfframps) storedAmount(ctx context.Context, eid string) (int64, bool, error) {
	var body []byte
	err := s.Partners.pool.QueryRow(ctx, `select body from partner_events where provider = $1 and event_id = $2`,
		SandboxCustody, eid).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("partners: stored sandbox notification: %w", err)
	}
	var ev struct {
		Data SandboxCrypto `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return 0, false, fmt.Errorf("partners: stored sandbox notification %s: %w", eid, err)
	}
	return ev.Data.Amount, true, nil
}
