package partners

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/money"
	"svc/payments/onramps"
)

// SandboxDeposits is the deposits service whose sandbox simulation (POST
// /payments/sandbox/deposits) is the sandbox bank posting an inbound_transfer notification:
// the notification is signed with the sandbox secret, taken in by Receive exactly as the
// partner-events route takes it, and processed at once by Process (its job finds it done),
// so the simulation exercises the live path and still answers with the deposit.
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
	o, err := s.Onramps.Get(ctx, t, in.OnrampID)
	if err != nil {
		return deposits.Deposit{}, err
	}
	now := s.Partners.cfg.Now()
	if o.StatusAt(now) != onramps.Active {
		return deposits.Deposit{}, onramps.ErrNotActive
	}
	amount := deposits.SandboxDefaultAmount
	switch {
	case in.Amount != nil:
		amount = *in.Amount
	case o.Amount != nil:
		amount = *o.Amount
	}
	eid := uuid.Must(uuid.NewV7())
	body, sig, err := SandboxNotification(s.Secret, "sbx_evt_"+eid.String(), TypeInboundTransfer, now, SandboxInbound{
		Reference: "sbx_trf_" + eid.String(), BankCode: o.BankCode, AccountNumber: o.AccountNumber, Amount: amount.Minor,
		Currency: string(money.NGN), PaidAt: stamp(now), SenderName: "SANDBOX PAYER", SenderBank: "Sandbox Bank",
		Narration: "sandbox deposit", ShouldFlag: in.ShouldFlag,
	})
	if err != nil {
		return deposits.Deposit{}, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(SandboxSignatureHeader, sig)
	rc, err := s.Partners.Receive(ctx, SandboxBank, Incoming{Header: h, Body: body, RemoteAddr: "sandbox"})
	if err != nil {
		return deposits.Deposit{}, err
	}
	res, err := s.Partners.Process(ctx, rc.ID)
	if err != nil {
		return deposits.Deposit{}, err
	}
	if res.DepositID == nil {
		if res.Refusal != nil {
			return deposits.Deposit{}, res.Refusal
		}
		return deposits.Deposit{}, errors.New("partners: the sandbox deposit was not credited: " + res.Outcome)
	}
	return s.Service.Get(ctx, t, *res.DepositID)
}
