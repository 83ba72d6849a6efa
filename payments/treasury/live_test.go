package treasury

import (
	"context"
	"errors"
	"testing"
	"time"

	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/rates"
)

// liveRig turns the rig's environment into a live one: no sandbox inventory (the
// operator funds the accounts), the treasury's limits as given.
func liveRig(t *testing.T, limit int64) *rig {
	t.Helper()
	r := newRig(t, limit)
	e := r.envs["sandbox"]
	e.Inventory = nil
	r.envs["sandbox"] = e
	var err error
	if r.desk, err = New(r.pool, Config{Envs: r.envs, Prices: r.rates}); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTheLiveTreasuryQuotesOnlyWhatTheOperatorFunded (issue 27 items 3 and 5): an
// operator-funded treasury (no sandbox inventory) covers nothing until `svc treasury fund`
// has recorded a funding and the engine's process credited it; then it covers up to the
// smaller of its limit and what its inventory can hedge. The funding is one balanced
// ledger transaction in the treasury's own books, credited to the engine once however
// often the command or the round repeats; a reference reused for another amount is
// refused.
func TestTheLiveTreasuryQuotesOnlyWhatTheOperatorFunded(t *testing.T) {
	const limit = 1_000 * 1_000_000 // 1,000 USDT
	r := liveRig(t, limit)
	ctx := context.Background()
	env := "sandbox" // the rig's engine; the desk treats it as operator-funded (no Inventory)
	if err := r.desk.Hedge(ctx, env); err != nil {
		t.Fatal(err)
	}
	if ok, conf := r.desk.Covers(env, money.USDT, rates.Sell, 1_000_000); !conf || ok {
		t.Fatalf("unfunded treasury covers a 1-USDT sale: %v %v", ok, conf)
	}
	if b := r.eng.Balances(Account); b != (engine.Balances{}) {
		t.Fatalf("the unfunded treasury's engine account holds %v", b)
	}

	fund := func(ref, amount string, a money.Asset) error {
		_, _, err := Fund(ctx, r.pool, FundRequest{Env: env, Account: FundTreasury, Amount: money.MustParse(a, amount), Reference: ref})
		return err
	}
	if err := fund("wire-1", "400.00", money.USDT); err != nil {
		t.Fatal(err)
	}
	if err := fund("wire-2", "800000.00", money.NGN); err != nil { // 500 USDT at 1,600
		t.Fatal(err)
	}
	if _, replayed, err := Fund(ctx, r.pool, FundRequest{Env: env, Account: FundTreasury, Amount: money.MustParse(money.USDT, "400.00"),
		Reference: "wire-1"}); err != nil || !replayed {
		t.Fatalf("the same funding again: replayed %v, %v", replayed, err)
	}
	if err := fund("wire-1", "401.00", money.USDT); !errors.Is(err, ErrFundingConflict) {
		t.Fatalf("a reference reused for another amount: %v", err)
	}
	for range 2 { // two rounds: each row is credited once
		if err := r.desk.Hedge(ctx, env); err != nil {
			t.Fatal(err)
		}
	}
	if b := r.eng.Balances(Account); b[engine.USDT].Available != 400*1_000_000 || b[engine.NGN].Available != 800_000*10_000 {
		t.Fatalf("engine balances %v, want 400 USDT and 800,000 NGN", b)
	}
	// A new process credits the same rows again: the engine applies them once.
	d2, err := New(r.pool, Config{Envs: r.envs, Prices: r.rates})
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Hedge(ctx, env); err != nil {
		t.Fatal(err)
	}
	if b := r.eng.Balances(Account); b[engine.USDT].Available != 400*1_000_000 {
		t.Fatalf("credited twice: %v", b)
	}

	cases := []struct {
		name  string
		side  string
		units int64
		want  bool
	}{
		{"a sale the USDT inventory covers", rates.Sell, 399 * 1_000_000, true},
		{"a sale past the USDT inventory", rates.Sell, 401 * 1_000_000, false},
		{"a purchase the NGN covers at the band's edge", rates.Buy, 480 * 1_000_000, true},
		{"a purchase past the NGN at the band's edge", rates.Buy, 495 * 1_000_000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if ok, _ := r.desk.Covers(env, money.USDT, c.side, c.units); ok != c.want {
				t.Fatalf("covers %d %s: %v, want %v", c.units, c.side, ok, c.want)
			}
		})
	}
	if ok, _ := r.desk.Covers(env, money.USDC, rates.Sell, 1); ok {
		t.Fatal("covers USDC without any USDC funded")
	}

	// The books: one transaction per funding in the treasury's own books, balanced; no
	// merchant's books touched.
	var n int
	if err := r.pool.QueryRow(ctx, `select count(*) from ledger_transactions where merchant_id = $1 and kind = 'treasury.fund'`, Book).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d funding transactions, %v", n, err)
	}
	if lv, err := ledger.Verify(ctx, r.pool); err != nil || len(lv) > 0 {
		t.Fatal(lv, err)
	}
}

