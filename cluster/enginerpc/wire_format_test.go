package enginerpc

import (
	"encoding/hex"
	"reflect"
	"testing"

	"svc/engine"
)

// wireSamples are one message of each kind with every field set, and the exact bytes it is
// on the wire: a change of the format (field order, widths) fails here, and so does a decode
// that does not give back what was encoded.
func wireSamples() []struct {
	name string
	msg  message
	hex  string
} {
	id := func(b byte) [16]byte {
		var v [16]byte
		for i := range v {
			v[i] = b + byte(i)
		}
		return v
	}
	st := status{kind: errOther, msg: "no such symbol", failed: true, offset: 0x0102030405060708}
	bal := engine.Balances{}
	for i := range bal {
		bal[i] = engine.Balance{Available: int64(1000 + i), Locked: int64(-1 - i)}
	}
	return []struct {
		name string
		msg  message
		hex  string
	}{
		{"empty", &empty{},
			"03"},
		{"command", &commandMsg{c: engine.Command{Kind: engine.CmdPlace, Time: -5, Account: id(0x10), Symbol: "USDT-NGN",
			OrderID: id(0x20), ClientOrderID: "c-1", Side: engine.Sell, Type: engine.Limit, TIF: engine.FOK, STP: 2,
			PostOnly: true, Price: 150000, Qty: 700, QuoteQty: 9, Asset: engine.USDT, Amount: -77, TransferID: id(0x30), Metadata: `{"a":"b"}`, Reason: engine.ReasonDisconnect}},
			"0301fbffffffffffffff101112131415161718191a1b1c1d1e1f08555344542d4e474e202122232425262728292a2b2c2d2e2f03632d310201020201f049020000000000bc02000000000000090000000000000002b3ffffffffffffff303132333435363738393a3b3c3d3e3f097b2261223a2262227d07"},
		{"submit reply", &submitReply{st: st, res: engine.Result{Code: 3, OrderID: id(0x40), State: 2, Reason: 1,
			Filled: 55, Seq: 66, Offset: 77, Cancelled: 8}},
			"03040e6e6f20737563682073796d626f6c01080706050403020103404142434445464748494a4b4c4d4e4f0201370000000000000042000000000000004d000000000000000800000000000000"},
		{"order request", &orderReq{acct: id(0x50), byClient: true, id: id(0x60), clientID: "client"},
			"03505152535455565758595a5b5c5d5e5f01606162636465666768696a6b6c6d6e6f06636c69656e74"},
		{"order reply", &orderReply{st: st, ok: true, view: engine.OrderView{ID: id(0x70), ClientOrderID: "cid", Account: id(0x80),
			Symbol: "USDC-NGN", Side: engine.Buy, Type: engine.Market, TIF: engine.IOC, PostOnly: true, Price: 1, Qty: 2,
			QuoteQty: 3, Filled: 4, State: 5, Reason: 6, Time: 7, Metadata: `{"a":"b"}`}},
			"03040e6e6f20737563682073796d626f6c01080706050403020101707172737475767778797a7b7c7d7e7f03636964808182838485868788898a8b8c8d8e8f08555344432d4e474e01020101010000000000000002000000000000000300000000000000040000000000000005060700000000000000097b2261223a2262227d"},
		{"account request", &accountReq{acct: id(0x90)},
			"03909192939495969798999a9b9c9d9e9f"},
		{"balances reply", &balancesReply{st: st, bal: bal},
			"03040e6e6f20737563682073796d626f6c01080706050403020105e803000000000000ffffffffffffffffe903000000000000feffffffffffffffea03000000000000fdffffffffffffffeb03000000000000fcffffffffffffffec03000000000000fbffffffffffffff"},
		{"pairs reply", &pairsReply{st: st, pairs: []engine.PairConfig{
			{Symbol: "USDT-NGN", Base: engine.USDT, Quote: engine.NGN, PriceDecimals: 2, QtyDecimals: 2, TickSize: 1, StepSize: 1,
				MinQty: 100, MinNotional: 100000, MaxPrice: 1 << 40, MaxQty: 1 << 41},
			{Symbol: "X", Base: 1, Quote: 2, PriceDecimals: 3, QtyDecimals: 4, TickSize: 5, StepSize: 6, MinQty: 7, MinNotional: 8,
				MaxPrice: 9, MaxQty: 10}}},
			"03040e6e6f20737563682073796d626f6c0108070605040302010208555344542d4e474e020102000000000000000200000000000000010000000000000001000000000000006400000000000000a086010000000000000000000001000000000000000200000158010203000000000000000400000000000000050000000000000006000000000000000700000000000000080000000000000009000000000000000a00000000000000"},
		{"status reply", &statusReply{st: st},
			"03040e6e6f20737563682073796d626f6c010807060504030201"},
		{"depth request", &depthReq{symbol: "USDT-NGN", n: 300},
			"0308555344542d4e474eac02"},
		{"depth reply", &depthReply{st: st, d: engine.Depth{Symbol: "USDT-NGN", Seq: 12,
			Bids: []engine.Level{{Price: 10, Qty: 20, Count: 3}, {Price: 9, Qty: 1, Count: 1}},
			Asks: []engine.Level{{Price: 11, Qty: 5, Count: 2}}}},
			"03040e6e6f20737563682073796d626f6c01080706050403020108555344542d4e474e0c00000000000000020a0000000000000014000000000000000300000000000000090000000000000001000000000000000100000000000000010b0000000000000005000000000000000200000000000000"},
	}
}

func TestWireFormat(t *testing.T) {
	for _, tc := range wireSamples() {
		t.Run(tc.name, func(t *testing.T) {
			data, err := codec{}.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(data); got != tc.hex {
				t.Errorf("wire bytes\n got %s\nwant %s", got, tc.hex)
			}
			back := reflect.New(reflect.TypeOf(tc.msg).Elem()).Interface().(message)
			if err := (codec{}).Unmarshal(data, back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.msg) {
				t.Errorf("round trip\n got %+v\nwant %+v", back, tc.msg)
			}
		})
	}
}

// BenchmarkCodec encodes and decodes each sample message once per op.
func BenchmarkCodec(b *testing.B) {
	for _, tc := range wireSamples() {
		if tc.name != "command" && tc.name != "submit reply" && tc.name != "depth reply" {
			continue
		}
		b.Run(tc.name, func(b *testing.B) {
			back := reflect.New(reflect.TypeOf(tc.msg).Elem()).Interface().(message)
			b.ReportAllocs()
			for b.Loop() {
				data, err := codec{}.Marshal(tc.msg)
				if err != nil {
					b.Fatal(err)
				}
				if err := (codec{}).Unmarshal(data, back); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
