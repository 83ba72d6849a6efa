package partners_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svc/payments/jobs"
	"svc/payments/money"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/persistence/postgres/pgtest"
)

// busyRefunder is a partner that refuses a second refund of a charge while the first is in
// flight (as Paystack answers "a refund for this transaction is already in progress"), and
// takes a while to process the first.
type busyRefunder struct {
	inFlight, most, calls atomic.Int32
}

func (b *busyRefunder) Refund(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	n := b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	b.calls.Add(1)
	for m := b.most.Load(); n > m && !b.most.CompareAndSwap(m, n); m = b.most.Load() {
	}
	if n > 1 {
		return providers.RefundResult{Status: providers.RefundFailed, FailureReason: "a refund for this transaction is already in progress"}, nil
	}
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
		return providers.RefundResult{}, ctx.Err()
	}
	return providers.RefundResult{Status: providers.RefundProcessed, ProviderReference: "rfd_" + req.Reference}, nil
}

// Issue 32 item 3: one advancer per refund. Several runs of the refund's step at once (the
// job and a run its notification woke, or two workers) ask the partner once; a lost race can
// no longer write FAILED over the winner's REFUNDED (which told the operator to refund by
// hand: a double refund).
func TestConcurrentRefundStepsAskThePartnerOnce(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	inserter, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bank := partners.SandboxBankPartner(secret)
	refunder := &busyRefunder{}
	bank.Refunder = refunder
	svc, err := partners.New(pool, partners.Config{Partners: []partners.Partner{bank}, Jobs: inserter})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	body, sig, _ := partners.SandboxNotification(secret, "in_race", partners.TypeInboundTransfer, now, partners.SandboxInbound{
		Reference: "sbx_trf_race", BankCode: "999", AccountNumber: "0000000009", Amount: 2_500_000, Currency: "NGN", PaidAt: stamp(now)})
	rc, err := svc.Receive(ctx, partners.SandboxBank, incoming(body, sig))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := svc.Process(ctx, rc.ID); err != nil || res.Status != partners.Rejected {
		t.Fatalf("%+v %v", res, err)
	}
	r, err := svc.RefundOf(ctx, rc.ID)
	if err != nil || r.Status != partners.RefundPending {
		t.Fatalf("%+v %v", r, err)
	}

	const runs = 6
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if wait, err := svc.AdvanceRefund(ctx, r.ID); err != nil || wait != 0 {
				errs <- fmt.Errorf("advance: wait %v, %v", wait, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r, _ = svc.RefundOf(ctx, rc.ID)
	if r.Status != partners.RefundRefunded || r.Amount != money.New(money.NGN, 2_500_000) || r.RefundedAt == nil {
		t.Fatalf("after %d concurrent steps: %+v (a lost race must not fail the refund the partner processed)", runs, r)
	}
	if most, calls := refunder.most.Load(), refunder.calls.Load(); most != 1 || calls != 1 {
		t.Fatalf("the partner was asked %d times, %d at once: want once", calls, most)
	}
	// A later run finds it REFUNDED and asks nothing.
	if wait, err := svc.AdvanceRefund(ctx, r.ID); err != nil || wait != 0 || refunder.calls.Load() != 1 {
		t.Fatalf("again: %v %v, %d calls", wait, err, refunder.calls.Load())
	}
}

// Every pair of refund statuses: the moves RefundMachine allows and no other.
func TestRefundMachine(t *testing.T) {
	allowed := map[[2]string]bool{
		{partners.RefundPending, partners.RefundSubmitted}:  true,
		{partners.RefundPending, partners.RefundRefunded}:   true,
		{partners.RefundPending, partners.RefundFailed}:     true,
		{partners.RefundSubmitted, partners.RefundRefunded}: true,
		{partners.RefundSubmitted, partners.RefundFailed}:   true,
	}
	all := []string{partners.RefundPending, partners.RefundSubmitted, partners.RefundRefunded, partners.RefundFailed}
	for _, from := range all {
		for _, to := range all {
			err := partners.RefundMachine.Check(from, to)
			if got := err == nil; got != allowed[[2]string{from, to}] {
				t.Errorf("%s -> %s: %v", from, to, err)
			}
		}
	}
}

// flakyRefunder is a partner unavailable at its first call that processes the refund at the
// next (asking again answers the same refund: the reference is the refund's).
type flakyRefunder struct{ calls atomic.Int32 }

func (f *flakyRefunder) Refund(_ context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	if f.calls.Add(1) == 1 {
		return providers.RefundResult{}, errors.New("partner unavailable")
	}
	return providers.RefundResult{Status: providers.RefundProcessed, ProviderReference: "rfd_" + req.Reference}, nil
}

// A refund step's transaction that PostgreSQL aborts (here a serialization failure raised
// once by a trigger, as a deadlock would) is run again by postgres.InTx: the step answers
// what the run that committed found, not the aborted run's partner error too, which would
// make the job retry a refund already recorded REFUNDED.
func TestARerunRefundStepAnswersOnlyTheCommittedRun(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	inserter, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bank := partners.SandboxBankPartner(secret)
	refunder := &flakyRefunder{}
	bank.Refunder = refunder
	svc, err := partners.New(pool, partners.Config{Partners: []partners.Partner{bank}, Jobs: inserter})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	body, sig, _ := partners.SandboxNotification(secret, "in_rerun", partners.TypeInboundTransfer, now, partners.SandboxInbound{
		Reference: "sbx_trf_rerun", BankCode: "999", AccountNumber: "0000000009", Amount: 2_500_000, Currency: "NGN", PaidAt: stamp(now)})
	rc, err := svc.Receive(ctx, partners.SandboxBank, incoming(body, sig))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := svc.Process(ctx, rc.ID); err != nil || res.Status != partners.Rejected {
		t.Fatalf("%+v %v", res, err)
	}
	r, err := svc.RefundOf(ctx, rc.ID)
	if err != nil || r.Status != partners.RefundPending {
		t.Fatalf("%+v %v", r, err)
	}
	// The first write of the step aborts its transaction; a sequence, not rolled back with
	// it, counts the writes.
	if _, err := pool.Exec(ctx, `create sequence refund_writes;
		create function abort_first_refund_write() returns trigger language plpgsql as $$ begin
			if nextval('refund_writes') = 1 then
				raise exception 'aborted by the test' using errcode = 'serialization_failure';
			end if;
			return new;
		end $$;
		create trigger abort_first_refund_write before update on partner_refunds
			for each row execute function abort_first_refund_write()`); err != nil {
		t.Fatal(err)
	}
	if wait, err := svc.AdvanceRefund(ctx, r.ID); err != nil || wait != 0 {
		t.Fatalf("the step answered wait %v, %v; want 0 and no error: its committed run found the refund processed", wait, err)
	}
	r, _ = svc.RefundOf(ctx, rc.ID)
	if r.Status != partners.RefundRefunded || refunder.calls.Load() != 2 {
		t.Fatalf("after the rerun: %+v, %d partner calls; want REFUNDED after 2", r, refunder.calls.Load())
	}
}