// TestTheLiveMakerRunsOnItsOwnFundingAndLimits (issue 27 item 5): a maker with limits
// rests at most its limit on each side, quotes only assets it has a limit for, is funded
// only by the operator's rows for its own account, and stops the side that would grow a
// position that reached its limit.
func TestTheLiveMakerRunsOnItsOwnFundingAndLimits(t *testing.T) {
	r := liveRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	env := "sandbox"
	f, err := NewFunding(r.pool, r.eng, env, FundMaker)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMaker(MakerConfig{Env: env, Exchange: r.eng, Prices: r.rates, Levels: 5, Size: 500, Funding: f,
		Assets: []money.Asset{money.USDT}, Limits: map[money.Asset]int64{money.USDT: 1_000 * 1_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	before := r.eng.Balances(MakerAccount)
	for _, fr := range []FundRequest{
		{Env: env, Account: FundMaker, Amount: money.MustParse(money.USDT, "5000.00"), Reference: "mm-1"},
		{Env: env, Account: FundMaker, Amount: money.MustParse(money.NGN, "8000000.00"), Reference: "mm-2"},
		{Env: env, Account: FundTreasury, Amount: money.MustParse(money.USDT, "7.00"), Reference: "tr-1"}, // not the maker's
	} {
		if _, _, err := Fund(ctx, r.pool, fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Credit(ctx); err != nil {
		t.Fatal(err)
	}
	after := r.eng.Balances(MakerAccount)
	total := func(b engine.Balance) int64 { return b.Available + b.Locked }
	if got := total(after[engine.USDT]) - total(before[engine.USDT]); got != 5000*1_000_000 {
		t.Fatalf("maker credited %d USDT units, want 5,000 USDT (its own rows only)", got)
	}
	// The rig's maker funded the account with sandbox money first: the live maker's
	// position is measured against its own funding, so take that out of the baseline.
	m.cfg.Funding.total[engine.USDT] += total(before[engine.USDT])
	if err := m.Refresh(); err != nil {
		t.Fatal(err)
	}
	sides := func() (bids, asks int) {
		for _, o := range r.eng.OpenOrders(MakerAccount, rates.Symbol(money.USDT), nil) {
			if o.Side == engine.Buy {
				bids++
			} else {
				asks++
			}
		}
		return
	}
	if b, a := sides(); b != 2 || a != 2 {
		t.Fatalf("ladder %d bids %d asks, want 2 a side (1,000 USDT limit / 500 a level)", b, a)
	}
	if n := len(r.eng.OpenOrders(MakerAccount, rates.Symbol(money.USDC), nil)); n != 0 {
		t.Fatalf("USDC: %d orders from a maker without a USDC limit", n)
	}
	// Another account sells 1,000 USDT into the maker's bids: its position reaches the limit.
	taker := engine.AccountID{9}
	if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: taker, Asset: engine.USDT, Amount: 2_000 * 1_000_000,
		TransferID: engine.TransferID{9}}); err != nil || res.Code != engine.OK {
		t.Fatal(res.Code, err)
	}
	pc, _ := r.eng.Pair(rates.Symbol(money.USDT))
	if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdPlace, Account: taker, Symbol: pc.Symbol, OrderID: engine.OrderID{9},
		Side: engine.Sell, Type: engine.Market, TIF: engine.IOC, Qty: engine.Qty(1_000 * pow10(pc.QtyDecimals))}); err != nil || res.Code != engine.OK {
		t.Fatal(res.Code, err)
	}
	if err := m.Refresh(); err != nil {
		t.Fatal(err)
	}
	if b, a := sides(); b != 0 || a != 2 {
		t.Fatalf("after buying its limit: %d bids %d asks, want no bids and 2 asks", b, a)
	}
}

// TestAWatchingProcessQuotesNothingWhileItsEngineIsSilent: a process whose engine runs
// elsewhere (cluster/enginerpc, a real server behind a proxy the test freezes) refreshes
// what the operator-funded treasury can hedge every window (Watch); while the engine does
// not answer within a round's deadline, it keeps no inventory it cannot see and covers
// nothing, rather than measuring the silence as zeros or keeping the last measure, and
// once the engine answers again it covers what the funding allows.
func TestAWatchingProcessQuotesNothingWhileItsEngineIsSilent(t *testing.T) {
	r := liveRig(t, 1_000*1_000_000)
	ctx := context.Background()
	env := "sandbox" // the rig's engine; the desk treats it as operator-funded (no Inventory)
	if _, _, err := Fund(ctx, r.pool, FundRequest{Env: env, Account: FundTreasury, Amount: money.MustParse(money.USDT, "400.00"),
		Reference: "wire-1"}); err != nil {
		t.Fatal(err)
	}
	if err := r.desk.Hedge(ctx, env); err != nil { // the engine's process credits it
		t.Fatal(err)
	}
	client, fr := enginerpctest.Remote(t, r.eng)
	envs := map[string]Env{}
	for name, e := range r.envs {
		e.Exchange = client
		envs[name] = e
	}
	watcher, err := New(r.pool, Config{Envs: envs, Prices: r.rates, Window: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); watcher.Watch(wctx) }()
	defer func() { stop(); fr.Resume(); <-done }()
	covers := func(want bool, when string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second) // a round's deadline is a second
		for {
			ok, _ := watcher.Covers(env, money.USDT, rates.Sell, 399*1_000_000)
			if ok == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: covers a 399-USDT sale %v, want %v", when, ok, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	covers(true, "answering")
	fr.Pause()
	covers(false, "frozen")
	fr.Resume()
	covers(true, "thawed")
}
