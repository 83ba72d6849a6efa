package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPropertyReplayEqualsLive runs random workloads, checks every invariant after each
// command, then rebuilds the state from the events alone in a random interleaving of
// streams, and from a snapshot, and compares.
func TestPropertyReplayEqualsLive(t *testing.T) {
	seeds, steps := 40, 1500
	if testing.Short() || raceEnabled {
		seeds, steps = 10, 800
	}
	base := testSeed(t, 1)
	for s := 0; s < seeds; s++ {
		seed := base + uint64(s)
		x := newTC(t, 40) // small closed ring so eviction is exercised
		g := newGen(seed, 5)
		for _, c := range g.funding() {
			x.exec(c)
		}
		for i := 0; i < steps; i++ {
			c := g.cmd()
			x.exec(c)
			if err := checkCore(x.c, &x.net); err != nil {
				t.Fatalf("seed %d step %d (%v): %v", seed, i, c.Kind, err)
			}
		}
		for k := 0; k < 3; k++ {
			rebuilt := replay(t, x.events, 40, rand.New(rand.NewPCG(seed, uint64(k))))
			sameState(t, "replay", x.c, rebuilt)
			if err := checkCore(rebuilt, &x.net); err != nil {
				t.Fatalf("seed %d: rebuilt state: %v", seed, err)
			}
		}
		// snapshot round trip, then replaying the whole journal again changes nothing.
		snap := x.c.snapshot(nil, 7)
		c2, _ := newCore(DefaultPairs(), 40)
		off, err := c2.restore(snap)
		if err != nil || off != 7 {
			t.Fatalf("seed %d: restore: %v %d", seed, err, off)
		}
		if again := c2.snapshot(nil, 7); !bytes.Equal(snap, again) {
			t.Fatalf("seed %d: snapshot round trip differs", seed)
		}
		for i := range x.events {
			if err := c2.apply(&x.events[i]); err != nil {
				t.Fatal(err)
			}
		}
		sameState(t, "restore+replay", x.c, c2)
		// and the restored core keeps working like the live one.
		for i := 0; i < 50; i++ {
			c := g.cmd()
			var r1, r2 Result
			c.Time = int64(1e18 + i)
			c1 := c
			x.c.exec(&c1, &r1)
			c2.exec(&c, &r2)
			if r1 != r2 {
				t.Fatalf("seed %d: after restore %+v != %+v", seed, r2, r1)
			}
		}
		sameState(t, "after restore", x.c, c2)
	}
}

func TestSnapshotRejectsGarbage(t *testing.T) {
	x := newTC(t, 8)
	g := newGen(3, 3)
	for _, c := range g.funding() {
		x.exec(c)
	}
	for i := 0; i < 200; i++ {
		x.exec(g.cmd())
	}
	snap := x.c.snapshot(nil, 1)
	for _, bad := range [][]byte{nil, []byte("SVCENG"), append([]byte("SVCENG\x09"), snap[7:]...), snap[:len(snap)/2], append(append([]byte{}, snap...), 0)} {
		c, _ := newCore(DefaultPairs(), 8)
		if _, err := c.restore(bad); err == nil {
			t.Fatalf("restored %d bad bytes", len(bad))
		}
	}
}

func TestApplyRejectsGap(t *testing.T) {
	x := newTC(t, 8)
	x.credit(acc(1), NGN, 5)
	x.credit(acc(1), NGN, 5)
	c, _ := newCore(DefaultPairs(), 8)
	if err := c.apply(&x.events[1]); err == nil {
		t.Fatal("gap accepted")
	}
	if err := c.apply(&x.events[0]); err != nil {
		t.Fatal(err)
	}
	if err := c.apply(&x.events[0]); err != nil { // already applied: skipped
		t.Fatal(err)
	}
}

// FuzzEngine drives a command stream decoded from the input and checks the invariants
// after every command.
func FuzzEngine(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(bytes.Repeat([]byte{0x55, 0xAA, 3, 200, 17}, 40))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := newTC(t, 16)
		g := newGen(1, 4)
		for _, c := range g.funding() {
			x.exec(c)
		}
		for len(data) >= 8 {
			// the input chooses the generator's randomness, 8 bytes per command
			var seed uint64
			for _, b := range data[:8] {
				seed = seed<<8 | uint64(b)
			}
			data = data[8:]
			g.r = rand.New(rand.NewPCG(seed, 0))
			c := g.cmd()
			x.exec(c)
			if err := checkCore(x.c, &x.net); err != nil {
				t.Fatalf("%v after %+v", err, c)
			}
		}
		rebuilt := replay(t, x.events, 16, rand.New(rand.NewPCG(1, 2)))
		sameState(t, "fuzz replay", x.c, rebuilt)
	})
}
