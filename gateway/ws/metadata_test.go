package ws_test

import (
	"encoding/json"
	"testing"
	"time"

	"svc/gateway/api"
	"svc/gateway/ws"
)

// Orders placed over the socket take metadata as the REST body does (order.place and
// orders.batch run it, field errors included), and the private orders channel carries it on
// the order's ORDER_ACCEPTED and in a resume's snapshot of open orders.
func TestOrderMetadataOverTheSocket(t *testing.T) {
	e := newEntry(t, ws.Config{})
	key := e.a.SandboxKey
	watcher, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	if err := watcher.Subscribe("orders"); err != nil {
		t.Fatal(err)
	}
	if m := readPriv(t, watcher); m.Type != "ack" {
		t.Fatalf("ack: %+v", m)
	}
	trader, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	defer trader.Close()
	type metaOrder struct {
		ID       string            `json:"id"`
		Metadata map[string]string `json:"metadata"`
	}
	withMeta := func(side, price string, md any) map[string]any {
		p := limit(side, "1", price, "")
		p["metadata"] = md
		return p
	}
	r := call(t, trader, "order.place", 1, withMeta("buy", "1500", map[string]string{"order": "1001"}))
	var placed metaOrder
	if err := json.Unmarshal(r.Data, &placed); err != nil || r.Status != 201 || placed.Metadata["order"] != "1001" {
		t.Fatalf("place: %+v %v", r, err)
	}
	batch := call(t, trader, "orders.batch", 2, map[string]any{"orders": []any{
		map[string]any{"op": "order.place", "params": withMeta("buy", "1400", map[string]string{"order": "1002"})},
		map[string]any{"op": "order.place", "params": withMeta("buy", "1400", map[string]any{"n": 1})},
	}})
	var items []opResult
	if err := json.Unmarshal(batch.Data, &items); err != nil || len(items) != 2 {
		t.Fatalf("batch: %+v %v", batch, err)
	}
	var second metaOrder
	if err := json.Unmarshal(items[0].Data, &second); err != nil || items[0].Status != 201 || second.Metadata["order"] != "1002" {
		t.Fatalf("batch place: %+v", items[0])
	}
	if items[1].Status != 400 || items[1].Code != api.CodeValidation || len(items[1].Errors) != 1 || items[1].Errors[0].Field != "metadata.n" {
		t.Fatalf("batch bad metadata: %+v", items[1])
	}

	// ORDER_ACCEPTED of each carries its metadata
	seen := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 2 && time.Now().Before(deadline) {
		m := readPriv(t, watcher)
		var d struct {
			Event    string            `json:"event"`
			OrderID  string            `json:"order_id"`
			Metadata map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatal(err)
		}
		if m.Channel == "orders" && d.Event == "ORDER_ACCEPTED" {
			seen[d.OrderID] = d.Metadata["order"]
		}
	}
	if seen[placed.ID] != "1001" || seen[second.ID] != "1002" {
		t.Fatalf("ORDER_ACCEPTED metadata: %v", seen)
	}

	// a resume the window cannot serve: the snapshot's open orders carry it too
	w, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Send(map[string]any{"op": "subscribe", "channels": []string{"orders"}, "since": 1}); err != nil {
		t.Fatal(err)
	}
	readPriv(t, w) // ack
	readPriv(t, w) // resume: snapshot
	snap := readPriv(t, w)
	var open []metaOrder
	if err := json.Unmarshal(snap.Data, &open); err != nil || snap.Type != "snapshot" || len(open) != 2 {
		t.Fatalf("snapshot: %+v %v", snap, err)
	}
	for _, o := range open {
		if want := map[string]string{placed.ID: "1001", second.ID: "1002"}[o.ID]; o.Metadata["order"] != want {
			t.Fatalf("snapshot order %s metadata %v, want order=%s", o.ID, o.Metadata, want)
		}
	}
}
