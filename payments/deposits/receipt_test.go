package deposits_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/partners"
	"svc/payments/paymentstest"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/persistence/postgres/pgtest"
)

// Config.ConvertOnReceipt (issue 27): a received deposit's conversion and settlement run in
// the intake's transaction, through the sandbox bank's notification as svcd takes it.

const receiptSecret = "receipt-test-sandbox-bank"

// intake is the money-in stack over a real database: onramps priced from reference prices,
// the deposits service with svcd's options (SettleInConversion; ConvertOnReceipt as asked),
// and the sandbox bank's notifications taken in by partners.
type intake struct {
	pool     *pgxpool.Pool
	deposits *deposits.Service
	onramps  *onramps.Service
	partners *partners.Service
	sim      partners.SandboxDeposits
	tenant   payments.Tenant
	refuse   atomic.Int32 // the settlement hook refuses this many times
	logs     lockedBuffer // the deposits service's log (text)
}

// lockedBuffer is a log's output, written by concurrent intakes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newIntake(t *testing.T, onReceipt bool) *intake {
	t.Helper()
	pool, _ := paymentstest.New(t)
	rec, inserter := paymentstest.Recorder(t, pool)
	envs := providers.Default(providers.SandboxConfig{})
	rs, err := rates.New(pool, rates.Config{References: map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000, money.USD: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	in := &intake{pool: pool, tenant: payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}}
	paymentstest.Exec(t, pool, `insert into merchants (id, email, password_hash, business_name, first_name, last_name)
		values ($1, $2, 'x', 'Receipt Ltd', 'Ada', 'Obi')`, in.tenant.MerchantID, in.tenant.MerchantID.String()+"@example.com")
	hook := deposits.HookFunc(func(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error {
		var status string
		if err := tx.QueryRow(ctx, `select status from deposits where id = $1`, d.ID).Scan(&status); err != nil {
			return err
		}
		if status != deposits.Settled || d.Status != deposits.Settled {
			return errors.New("the hook sees " + status)
		}
		if in.refuse.Add(-1) >= 0 {
			return errors.New("the hook refuses")
		}
		return nil
	})
	in.onramps = onramps.New(pool, onramps.Config{Rates: rs, Providers: envs, Customers: onramps.Directory, Events: rec})
	in.deposits = deposits.New(pool, deposits.Config{Onramps: in.onramps, Rates: rs, Providers: envs, Events: rec, Jobs: inserter,
		Settled: []deposits.SettlementHook{hook}, SettleInConversion: true, ConvertOnReceipt: onReceipt,
		Logger: slog.New(slog.NewTextHandler(&in.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	in.partners, err = partners.New(pool, partners.Config{Partners: []partners.Partner{partners.SandboxBankPartner(receiptSecret)},
		Jobs: inserter, Events: rec, Deposits: in.deposits, Onramps: in.onramps, Providers: envs})
	if err != nil {
		t.Fatal(err)
	}
	in.sim = partners.SandboxDeposits{Service: in.deposits, Onramps: in.onramps, Partners: in.partners, Secret: receiptSecret}
	return in
}

// customer is a new TIER_2 customer of the tenant.
func (in *intake) customer(t *testing.T) uuid.UUID {
	t.Helper()
	id := uuid.New()
	paymentstest.Exec(t, in.pool, `insert into customers (id, merchant_id, environment, email, first_name, last_name, kyc_tier, created_at, updated_at)
		values ($1, $2, $3, $4, 'Ada', 'Obi', 'TIER_2', now(), now())`, id, in.tenant.MerchantID, in.tenant.Environment, id.String()+"@example.com")
	return id
}

// onramp creates a TEMPORARY onramp of ngn (16,080.00 NGN is 10 USDT).
func (in *intake) onramp(t *testing.T, ngn string, customer *uuid.UUID, st *onramps.Settlement) onramps.Onramp {
	t.Helper()
	a := money.MustParse(money.NGN, ngn)
	o, err := in.onramps.Create(context.Background(), in.tenant, onramps.CreateInput{Type: onramps.Temporary, Amount: &a, CustomerID: customer, Settlement: st})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (in *intake) get(t *testing.T, id uuid.UUID) deposits.Deposit {
	t.Helper()
	d, err := in.deposits.Get(context.Background(), in.tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// steps is the deposit_step jobs queued for deposit id, by their From.
func (in *intake) steps(t *testing.T, id uuid.UUID) []string {
	t.Helper()
	return pgtest.Strings(t, in.pool, `select args->>'from' from river_job where kind = 'deposit_step'
		and args->>'deposit_id' = $1 order by id`, id.String())
}

// events is the types of the events recorded for deposit id, in order.
func (in *intake) events(t *testing.T, id uuid.UUID) []string {
	t.Helper()
	return pgtest.Strings(t, in.pool, `select type from events where merchant_id = $1
		and (data->>'id' = $2 or data->>'deposit_id' = $2) order by created_at, id`, in.tenant.MerchantID, id.String())
}

// postings is the references of the ledger transactions of deposit id, in order, and of
// their entries' steps (an entry's memo, else its transaction's reference).
func (in *intake) postings(t *testing.T, id uuid.UUID) (txs, entries []string) {
	t.Helper()
	txs = pgtest.Strings(t, in.pool, `select reference from ledger_transactions where metadata->>'deposit_id' = $1 order by created_at, id`, id.String())
	entries = pgtest.Strings(t, in.pool, `select coalesce(e.reference, t.reference) from ledger_entries e
		join ledger_transactions t on t.id = e.transaction_id
		where t.metadata->>'deposit_id' = $1 order by t.created_at, t.id, e.id`, id.String())
	return txs, slices.Compact(entries)
}

func (in *intake) verify(t *testing.T) {
	t.Helper()
	v, err := ledger.Verify(context.Background(), in.pool)
	if err != nil || len(v) != 0 {
		t.Fatalf("ledger verify: %v %v", v, err)
	}
}

func (in *intake) available(t *testing.T, owner ledger.OwnerType, id uuid.UUID) string {
	t.Helper()
	return paymentstest.Available(t, in.pool, in.tenant, owner, id, money.USDT).String()
}

// A deposit converted on receipt: SETTLED by the intake's commit, every state's event in
// order, one ledger transaction (the conversion's) carrying the receipt's and the
// settlement's entries under their own references, no job, the owner credited, the ledger
// sound. A merchant's deposit and a customer's (customer.balance.credited) alike; the
// simulation answers the deposit as it ends, as a read does. A job of the deposit that
// runs after (an earlier enqueue, a replay) finds it past its state and does nothing.
func TestConvertedOnReceipt(t *testing.T) {
	in := newIntake(t, true)
	ctx := context.Background()
	cust := in.customer(t)
	credited := []string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled", "customer.balance.credited"}
	for _, c := range []struct {
		name      string
		customer  *uuid.UUID
		permanent bool   // a customer's PERMANENT onramp, priced at the market as the money arrives
		settled   string // USDT
		events    []string
	}{
		{"merchant", nil, false, "10.000000", []string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled"}},
		{"customer", &cust, false, "10.000000", credited},
		{"permanent", &cust, true, "", credited},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o onramps.Onramp
			if c.permanent {
				var err error
				if o, err = in.onramps.Create(ctx, in.tenant, onramps.CreateInput{Type: onramps.Permanent, CustomerID: c.customer}); err != nil {
					t.Fatal(err)
				}
			} else {
				o = in.onramp(t, "16080.00", c.customer, nil)
			}
			d, err := in.sim.Simulate(ctx, in.tenant, deposits.SimulateInput{OnrampID: o.ID})
			if err != nil {
				t.Fatal(err)
			}
			got := in.get(t, d.ID)
			if d.Status != deposits.Settled || got.Status != deposits.Settled || got.SettledAmount == nil || !got.SettledAmount.IsPositive() ||
				(c.settled != "" && got.SettledAmount.String() != c.settled) ||
				got.SettledAt == nil || d.SettledAt == nil || !d.SettledAt.Equal(*got.SettledAt) || d.Price != got.Price {
				t.Fatalf("answered %+v, stored %+v", d, got)
			}
			if jobs := in.steps(t, d.ID); len(jobs) != 0 {
				t.Fatalf("deposit_step jobs %v, want none", jobs)
			}
			if ev := in.events(t, d.ID); !slices.Equal(ev, c.events) {
				t.Fatalf("events %v, want %v", ev, c.events)
			}
			ref := "deposit:" + d.ID.String() + ":"
			txs, entries := in.postings(t, d.ID)
			if !slices.Equal(txs, []string{ref + "convert"}) || !slices.Equal(entries, []string{ref + "received", ref + "convert", ref + "settle"}) {
				t.Fatalf("ledger transactions %v, entries' steps %v", txs, entries)
			}
			if oo, err := in.onramps.Get(ctx, in.tenant, o.ID); err != nil || oo.StatusAt(time.Now()) != map[bool]string{false: onramps.Inactive, true: onramps.Active}[c.permanent] {
				t.Fatalf("onramp after its payment: %v %v", oo.StatusAt(time.Now()), err)
			}
			for _, from := range []string{deposits.PendingFX, deposits.PendingWithdrawal} { // stale jobs: no-ops
				if err := in.deposits.Advance(ctx, d.ID, from); err != nil {
					t.Fatal(err)
				}
			}
			if again, _ := in.postings(t, d.ID); len(again) != 1 || in.get(t, d.ID).UpdatedAt != got.UpdatedAt {
				t.Fatalf("a stale job changed the deposit: %v", again)
			}
		})
	}
	if a := in.available(t, ledger.OwnerMerchant, in.tenant.MerchantID); a != "10.000000" {
		t.Fatalf("merchant available %s", a)
	}
	if a := paymentstest.Available(t, in.pool, in.tenant, ledger.OwnerCustomer, cust, money.USDT); a.Cmp(money.MustParse(money.USDT, "10")) <= 0 {
		t.Fatalf("customer available %s, want 10 USDT and the permanent account's deposit", a)
	}
	in.verify(t)
}

// Each deposit the intake does not finish is received as without ConvertOnReceipt (the
// savepoint rolled back, or not tried): its row, its receipt's own posting and the job it
// enqueues, and that job then takes it where it always did. With the option off, every
// deposit goes that way.
func TestNotConvertedOnReceiptGoesToItsJob(t *testing.T) {
	ctx := context.Background()
	onchain := &onramps.Settlement{Mode: onramps.ModeOnchain, Asset: money.USDT, Chain: "ETHEREUM",
		DestinationAddress: "0x" + strings.Repeat("cd", 20)}
	for _, c := range []struct {
		name       string
		off        bool   // ConvertOnReceipt off
		ngn        string // the onramp's amount
		paid       string // what arrives ("": the onramp's amount)
		flag       bool
		settlement *onramps.Settlement
		refuse     int32    // the settlement hook refuses so many times
		after      string   // the deposit's status after the intake
		jobs       []string // the deposit_step jobs the intake enqueued (their From)
		end        string   // after the jobs
		txs        []string // the deposit's ledger transactions at the end (their step)
		logged     string   // the level the fallback is logged at ("": not logged)
	}{
		{name: "off", off: true, ngn: "16080.00", after: deposits.PendingFX, jobs: []string{deposits.PendingFX}, end: deposits.Settled,
			txs: []string{"received", "convert"}},
		{name: "flagged", ngn: "16080.00", flag: true, after: deposits.PendingFX, jobs: []string{deposits.PendingFX}, end: deposits.Flagged,
			txs: []string{"received"}},
		{name: "conversion refused", ngn: "16080.13", after: deposits.PendingFX, jobs: []string{deposits.PendingFX}, end: deposits.Failed,
			txs: []string{"received", "return"}, logged: "INFO"},
		{name: "another amount", ngn: "16080.00", paid: "16000.00", after: deposits.PendingFX, jobs: []string{deposits.PendingFX}, end: deposits.Failed,
			txs: []string{"received", "return"}},
		// Refused on receipt, then again by the job's settlement: the conversion stands.
		{name: "settlement hook refuses", ngn: "16080.00", refuse: 2, after: deposits.PendingFX, jobs: []string{deposits.PendingFX},
			end: deposits.Settled, txs: []string{"received", "convert", "settle"}, logged: "WARN"},
		{name: "onchain", ngn: "16080.00", settlement: onchain, after: deposits.PendingWithdrawal, jobs: []string{deposits.PendingWithdrawal},
			end: deposits.Settled, txs: []string{"convert", "settle"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := newIntake(t, !c.off)
			in.refuse.Store(c.refuse)
			o := in.onramp(t, c.ngn, nil, c.settlement)
			si := deposits.SimulateInput{OnrampID: o.ID, ShouldFlag: c.flag}
			if c.paid != "" {
				a := money.MustParse(money.NGN, c.paid)
				si.Amount = &a
			}
			d, err := in.sim.Simulate(ctx, in.tenant, si)
			if err != nil {
				t.Fatal(err)
			}
			if got := in.get(t, d.ID); d.Status != c.after || got.Status != c.after {
				t.Fatalf("after the intake: answered %s, stored %s, want %s", d.Status, got.Status, c.after)
			}
			jobs := in.steps(t, d.ID)
			if !slices.Equal(jobs, c.jobs) {
				t.Fatalf("deposit_step jobs %v, want %v", jobs, c.jobs)
			}
			if logs := in.logs.String(); (c.logged == "") != (logs == "") ||
				c.logged != "" && !strings.Contains(logs, "level="+c.logged+" ") || c.logged != "" && !strings.Contains(logs, d.ID.String()) {
				t.Fatalf("logged %q, want a line at %q", logs, c.logged)
			}
			if ev := in.events(t, d.ID); ev[0] != "deposit.received" || slices.Contains(ev[1:], "deposit.received") {
				t.Fatalf("events %v", ev)
			}
			// The jobs, as river would run them: each step enqueues the next.
			for from := jobs[len(jobs)-1]; ; {
				if err := in.deposits.Advance(ctx, d.ID, from); err != nil {
					t.Fatal(err)
				}
				next := in.steps(t, d.ID)
				if len(next) == len(jobs) {
					break
				}
				jobs, from = next, next[len(next)-1]
			}
			end := in.get(t, d.ID)
			if end.Status != c.end {
				t.Fatalf("after its jobs: %s (%s), want %s", end.Status, end.FailureReason, c.end)
			}
			txs, _ := in.postings(t, d.ID)
			want := make([]string, len(c.txs))
			for i, s := range c.txs {
				want[i] = "deposit:" + d.ID.String() + ":" + s
			}
			if !slices.Equal(txs, want) {
				t.Fatalf("ledger transactions %v, want %v", txs, want)
			}
			in.verify(t)
		})
	}
}

// A partner's notification delivered again (its webhook retried, the job and the intake
// both at it) changes nothing: one deposit, converted once, one ledger transaction.
func TestReplayedNotificationConvertsOnce(t *testing.T) {
	in := newIntake(t, true)
	ctx := context.Background()
	o := in.onramp(t, "16080.00", nil, nil)
	body, sig, err := partners.SandboxNotification(receiptSecret, "evt-replayed", partners.TypeInboundTransfer, time.Now(), partners.SandboxInbound{
		Reference: "trf-replayed", BankCode: o.BankCode, AccountNumber: o.AccountNumber, Amount: 1_608_000, Currency: "NGN"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		ids []uuid.UUID
	)
	err = paymentstest.Race(4, func(int) error {
		h := map[string][]string{"Content-Type": {"application/json"}, partners.SandboxSignatureHeader: {sig}}
		rc, err := in.partners.Receive(ctx, partners.SandboxBank, partners.Incoming{Header: h, Body: body, RemoteAddr: "127.0.0.1"})
		if err != nil {
			return err
		}
		res, err := in.partners.Process(ctx, rc.ID)
		if err != nil {
			return err
		}
		if res.DepositID == nil {
			return errors.New("no deposit: " + res.Outcome)
		}
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, *res.DepositID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := in.pool.QueryRow(ctx, `select count(*) from deposits`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d deposits (%v)", n, err)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("the deliveries answered deposits %v", ids)
		}
	}
	d := in.get(t, ids[0])
	txs, _ := in.postings(t, d.ID)
	if d.Status != deposits.Settled || len(txs) != 1 || len(in.steps(t, d.ID)) != 0 {
		t.Fatalf("deposit %s, ledger transactions %v, jobs %v", d.Status, txs, in.steps(t, d.ID))
	}
	in.verify(t)
}
