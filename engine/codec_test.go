package engine

import (
	"bytes"
	"testing"
)

func sampleEvents() []Event {
	a := AccountID{1, 2, 3}
	b := AccountID{9, 8, 7}
	return []Event{
		{Seq: 1, Time: 1700000000000000000, Kind: EventAccepted, Symbol: "USDT-NGN", Account: a, OrderID: OrderID{5}, ClientOrderID: "mine-1",
			Side: Buy, Type: Limit, TIF: IOC, STP: STPCancelBoth, PostOnly: true, Price: 150000, Qty: 1234,
			NDeltas: 1, Deltas: [4]BalanceDelta{{Account: a, Asset: NGN, Available: -99, Locked: 99}}},
		{Seq: 2, Kind: EventTrade, Symbol: "USDT-NGN", Account: a, OrderID: OrderID{5}, MakerOrderID: OrderID{6}, MakerAccount: b,
			Price: 150000, Qty: 10, Amount: 1500000, NDeltas: 4, Deltas: [4]BalanceDelta{
				{Account: a, Asset: NGN, Locked: -1}, {Account: a, Asset: USDT, Available: 1}, {Account: b, Asset: USDT, Locked: -1}, {Account: b, Asset: NGN, Available: 1}}},
		{Seq: 3, Kind: EventCredit, Account: b, Asset: USDT, Amount: 5_000_000, TransferID: TransferID{4, 4}, NDeltas: 1,
			Deltas: [4]BalanceDelta{{Account: b, Asset: USDT, Available: 5_000_000}}},
		{Seq: 4, Time: 1700000000000000001, Kind: EventAccepted, Symbol: "USDT-NGN", Account: b, OrderID: OrderID{7},
			Metadata: `{"order":"1001","user":"ada"}`, Side: Sell, Type: Limit, Price: 151000, Qty: 100,
			NDeltas: 1, Deltas: [4]BalanceDelta{{Account: b, Asset: USDT, Available: -100, Locked: 100}}},
	}
}

func TestEventCodecRoundTrip(t *testing.T) {
	for _, e := range sampleEvents() {
		b := AppendEvent(nil, &e)
		var got Event
		if err := DecodeEvent(b, &got); err != nil {
			t.Fatalf("decode %v: %v", e.Kind, err)
		}
		if got != e {
			t.Fatalf("round trip changed the event:\n got %+v\nwant %+v", got, e)
		}
		// Every truncation is refused, never a panic.
		for i := 0; i < len(b); i++ {
			if err := DecodeEvent(b[:i], &got); err == nil {
				t.Fatalf("truncated record of %d/%d bytes accepted", i, len(b))
			}
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, e := range sampleEvents() {
		f.Add(AppendEvent(nil, &e))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Event
		if err := DecodeEvent(b, &e); err != nil {
			return
		}
		// What decodes re-encodes to the same bytes.
		if again := AppendEvent(nil, &e); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n%x\n%x", b, again)
		}
	})
}

func BenchmarkEventCodec(b *testing.B) {
	evs := sampleEvents()
	buf := make([]byte, 0, 512)
	var e Event
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendEvent(buf[:0], &evs[1])
		if err := DecodeEvent(buf, &e); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBatchRecordRoundTrip(t *testing.T) {
	evs := sampleEvents()
	rec := AppendBatch(nil, evs)
	var got []Event
	var e Event
	if err := DecodeRecord(rec, &e, func(e *Event) error { got = append(got, *e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(evs) {
		t.Fatalf("%d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if got[i] != evs[i] {
			t.Fatalf("event %d changed", i)
		}
	}
	// A truncated record yields nothing at all.
	for i := 0; i < len(rec); i++ {
		calls := 0
		if err := DecodeRecord(rec[:i], &e, func(*Event) error { calls++; return nil }); err == nil || calls != 0 {
			t.Fatalf("truncated at %d/%d: err %v after %d events", i, len(rec), err, calls)
		}
	}
	// Version-1 single-event records still read.
	one := AppendEvent(nil, &evs[0])
	calls := 0
	if err := DecodeRecord(one, &e, func(*Event) error { calls++; return nil }); err != nil || calls != 1 {
		t.Fatalf("v1 record: %v, %d events", err, calls)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(AppendBatch(nil, sampleEvents()))
	f.Add(AppendEvent(nil, &sampleEvents()[0]))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Event
		var evs []Event
		if err := DecodeRecord(b, &e, func(e *Event) error { evs = append(evs, *e); return nil }); err != nil {
			if len(evs) != 0 {
				t.Fatalf("a bad record delivered %d events", len(evs))
			}
			return
		}
		if b[0] == batchCodecVersion {
			if again := AppendBatch(nil, evs); !bytes.Equal(again, b) {
				t.Fatalf("re-encoding differs")
			}
		}
	})
}

func TestEventSizeMatchesEncoding(t *testing.T) {
	for _, e := range sampleEvents() {
		if got, want := EventSize(&e), len(AppendEvent(nil, &e)); got != want {
			t.Fatalf("EventSize %d, encoding %d bytes (%v)", got, want, e.Kind)
		}
	}
}
