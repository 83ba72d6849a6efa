package projection

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"svc/engine"
)

// The order history follows amends: the new price and total quantity, whether the
// amend is projected in the batch that accepted the order or in a later one, and a
// requeued order that trades at once is FILLED with its new quantity.
func TestProjectorFollowsAmends(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	row := func(id engine.OrderID) (price, qty, filled int64, status string) {
		t.Helper()
		if err := r.p.pool.QueryRow(ctx, `select price, quantity, filled, status from trading_orders where id = $1`,
			uuid.UUID(id)).Scan(&price, &qty, &filled, &status); err != nil {
			t.Fatal(err)
		}
		return
	}
	a, b := r.accs[0], r.accs[1]
	// in the accepting batch: placed, partly filled, amended up
	early := r.place(t, a, engine.Sell, 150000)
	r.submit(t, &engine.Command{Kind: engine.CmdAmend, Account: a, OrderID: early, Qty: 300})
	r.place(t, b, engine.Buy, 150000) // fills 1 of 3
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if p, q, f, st := row(early); p != 150000 || q != 300 || f != 100 || st != "PARTIALLY_FILLED" {
		t.Fatalf("early: %d %d %d %s", p, q, f, st)
	}
	// in a later batch: a fill, then an amend to a new price that crosses and fills
	r.place(t, b, engine.Buy, 150000) // fills 2 of 3
	r.place(t, b, engine.Buy, 149000)
	r.submit(t, &engine.Command{Kind: engine.CmdAmend, Account: a, OrderID: early, Price: 149000, Qty: 250})
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if p, q, f, st := row(early); p != 149000 || q != 250 || f != 250 || st != "FILLED" {
		t.Fatalf("later: %d %d %d %s", p, q, f, st)
	}
	// an amend of the price alone in a batch of its own
	late := r.place(t, a, engine.Sell, 151000)
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	r.submit(t, &engine.Command{Kind: engine.CmdAmend, Account: a, OrderID: late, Price: 152000})
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if p, q, f, st := row(late); p != 152000 || q != 100 || f != 0 || st != "OPEN" {
		t.Fatalf("late: %d %d %d %s", p, q, f, st)
	}
}
