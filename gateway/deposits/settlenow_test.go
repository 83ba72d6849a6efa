package deposits_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/deposits"
)

// With deposits.Config SettleInConversion (svcd, issue 27), an INTERNAL_BALANCE deposit's
// conversion step settles it in the same transaction: one job and one commit, the deposit
// still passing through PENDING_WITHDRAWAL with its event. A settlement hook that refuses
// rolls the settlement back alone: the conversion stands, the deposit waits
// PENDING_WITHDRAWAL with its job, and that job settles it, as without the option. Steps
// run alone and batched (concurrently), merchant and customer deposits alike.
func TestSettledInTheConversionsTransaction(t *testing.T) {
	hook := &countingHook{check: func(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error {
		var status string
		if err := tx.QueryRow(ctx, `select status from deposits where id = $1`, d.ID).Scan(&status); err != nil {
			return err
		}
		if status != "SETTLED" {
			return errors.New("hook sees " + status)
		}
		return nil
	}}
	r := newRig(t, rigOptions{noWorkers: true, settleInConversion: true, settled: hook})
	countHookRuns(t, r)
	key := r.a.SandboxKey
	cust := r.customer(t, key, "s1@example.com")
	r.tier1(t, key, cust)
	ctx := context.Background()
	pendingJobs := func(id uuid.UUID) int {
		var n int
		if err := r.pool.QueryRow(ctx, `select count(*) from river_job where kind = 'deposit_step'
			and args->>'deposit_id' = $1 and args->>'from' = 'PENDING_WITHDRAWAL'`, id.String()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const n = 8 // even: the merchant's; odd: the customer's; 16,080 NGN = 10 USDT each
	ids := make([]uuid.UUID, n)
	for i := range ids {
		o := r.temporary(t, key, 16080)
		if i%2 == 1 {
			o = r.temporary(t, key, 16080, "customer_id", cust)
		}
		sim := r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID})
		d := decode[depositJSON](t, sim)
		ids[i] = uuid.MustParse(d.ID)
		// The simulation answers the deposit as its transaction wrote it, without reading it
		// back: byte for byte what a read answers (a merchant's deposit: no customer shown).
		if got := r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+d.ID, key, nil); i%2 == 0 && string(got.Data) != string(sim.Data) {
			t.Fatalf("simulation answered %s, a read answers %s", sim.Data, got.Data)
		}
	}
	// The sandbox bank's notifications were processed in their intake's transaction: no
	// partner_event job (partners.SandboxDeposits).
	var jobs, unprocessed int
	if err := r.pool.QueryRow(ctx, `select (select count(*) from river_job where kind = 'partner_event'),
		(select count(*) from partner_events where status <> 'PROCESSED' or deposit_id is null)`).Scan(&jobs, &unprocessed); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 || unprocessed != 0 {
		t.Fatalf("%d partner_event jobs, %d notifications not processed", jobs, unprocessed)
	}
	failing := map[uuid.UUID]bool{ids[0]: true, ids[3]: true, ids[4]: true, ids[7]: true}
	for id := range failing { // refused by the hook until their jobs run
		hook.refusing.Store(id, struct{}{})
	}
	// Two alone (a batch of one each), then six at once (batched).
	for _, id := range ids[:2] {
		if err := r.deposits.Advance(ctx, id, deposits.PendingFX); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, id := range ids[2:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+2] = r.deposits.Advance(ctx, id, deposits.PendingFX)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		d := decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+id.String(), key, nil))
		want, jobs := "SETTLED", 0
		if failing[id] {
			want, jobs = "PENDING_WITHDRAWAL", 1
		}
		if d.Status != want || *d.SettledAmount != "10.000000" || pendingJobs(id) != jobs {
			t.Fatalf("deposit %d after its conversion: %s (want %s), %d settlement jobs (want %d)", i, d.Status, want, pendingJobs(id), jobs)
		}
	}
	if b := r.merchantBalance(t, key); b.Pending != "20.000000" || b.Available != "20.000000" {
		t.Fatalf("merchant after the conversions: %+v", b)
	}
	hook.refusing.Clear()
	for id := range failing { // the jobs of the refused settlements
		if err := r.deposits.Advance(ctx, id, deposits.PendingWithdrawal); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids { // replays: nothing to do
		for _, from := range []string{deposits.PendingFX, deposits.PendingWithdrawal} {
			if err := r.deposits.Advance(ctx, id, from); err != nil {
				t.Fatal(err)
			}
		}
	}
	if runs, distinct := hookRuns(t, r); runs != n || distinct != n {
		t.Fatalf("settlement hook committed %d runs for %d deposits, want %d for %d", runs, distinct, n, n)
	}
	for i, id := range ids {
		d := decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+id.String(), key, nil))
		if d.Status != "SETTLED" || d.SettledAt == nil {
			t.Fatalf("deposit %d: %+v", i, d)
		}
		want := "deposit.received deposit.pending_withdrawal deposit.settled"
		if i%2 == 1 {
			want += " customer.balance.credited"
		}
		if ev := r.eventsOf(t, r.a.ID, id.String()); joined(ev) != want {
			t.Fatalf("deposit %d events %v, want %s", i, ev, want)
		}
	}
	if b := r.merchantBalance(t, key); b.Pending != "0.000000" || b.Available != "40.000000" {
		t.Fatalf("merchant after settlement: %+v", b)
	}
	if usd := r.customerUSD(t, key, cust); usd != "40.00" {
		t.Fatalf("customer balance %s", usd)
	}
	// Each credit announces the balance its own entry left, whichever path posted it.
	if credited := r.creditedBalances(t, cust); joined(credited) != "10.000000 20.000000 30.000000 40.000000" {
		t.Fatalf("customer credited balances %v", credited)
	}
	// One ledger transaction per conversion that settled in it: its entries carry the
	// conversion's reference, and the settlement's own (the memo) on the owner's side.
	var settleTx, settleEntries int
	if err := r.pool.QueryRow(ctx, `select (select count(*) from ledger_transactions where reference like 'deposit:%:settle'),
		(select count(*) from ledger_entries where reference like 'deposit:%:settle')`).Scan(&settleTx, &settleEntries); err != nil {
		t.Fatal(err)
	}
	// The four refused settlements were posted by their jobs, in transactions of their own.
	if settleTx != len(failing) || settleEntries != 2*(n-len(failing)) {
		t.Fatalf("%d settle transactions (want %d), %d settle entries (want %d)", settleTx, len(failing), settleEntries, 2*(n-len(failing)))
	}
	mustVerify(t, r)
}

