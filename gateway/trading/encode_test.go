package trading

import (
	"encoding/json"
	"testing"
)

func TestOrderBodyEncoding(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, b := range []orderBody{
		{ID: "01a2", Symbol: "USDT-NGN", Side: "buy", Type: "limit", TimeInForce: "GTC", Quantity: "1.00", FilledQuantity: "0.00", Price: s("1500.00"), Status: "OPEN", CreatedAt: "2026-11-22T03:14:32.349Z", Metadata: noMetadata},
		{ID: "01a3", ClientOrderID: s("my \"id\" <1>\n"), Symbol: "USDT-NGN", Side: "buy", Type: "market", TimeInForce: "IOC", PostOnly: true, Quantity: "2.00", QuoteQuantity: s("3010.0000"),
			FilledQuantity: "2.00", Status: "CANCELLED", CancelReason: s("IOC_REMAINDER"), CreatedAt: "2026-11-22T03:14:32.349Z",
			Metadata: json.RawMessage(`{"order":"1001","note":"\u003cb\u003e ₦"}`)},
		{ID: "01a4", Symbol: "USDT-NGN", Side: "sell", Type: "limit", TimeInForce: "GTC", Quantity: "1.00", FilledQuantity: "0.00", Price: s("1500.00"), Status: "OPEN", CreatedAt: "2026-11-22T03:14:32.349Z"},
	} {
		want, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("hand encoding differs:\n got %s\nwant %s", got, want)
		}
	}
}
