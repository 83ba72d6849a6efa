package projection

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"svc/engine"
)

// An order's metadata rides its EventAccepted through the journal into the history: it
// reads back in the engine's form (whichever batch the order was in), the list filters on
// it, an order without metadata has none, and bytes that are not a JSON object (another
// producer's journal) are stored as none instead of stopping the projector.
func TestProjectorKeepsOrderMetadata(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	a, b := r.accs[0], r.accs[1]
	place := func(acct engine.AccountID, side engine.Side, price int64, meta string) engine.OrderID {
		id := engine.OrderID(uuid.Must(uuid.NewV7()))
		r.submit(t, &engine.Command{Kind: engine.CmdPlace, Account: acct, OrderID: id, Symbol: "USDT-NGN", Side: side,
			Type: engine.Limit, TIF: engine.GTC, Price: engine.Price(price), Qty: 100, Metadata: meta})
		return id
	}
	resting := place(a, engine.Sell, 151000, `{"order":"1001","user":"ada"}`)
	plain := place(a, engine.Sell, 152000, "")
	odd := place(a, engine.Sell, 153000, "not json")
	nul := place(a, engine.Sell, 154000, `{"k":"a\u0000b"}`) // jsonb refuses it
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	filled := place(a, engine.Sell, 150000, `{"order":"1002"}`)
	place(b, engine.Buy, 150000, "") // fills it in the same batch
	if err := r.p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	st := NewStore(r.p.pool)
	for id, want := range map[engine.OrderID]string{
		resting: `{"order":"1001","user":"ada"}`, plain: "", odd: "", nul: "", filled: `{"order":"1002"}`,
	} {
		o, ok, err := st.GetOrder(ctx, "sandbox", uuid.UUID(a), uuid.UUID(id))
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		if o.View.Metadata != want {
			t.Fatalf("order metadata %q, want %q", o.View.Metadata, want)
		}
	}
	for filter, want := range map[string][]engine.OrderID{
		`{"order":"1001"}`:               {resting},
		`{"order":"1002"}`:               {filled},
		`{"order":"1001","user":"ada"}`:  {resting},
		`{"order":"1001","user":"bola"}`: nil,
	} {
		rows, total, err := st.ListOrders(ctx, "sandbox", uuid.UUID(a), OrderFilter{Metadata: filter}, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if int(total) != len(want) || len(rows) != len(want) {
			t.Fatalf("filter %s: %d rows (total %d), want %d", filter, len(rows), total, len(want))
		}
		for i := range want {
			if rows[i].View.ID != want[i] {
				t.Fatalf("filter %s: row %d is another order", filter, i)
			}
		}
	}
	// Another merchant's filter finds nothing of a's.
	if rows, _, err := st.ListOrders(ctx, "sandbox", uuid.UUID(b), OrderFilter{Metadata: `{"order":"1001"}`}, 10, 0); err != nil || len(rows) != 0 {
		t.Fatalf("merchant b: %d rows, %v", len(rows), err)
	}
}
