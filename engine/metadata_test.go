package engine

import (
	"bytes"
	"strings"
	"testing"
)

// TestMetadataEncoding: an event without metadata is the version-1 record it always was
// (journals written before metadata read unchanged); one with metadata is version 4.
func TestMetadataEncoding(t *testing.T) {
	for _, e := range sampleEvents() {
		b := AppendEvent(nil, &e)
		want := eventCodecVersion
		if e.Metadata != "" {
			want = eventMetaCodecVersion
		}
		if b[0] != want {
			t.Fatalf("%v with metadata %q: version %d, want %d", e.Kind, e.Metadata, b[0], want)
		}
		if e.Metadata != "" {
			plain := e
			plain.Metadata = ""
			v1 := AppendEvent(nil, &plain)
			if !bytes.Equal(b[1:len(v1)], v1[1:]) {
				t.Fatalf("version 4 does not extend the version-1 layout")
			}
		}
	}
	// A length that does not match the bytes, or an empty metadata, is refused.
	e := sampleEvents()[3]
	b := AppendEvent(nil, &e)
	if err := DecodeEvent(append(b, 'x'), &Event{}); err == nil {
		t.Fatal("trailing byte after the metadata accepted")
	}
	e.Metadata = ""
	empty := append(AppendEvent(nil, &e), 0, 0)
	empty[0] = eventMetaCodecVersion
	if err := DecodeEvent(empty, &Event{}); err == nil {
		t.Fatal("version 4 with empty metadata accepted")
	}
}

// TestMetadataSurvivesRecovery places orders with and without metadata (resting, and
// filled and retained as closed), then rebuilds the engine from the journal's encoded
// records and from a snapshot: every order has its metadata back, byte for byte.
func TestMetadataSurvivesRecovery(t *testing.T) {
	j, e, submit := startFundedPair(t)
	a, b := acc(1), acc(2)
	metas := map[OrderID]string{
		oid(1): `{"order":"1001"}`, // trades with 2: both FILLED, kept as closed orders
		oid(2): `{"user":"ada","note":"` + strings.Repeat("x", 400) + `"}`,
		oid(3): `{"order":"1002"}`, // rests
		oid(4): "",                 // rests, none
	}
	place := func(acct AccountID, id uint64, side Side, price Price) {
		t.Helper()
		if r := submit(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: acct, OrderID: oid(id), Side: side,
			Type: Limit, Price: price, Qty: one, Metadata: metas[oid(id)]}); r.Code != OK {
			t.Fatalf("place %d: %+v", id, r)
		}
	}
	place(a, 1, Buy, 1500*px)
	place(b, 2, Sell, 1490*px)
	place(a, 4, Buy, 1400*px)
	place(b, 3, Sell, 1600*px)
	if r := submit(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(9), Side: Buy, Type: Limit,
		Price: 1500 * px, Qty: one, Metadata: strings.Repeat("m", MaxMetadata+1)}); r.Code != RejectInvalidCommand {
		t.Fatalf("metadata over MaxMetadata: %v, want %v", r.Code, RejectInvalidCommand)
	}
	snap, _, err := e.Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Stop()

	// The journal as a file or Kafka journal holds it: batch records, decoded again.
	var rec []byte
	var decoded []Event
	var ev Event
	for _, x := range j.Events() {
		rec = AppendBatch(rec[:0], []Event{x})
		if err := DecodeRecord(rec, &ev, func(e *Event) error { decoded = append(decoded, *e); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	fromJournal, _ := New(Config{Journal: &MemJournal{}})
	if err := fromJournal.Apply(decoded); err != nil {
		t.Fatal(err)
	}
	fromSnap, _ := New(Config{Journal: &MemJournal{}})
	if _, err := fromSnap.Restore(snap); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Engine{"live": e, "journal": fromJournal, "snapshot": fromSnap} {
		for id, want := range metas {
			acct := a
			if id == oid(2) || id == oid(3) {
				acct = b
			}
			v, ok := r.Order(acct, id)
			if !ok {
				t.Fatalf("%s: order %x missing", name, id[15])
			}
			if v.Metadata != want {
				t.Fatalf("%s: order %x metadata %q, want %q", name, id[15], v.Metadata, want)
			}
		}
	}
	if !bytes.Equal(fromJournal.core.snapshot(nil, 0), fromSnap.core.snapshot(nil, 0)) {
		t.Fatal("journal and snapshot recoveries differ")
	}
}

// TestVersion2SnapshotStillRestores: a snapshot without metadata in the version-2 layout
// (what engines before metadata wrote) restores.
func TestVersion2SnapshotStillRestores(t *testing.T) {
	x := newTC(t, 16)
	a := acc(1)
	x.credit(a, NGN, 10_000_000*ngn)
	if r := x.limit(a, 1, Buy, 1500*px, one); r.Code != OK {
		t.Fatal(r.Code)
	}
	snap := x.c.snapshot(nil, 7)
	snap[len(snapshotMagic)] = 2
	c, err := newCore(DefaultPairs(), 16)
	if err != nil {
		t.Fatal(err)
	}
	if off, err := c.restore(snap); err != nil || off != 7 {
		t.Fatalf("version 2: offset %d, %v", off, err)
	}
	if v, ok := orderOfCore(c, a, oid(1)); !ok || v.Metadata != "" || v.Qty != one {
		t.Fatalf("order after restore: %+v %v", v, ok)
	}
}
