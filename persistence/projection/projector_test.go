package projection

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres/pgtest"
)

// rig is a real engine journaling to memory and a projector reading that journal into a
// test database.
type rig struct {
	eng  *engine.Engine
	j    *journal.Memory
	p    *Projector
	now  int64
	accs [2]engine.AccountID
}

func newRig(t *testing.T) *rig {
	t.Helper()
	pool, _ := pgtest.New(t)
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	r := &rig{eng: eng, j: j, p: New(pool, "sandbox", j, nil), now: 1_800_000_000_000_000_000}
	for i := range r.accs {
		r.accs[i] = engine.AccountID(uuid.New())
		for _, f := range []struct {
			asset  string
			amount string
		}{{"NGN", "100000000"}, {"USDT", "1000000"}} {
			asset, _ := engine.ParseAsset(f.asset)
			amt, _ := engine.ParseAmount(asset, f.amount)
			r.submit(t, &engine.Command{Kind: engine.CmdCredit, Account: r.accs[i], Asset: asset, Amount: amt, TransferID: engine.TransferID(uuid.New())})
		}
	}
	return r
}

func (r *rig) submit(t *testing.T, c *engine.Command) engine.Result {
	t.Helper()
	r.now += 1000
	c.Time = r.now
	res, err := r.eng.Submit(c)
	if err != nil || (res.Code != engine.OK && res.Code != engine.AlreadyApplied) {
		t.Fatalf("submit %+v: %v %v", c, res.Code, err)
	}
	return res
}

// place puts a 1-unit limit order at price (units of 0.01 NGN).
func (r *rig) place(t *testing.T, acct engine.AccountID, side engine.Side, price int64) engine.OrderID {
	t.Helper()
	id := engine.OrderID(uuid.Must(uuid.NewV7()))
	r.submit(t, &engine.Command{Kind: engine.CmdPlace, Account: acct, OrderID: id, Symbol: "USDT-NGN", Side: side,
		Type: engine.Limit, TIF: engine.GTC, Price: engine.Price(price), Qty: 100})
	return id
}

// An order accepted and filled before the projector runs is one COPY row with its final
// state, never an insert followed by an UPDATE; a whole backlog is a few large
// transactions, each bounded by the batch size. This is what keeps PostgreSQL's share of
// the CPU small and flat as the history grows (issue 21): it counts rows and commits, it
// times nothing.
func TestProjectorWritesEachOrderOncePerBatch(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if err := r.p.CatchUp(ctx); err != nil { // the credits
		t.Fatal(err)
	}
	base := r.p.Stats()

	const pairs = 500
	for i := 0; i < pairs; i++ {
		r.place(t, r.accs[0], engine.Sell, 150000)
		r.place(t, r.accs[1], engine.Buy, 150000) // fills the sell at once
	}
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	s := r.p.Stats()
	if s.Lag != 0 || s.Applied != r.j.LastOffset() {
		t.Fatalf("after catch-up: %+v, journal at %d", s, r.j.LastOffset())
	}
	// 1,000 orders (each one row) and 500 trades (two rows each): nothing written twice.
	if rows := s.Rows - base.Rows; rows != 2*pairs+2*pairs {
		t.Fatalf("wrote %d rows for %d orders and %d trades, want %d", rows, 2*pairs, pairs, 4*pairs)
	}
	if commits := s.Commits - base.Commits; commits != 1 {
		t.Fatalf("%d transactions for one backlog below the batch size, want 1", commits)
	}
	var filled int
	if err := r.p.pool.QueryRow(ctx, `select count(*) from trading_orders where environment = 'sandbox' and status = 'FILLED'`).Scan(&filled); err != nil {
		t.Fatal(err)
	}
	if filled != 2*pairs {
		t.Fatalf("%d FILLED orders in PostgreSQL, want %d", filled, 2*pairs)
	}

	// A resting order written in one batch and filled in a later one is updated once.
	rest := r.place(t, r.accs[0], engine.Sell, 150100)
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	before := r.p.Stats()
	r.place(t, r.accs[1], engine.Buy, 150100)
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := r.p.Stats().Rows - before.Rows; rows != 1+1+2 { // the update, the taker, the trade's two rows
		t.Fatalf("wrote %d rows for one fill of a resting order, want 4", rows)
	}
	var st string
	if err := r.p.pool.QueryRow(ctx, `select status from trading_orders where id = $1`, uuid.UUID(rest)).Scan(&st); err != nil || st != "FILLED" {
		t.Fatalf("resting order after its fill: %q %v", st, err)
	}

	// A backlog larger than a batch is written in batches of at most batchSize events.
	r.p.batchSize = 300
	before = r.p.Stats()
	for i := 0; i < pairs; i++ {
		r.place(t, r.accs[0], engine.Sell, 150000)
		r.place(t, r.accs[1], engine.Buy, 150000)
	}
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	s = r.p.Stats()
	commits := s.Commits - before.Commits
	// 2 orders + 1 trade + 2 done events per pair at least; a batch holds at most
	// batchSize events plus the rest of one record.
	if commits < 5 || commits > 40 || s.Lag != 0 {
		t.Fatalf("%d transactions (lag %d) for a backlog of %d pairs with 300-event batches", commits, s.Lag, pairs)
	}
}

// LagSeconds grows while durable records wait and is 0 once the projector caught up.
func TestProjectorLagSeconds(t *testing.T) {
	r := newRig(t)
	if r.p.Lag() == 0 {
		t.Fatal("the credits left no lag")
	}
	time.Sleep(20 * time.Millisecond)
	if s := r.p.LagSeconds(); s < 0.02 {
		t.Fatalf("LagSeconds %v while behind for 20 ms", s)
	}
	if err := r.p.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := r.p.Stats(); st.Lag != 0 || st.LagSeconds != 0 {
		t.Fatalf("after catch-up: %+v", st)
	}
}
