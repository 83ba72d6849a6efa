package engine

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// refSnapshot is the encoder as it was before capture/finish split it (one pass, under
// the pause): TestSnapshotSameBytes holds the split one to its bytes.
func (c *core) refSnapshot(dst []byte, offset uint64) []byte {
	w := &enc{b: dst}
	w.b = append(w.b, snapshotMagic...)
	w.b = append(w.b, SnapshotVersion)
	w.u(offset)
	w.u(c.funds.seq)

	accts := c.accts.sorted()
	n := 0
	for _, a := range accts {
		if !a.empty() {
			n++
		}
	}
	w.u(uint64(n))
	var tids []TransferID
	for _, a := range accts {
		if a.empty() {
			continue
		}
		w.id(a.id)
		for as := NGN; as < numAssets; as++ {
			w.i(a.bal[as].Available)
			w.i(a.bal[as].Locked)
		}
		tids = tids[:0]
		for t := range a.transfers {
			tids = append(tids, t)
		}
		slices.SortFunc(tids, func(x, y TransferID) int { return bytes.Compare(x[:], y[:]) })
		w.u(uint64(len(tids)))
		for _, t := range tids {
			w.id(t)
		}
	}

	w.u(uint64(len(c.markets)))
	for _, m := range c.markets {
		w.s(m.symbol)
		w.u(m.seq)
		var open []*order
		for _, s := range [2]Side{Buy, Sell} {
			for l := range m.book.levelsFrom(s) {
				for o := l.head; o != nil; o = o.next {
					open = append(open, o)
				}
			}
		}
		w.u(uint64(len(open)))
		for _, o := range open {
			writeOrder(w, o)
		}
		var closed []*order
		for i := range m.closed {
			if o := m.closed[(m.closedPos+i)%len(m.closed)]; o != nil {
				closed = append(closed, o)
			}
		}
		w.u(uint64(len(closed)))
		for _, o := range closed {
			writeOrder(w, o)
		}
		cds := make([]countdownKey, 0, len(m.countdowns))
		for k := range m.countdowns {
			cds = append(cds, k)
		}
		slices.SortFunc(cds, compareKeys)
		w.u(uint64(len(cds)))
		for _, k := range cds {
			w.id(k.acct)
			w.id(k.owner)
			w.i(m.countdowns[k])
		}
	}
	return w.b
}

// TestSnapshotSameBytes: the image capture and finish write is byte for byte the one the
// single-pass encoder wrote, on a state with every section filled (accounts with many
// transfer ids, resting and closed orders, client ids), into a nil buffer, a buffer with
// room, and after a prefix.
func TestSnapshotSameBytes(t *testing.T) {
	e := snapshotState(t, 3000, 300, 5000)
	e.Stop()
	x := newTC(t, 64)
	a := acc(1)
	x.credit(a, NGN, 1e9*ngn)
	for i := 0; i < 3; i++ {
		if r := x.exec(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: acc(i + 1), Amount: 5e9, TransferID: tid(uint64(90 + i))}); r.Code != OK {
			t.Fatal(r.Code)
		}
	}
	for name, c := range map[string]*core{"bench state": e.core, "countdowns": x.c} {
		want := c.refSnapshot([]byte("prefix"), 77)
		for _, dst := range [][]byte{nil, make([]byte, 0, len(want)+10), []byte("prefix")} {
			got := c.snapshot(dst, 77)
			if len(dst) == 0 {
				got = append([]byte("prefix"), got...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: image differs from the single-pass encoder's (%d vs %d bytes)", name, len(got), len(want))
			}
		}
	}
	if got, _, err := e.Snapshot(nil); err != nil || !bytes.Equal(got, e.core.refSnapshot(nil, e.Offset())) {
		t.Fatal("Engine.Snapshot differs", err)
	}
}

// TestVarintLen: the sizes capture reserves for the accounts section are the sizes the
// encoder writes, at every width's edges and for negative values.
func TestVarintLen(t *testing.T) {
	vals := []int64{0, 1, -1, 63, 64, -64, -65, math.MaxInt64, math.MinInt64}
	for s := 1; s < 64; s++ {
		vals = append(vals, 1<<s-1, 1<<s, -(1 << s), -(1<<s)-1)
	}
	for _, v := range vals {
		if got, want := varintLen(v), len(binary.AppendVarint(nil, v)); got != want {
			t.Errorf("varintLen(%d) = %d, want %d", v, got, want)
		}
		if got, want := uvarintLen(uint64(v)), len(binary.AppendUvarint(nil, uint64(v))); got != want {
			t.Errorf("uvarintLen(%d) = %d, want %d", uint64(v), got, want)
		}
	}
}
