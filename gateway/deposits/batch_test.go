package deposits_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"svc/payments/deposits"
	"svc/payments/ledger"
	"svc/payments/money"
)

// Deposit steps that run at the same time share a transaction (deposits.stepBatcher): each
// deposit still moves with its events and next job, the owners' side of the postings goes
// in one ledger transaction per merchant at the end of the batch, a step that fails rolls
// back alone, and the books come out as if each had run alone.
func TestConcurrentStepsBatched(t *testing.T) {
	hook := &countingHook{}
	r := newRig(t, rigOptions{noWorkers: true, settled: hook})
	countHookRuns(t, r)
	key := r.a.SandboxKey
	r.endpoint(t, r.a.ID)
	custs := []string{r.customer(t, key, "b1@example.com"), r.customer(t, key, "b2@example.com")}
	for _, c := range custs {
		r.tier1(t, key, c)
	}
	const n = 24 // 12 to the merchant, 6 to each customer; 16,080 NGN = 10 USDT each
	ids := make([]uuid.UUID, n)
	owners := make([]string, n)
	for i := range ids {
		var o onrampJSON
		if i%2 == 0 {
			o = r.temporary(t, key, 16080)
		} else {
			owners[i] = custs[(i/2)%2]
			o = r.temporary(t, key, 16080, "customer_id", owners[i])
		}
		d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}))
		ids[i] = uuid.MustParse(d.ID)
	}
	hook.refusing.Store(ids[5], struct{}{}) // a customer deposit
	hook.refusing.Store(ids[6], struct{}{}) // a merchant deposit

	advanceAll := func(from string) map[uuid.UUID]error {
		var (
			mu   sync.Mutex
			errs = map[uuid.UUID]error{}
			wg   sync.WaitGroup
		)
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.deposits.Advance(context.Background(), id, from); err != nil {
					mu.Lock()
					errs[id] = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return errs
	}
	if errs := advanceAll(deposits.PendingFX); len(errs) > 0 {
		t.Fatalf("convert: %v", errs)
	}
	b := r.merchantBalance(t, key)
	if b.Pending != "120.000000" || b.Available != "0.000000" {
		t.Fatalf("after conversion: %+v", b)
	}
	errs := advanceAll(deposits.PendingWithdrawal)
	if len(errs) != 2 || errs[ids[5]] == nil || errs[ids[6]] == nil {
		t.Fatalf("settle: want the two hooked failures, got %v", errs)
	}
	hook.refusing.Clear()
	for _, id := range []uuid.UUID{ids[5], ids[6]} { // the job's retry
		d := decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+id.String(), key, nil))
		if d.Status != "PENDING_WITHDRAWAL" {
			t.Fatalf("a failed step changed its deposit: %+v", d)
		}
		if err := r.deposits.Advance(context.Background(), id, deposits.PendingWithdrawal); err != nil {
			t.Fatal(err)
		}
	}
	if errs := advanceAll(deposits.PendingWithdrawal); len(errs) > 0 { // replays: nothing to do
		t.Fatalf("replay: %v", errs)
	}
	if runs, distinct := hookRuns(t, r); runs != n || distinct != n {
		t.Fatalf("settlement hook committed %d runs for %d deposits, want %d for %d", runs, distinct, n, n)
	}
	for i, id := range ids {
		d := decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+id.String(), key, nil))
		if d.Status != "SETTLED" || *d.SettledAmount != "10.000000" {
			t.Fatalf("deposit %d: %+v", i, d)
		}
		want := "deposit.received deposit.pending_withdrawal deposit.settled"
		if owners[i] != "" {
			want += " customer.balance.credited"
		}
		if ev := r.eventsOf(t, r.a.ID, id.String()); joined(ev) != want {
			t.Fatalf("deposit %d events %v, want %s", i, ev, want)
		}
	}
	if b := r.merchantBalance(t, key); b.Pending != "0.000000" || b.Available != "120.000000" {
		t.Fatalf("after settlement: %+v", b)
	}
	for _, c := range custs {
		if usd := r.customerUSD(t, key, c); usd != "60.00" {
			t.Fatalf("customer %s balance %s", c, usd)
		}
	}
	// Each credit announces the balance its own entry left: 10, 20, ... 60 per customer.
	for _, c := range custs {
		if got := r.creditedBalances(t, c); joined(got) != "10.000000 20.000000 30.000000 40.000000 50.000000 60.000000" {
			t.Fatalf("customer %s credited balances %v", c, got)
		}
	}
	// A customer's ledger still shows each deposit's own steps, not the batch: every entry
	// carries its deposit's reference and description (ledger.Posting.Memo).
	for _, c := range custs {
		var entries []struct {
			Reference   string `json:"reference"`
			Description string `json:"description"`
		}
		r.srv.Must(t, 200, "GET", "/v1/customers/"+c+"/ledger?limit=100", key, nil).Decode(t, &entries)
		var converts, settles int
		for _, e := range entries {
			switch {
			case strings.HasPrefix(e.Reference, "deposit:") && strings.HasSuffix(e.Reference, ":convert") &&
				strings.HasPrefix(e.Description, "Conversion of 16080.00 NGN to 10.000000 USDT"):
				converts++
			case strings.HasPrefix(e.Reference, "deposit:") && strings.HasSuffix(e.Reference, ":settle") &&
				strings.HasPrefix(e.Description, "Deposit ") && strings.HasSuffix(e.Description, " settled"):
				settles++
			default:
				t.Fatalf("customer %s ledger entry %+v: not a deposit step's", c, e)
			}
		}
		// A conversion credits pending; a settlement debits pending and credits available.
		if converts != 6 || settles != 12 {
			t.Fatalf("customer %s ledger: %d conversion and %d settlement entries, want 6 and 12: %+v", c, converts, settles, entries)
		}
	}
	// The batches posted the owners' side together, and system:settling is back to zero.
	var batches int
	if err := r.pool.QueryRow(context.Background(), `select count(*) from ledger_transactions where kind = 'deposit.batch'`).Scan(&batches); err != nil {
		t.Fatal(err)
	}
	if batches == 0 {
		t.Fatal("no batch posting: the steps never ran together")
	}
	settling, err := ledger.GetBalance(context.Background(), r.pool, r.a.ID, "sandbox", ledger.System(deposits.Settling), money.USDT)
	if err != nil || !settling.Amount.IsZero() {
		t.Fatalf("system:settling %v %v", settling, err)
	}
	t.Logf("%d batch postings for %d steps", batches, 2*n)
	mustVerify(t, r)
}

func joined(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}