// The sandbox deposit simulation processes its notification in the intake's transaction
// (partners.SandboxDeposits, issue 27): when the processing fails, the simulation answers
// the error with nothing stored (no notification, job, deposit, posting, event or refund),
// so no job credits later a deposit the caller was told failed, and the onramp still takes
// the caller's retry, which credits it once.
func TestSimulationThatFailsStoresNothing(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true})
	key := r.a.SandboxKey
	ctx := context.Background()
	o := r.temporary(t, key, 16080)
	// The database refuses the deposit's row: a processing error after the notification's
	// row was written in the same transaction.
	if _, err := r.pool.Exec(ctx, `create function refuse_deposit() returns trigger language plpgsql as
			$$ begin raise exception 'deposit refused by the test'; end $$;
		create trigger refuse_deposit before insert on deposits for each row execute function refuse_deposit()`); err != nil {
		t.Fatal(err)
	}
	counts := func() string {
		var notes, jobs, deps, txs, evs, refunds int
		if err := r.pool.QueryRow(ctx, `select (select count(*) from partner_events), (select count(*) from river_job),
			(select count(*) from deposits), (select count(*) from ledger_transactions), (select count(*) from events),
			(select count(*) from partner_refunds)`).Scan(&notes, &jobs, &deps, &txs, &evs, &refunds); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d notifications, %d jobs, %d deposits, %d ledger transactions, %d events, %d refunds",
			notes, jobs, deps, txs, evs, refunds)
	}
	before := counts()
	if res := r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}); res.Status < 500 {
		t.Fatalf("simulation whose processing fails: %s", res)
	}
	if after := counts(); after != before {
		t.Fatalf("a failed simulation stored something: before %s, after %s", before, after)
	}
	if _, err := r.pool.Exec(ctx, `drop trigger refuse_deposit on deposits`); err != nil {
		t.Fatal(err)
	}
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}))
	var n int
	if err := r.pool.QueryRow(ctx, `select count(*) from deposits where onramp_id = $1`, o.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if d.Status != "PENDING_FX" || n != 1 {
		t.Fatalf("the retry: %+v, %d deposits into the onramp", d, n)
	}
}

// With SettleInConversion, only an INTERNAL_BALANCE settlement joins its conversion: an
// ONCHAIN one calls the chain custodian, which must not hold the conversion's transaction,
// so it keeps its own PENDING_WITHDRAWAL step and job.
func TestOnchainSettlementKeepsItsOwnStep(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true, settleInConversion: true})
	key := r.a.SandboxKey
	ctx := context.Background()
	o := decode[onrampJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/onramps", key, map[string]any{"type": "TEMPORARY", "amount": 1608,
		"settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT", "chain": "ETHEREUM", "destination_address": "0x" + strings.Repeat("cd", 20)}}))
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}))
	id := uuid.MustParse(d.ID)
	if err := r.deposits.Advance(ctx, id, deposits.PendingFX); err != nil {
		t.Fatal(err)
	}
	var jobs int
	if err := r.pool.QueryRow(ctx, `select count(*) from river_job where kind = 'deposit_step'
		and args->>'deposit_id' = $1 and args->>'from' = 'PENDING_WITHDRAWAL'`, d.ID).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	got := decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+d.ID, key, nil))
	if got.Status != "PENDING_WITHDRAWAL" || got.Settlement.TxHash != nil || jobs != 1 {
		t.Fatalf("after its conversion: %s, tx hash %v, %d settlement jobs (want PENDING_WITHDRAWAL, none, 1)", got.Status, got.Settlement.TxHash, jobs)
	}
	if err := r.deposits.Advance(ctx, id, deposits.PendingWithdrawal); err != nil {
		t.Fatal(err)
	}
	got = decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+d.ID, key, nil))
	if got.Status != "SETTLED" || got.Settlement.TxHash == nil {
		t.Fatalf("after its settlement: %+v", got)
	}
	if ev := joined(r.eventsOf(t, r.a.ID, d.ID)); ev != "deposit.received deposit.pending_withdrawal deposit.settled" {
		t.Fatalf("events %s", ev)
	}
	mustVerify(t, r)
}
