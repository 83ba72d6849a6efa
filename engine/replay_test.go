package engine

import "testing"

// TestParallelApplyEqualsLive: applying a journal with every stream on a goroutine of its
// own (applyAll, as Engine.Apply does) gives the live state, in whole and in chunks that
// start anywhere, with closed-order eviction (client ids reused across symbols are
// TestClientOrderIDConcurrentSymbols', through Engine.Apply). Run it under -race.
func TestParallelApplyEqualsLive(t *testing.T) {
	seeds, steps := 10, 1500
	if testing.Short() || raceEnabled {
		seeds, steps = 4, 800
	}
	base := testSeed(t, 1)
	for s := 0; s < seeds; s++ {
		seed := base + uint64(s)
		x := newTC(t, 40)
		g := newGen(seed, 5)
		for _, c := range g.funding() {
			x.exec(c)
		}
		for i := 0; i < steps; i++ {
			x.exec(g.cmd())
		}
		for _, chunk := range []int{len(x.events), 4096, 97, parallelApplyMin} {
			c, err := newCore(DefaultPairs(), 40)
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < len(x.events); k += chunk {
				if err := c.applyAll(x.events[k:min(k+chunk, len(x.events))]); err != nil {
					t.Fatalf("seed %d chunk %d: %v", seed, chunk, err)
				}
			}
			sameState(t, "parallel apply", x.c, c)
		}
	}
}
