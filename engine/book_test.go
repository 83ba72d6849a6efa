package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBookLadderAndFar drives one book with prices spread over many ladder windows (so
// levels live in the ladder and in the btree, and the window moves) and checks after
// every step that the best level, the level count and the order of iteration match a
// sorted model of the resting prices.
func TestBookLadderAndFar(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tick   Price
		spread int // prices drawn from [centre-spread, centre+spread] ticks
		drift  int // ticks the centre may move per step
	}{
		{"near", 1, 300, 1},
		{"wide", 1, 3 * ladderSize, 50},
		{"tick5 wide", 5, 2 * ladderSize, 400},
		{"jumps", 1, 40, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.spread), uint64(tc.drift)))
			b := newBook(tc.tick)
			var live []*order
			centre := int64(10 * ladderSize)
			for step := 0; step < 20000; step++ {
				centre += int64(r.IntN(2*tc.drift+1) - tc.drift)
				if len(live) > 0 && (r.IntN(2) == 0 || len(live) > 400) {
					i := r.IntN(len(live))
					o := live[i]
					live = slices.Delete(live, i, i+1)
					if r.IntN(3) == 0 && o.remaining > 1 {
						b.fill(o, 1)
					}
					b.remove(o)
				} else {
					s := Side(1 + r.IntN(2))
					off := int64(r.IntN(tc.spread + 1))
					ticks := centre + off // asks above the centre, bids below
					if s == Buy {
						ticks = centre - off - 1
					}
					o := &order{side: s, price: Price(max(ticks, 1)) * tc.tick, remaining: 5, seq: uint64(step + 1)}
					b.add(o)
					live = append(live, o)
				}
				if err := checkBook(b, live); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
			}
		})
	}
}

func checkBook(b *book, live []*order) error {
	for _, s := range [2]Side{Buy, Sell} {
		want := map[Price]int{}
		for _, o := range live {
			if o.side == s {
				want[o.price]++
			}
		}
		prices := make([]Price, 0, len(want))
		for p := range want {
			prices = append(prices, p)
		}
		slices.SortFunc(prices, func(x, y Price) int { return int(key(s, x) - key(s, y)) })
		var got []Price
		for l := range b.levelsFrom(s) {
			if l.count != want[l.price] || l.key != b.key(s, l.price) {
				return errorf("%v level %d count %d want %d", s, l.price, l.count, want[l.price])
			}
			got = append(got, l.price)
		}
		if !slices.Equal(got, prices) {
			return errorf("%v levels %v want %v", s, got, prices)
		}
		if b.levels(s) != len(prices) {
			return errorf("%v level count %d want %d", s, b.levels(s), len(prices))
		}
		bl := b.bestLevel(s)
		if (len(prices) == 0) != (bl == nil) || (bl != nil && bl.price != prices[0]) {
			return errorf("%v best %v want %v", s, bl, prices)
		}
		d := b.depth(s, 3, nil)
		if len(d) != min(3, len(prices)) {
			return errorf("%v depth %v", s, d)
		}
		// every level inside the window is in the ladder, every other one in the btree
		sd := &b.sides[sideIdx(s)]
		inFar := 0
		sd.far.Scan(func(k int64, l *level) bool {
			if sd.lad.has(k) {
				inFar = -1 << 30
			}
			inFar++
			return true
		})
		if inFar < 0 || inFar+sd.lad.n != len(prices) {
			return errorf("%v ladder %d + btree %d levels, want %d", s, sd.lad.n, inFar, len(prices))
		}
	}
	return nil
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
