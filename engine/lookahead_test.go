package engine

import "testing"

// TestAddCancelPeek: the add/cancel harness's look-ahead names the commands that the
// next three ops then run (a wrong guess would only waste a prefetch, but the benchmark
// would then measure less than what the runner's look-ahead gives).
func TestAddCancelPeek(t *testing.T) {
	w := newAddCancel(t, 100)
	w.fifo = append(make([]OrderID, 0, 1<<14), w.fifo...)
	w.owner = append(make([]AccountID, 0, 1<<14), w.owner...)
	peeked := map[int][]Command{}
	for i := 0; i < 2000; i++ {
		for k := 1; k <= 3; k++ {
			var c Command
			w.peek(i, k, &c)
			peeked[i+k] = append(peeked[i+k], c)
		}
		w.op(i)
		ran := w.cmd // a cancel
		if i&3 >= 2 {
			ran = w.add1
		}
		for _, p := range peeked[i] {
			if p.Kind != ran.Kind || p.Account != ran.Account || p.OrderID != ran.OrderID {
				t.Fatalf("op %d: peeked %v %x %x, ran %v %x %x", i, p.Kind, p.Account, p.OrderID, ran.Kind, ran.Account, ran.OrderID)
			}
		}
		delete(peeked, i)
	}
}
