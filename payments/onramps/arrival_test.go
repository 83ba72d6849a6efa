package onramps_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/onramps"
	"svc/payments/partners"
	"svc/payments/paymentstest"
	"svc/payments/providers"
)

// TestMoneyForAnExpiredOnrampIsGivenBack sends the sandbox bank's notification of a
// transfer into an expired TEMPORARY onramp through the real money-arrival path (partners'
// intake and processing, the by-account lookup, deposits.Receive), before the sweep has
// stored EXPIRED and after it: both times it is refused as not active, no deposit is made
// and the money is given back to the sender.
func TestMoneyForAnExpiredOnrampIsGivenBack(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	start := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	clk := newClock(start)
	rec, inserter := paymentstest.Recorder(t, pool)
	envs := providers.Default(providers.SandboxConfig{})
	svc := onramps.New(pool, onramps.Config{Providers: envs, Events: rec, Now: clk.Now})
	deps := deposits.New(pool, deposits.Config{Onramps: svc, Providers: envs, Events: rec, Jobs: inserter, Now: clk.Now})
	const secret = "onramps-arrival-secret"
	inbound, err := partners.New(pool, partners.Config{Partners: []partners.Partner{partners.SandboxBankPartner(secret)},
		Jobs: inserter, Events: rec, Deposits: deps, Onramps: svc, Providers: envs, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tn := payments.Tenant{MerchantID: uuid.Must(uuid.NewV7()), Environment: payments.Sandbox}
	o := put(t, pool, tn, onramps.Temporary, onramps.Active, start)
	clk.set(start.Add(onramps.TemporaryLifetime))

	for i, swept := range []bool{false, true} {
		if swept {
			if n, err := svc.ExpireDue(ctx, clk.Now()); err != nil || n != 1 {
				t.Fatalf("sweep: %d, %v", n, err)
			}
		}
		now := clk.Now()
		id := uuid.Must(uuid.NewV7()).String()
		body, sig, err := partners.SandboxNotification(secret, "evt_"+id, partners.TypeInboundTransfer, now, partners.SandboxInbound{
			Reference: "trf_" + id, BankCode: o.BankCode, AccountNumber: o.AccountNumber, Amount: o.Amount.Minor,
			Currency: "NGN", PaidAt: now.Format("2006-01-02T15:04:05.000Z"), SenderName: "PAYER", SenderBank: "Sandbox Bank",
			Narration: "late payment"})
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set(partners.SandboxSignatureHeader, sig)
		rc, err := inbound.Receive(ctx, partners.SandboxBank, partners.Incoming{Header: h, Body: body, RemoteAddr: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := inbound.Process(ctx, rc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != partners.Rejected || !errors.Is(res.Refusal, onramps.ErrNotActive) || res.DepositID != nil {
			t.Fatalf("swept %v: %+v", swept, res)
		}
		var deposited, refunds int
		if err := pool.QueryRow(ctx, `select (select count(*) from deposits), (select count(*) from partner_refunds where onramp_id = $1)`,
			o.ID).Scan(&deposited, &refunds); err != nil {
			t.Fatal(err)
		}
		if deposited != 0 || refunds != i+1 {
			t.Fatalf("swept %v: %d deposits, %d refunds of the onramp; want none and %d", swept, deposited, refunds, i+1)
		}
		if s := stored(t, pool, o.ID); s != map[bool]string{false: onramps.Active, true: onramps.Expired}[swept] {
			t.Fatalf("swept %v: stored %s", swept, s)
		}
	}
}
