package journal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// payloadFor is the deterministic payload of record offset in tests.
func payloadFor(offset uint64) []byte {
	return fmt.Appendf(nil, "event-%d-%0*d", offset, int(offset%50), 0)
}

func batchOf(first uint64, n int) [][]byte {
	b := make([][]byte, n)
	for i := range b {
		b[i] = payloadFor(first + uint64(i))
	}
	return b
}

// readAll returns the payloads from offset from, checking offsets are
// consecutive.
func readAll(t *testing.T, j Journal, from uint64) [][]byte {
	t.Helper()
	var out [][]byte
	want := max(from, 1)
	err := j.ReadFrom(context.Background(), from, func(off uint64, p []byte) error {
		if off != want {
			return fmt.Errorf("offset %d, want %d", off, want)
		}
		want++
		out = append(out, append([]byte(nil), p...))
		return nil
	})
	if err != nil {
		t.Fatalf("ReadFrom(%d): %v", from, err)
	}
	return out
}

// checkPayloads checks recs are payloadFor(first), payloadFor(first+1), ...
func checkPayloads(t *testing.T, recs [][]byte, first uint64, n int) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for i, p := range recs {
		if want := payloadFor(first + uint64(i)); string(p) != string(want) {
			t.Fatalf("record %d = %q, want %q", first+uint64(i), p, want)
		}
	}
}

func mustAppend(t *testing.T, j Journal, payloads [][]byte) uint64 {
	t.Helper()
	last, err := j.Append(context.Background(), payloads)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return last
}

// testContract runs the behaviour every Journal shares. open returns a
// started journal over fresh storage.
func testContract(t *testing.T, open func(t *testing.T) Journal) {
	t.Run("assigns offsets from 1 without gaps and reads them back", func(t *testing.T) {
		j := open(t)
		if j.LastOffset() != 0 {
			t.Fatalf("LastOffset %d on an empty journal", j.LastOffset())
		}
		next := uint64(1)
		for _, n := range []int{1, 3, 64, 2} {
			last := mustAppend(t, j, batchOf(next, n))
			if last != next+uint64(n)-1 {
				t.Fatalf("last %d, want %d", last, next+uint64(n)-1)
			}
			next = last + 1
		}
		if j.LastOffset() != next-1 {
			t.Fatalf("LastOffset %d, want %d", j.LastOffset(), next-1)
		}
		checkPayloads(t, readAll(t, j, 0), 1, int(next-1))
		checkPayloads(t, readAll(t, j, 5), 5, int(next-5))
		checkPayloads(t, readAll(t, j, next-1), next-1, 1)
		if got := readAll(t, j, next); len(got) != 0 {
			t.Fatalf("read past the end: %d records", len(got))
		}
	})
	t.Run("an empty batch returns the last offset", func(t *testing.T) {
		j := open(t)
		mustAppend(t, j, batchOf(1, 2))
		if last := mustAppend(t, j, nil); last != 2 {
			t.Fatalf("last %d", last)
		}
	})
	t.Run("stops reading when fn returns an error", func(t *testing.T) {
		j := open(t)
		mustAppend(t, j, batchOf(1, 10))
		stop := errors.New("stop")
		n := 0
		err := j.ReadFrom(context.Background(), 1, func(uint64, []byte) error {
			if n++; n == 3 {
				return stop
			}
			return nil
		})
		if err != stop || n != 3 {
			t.Fatalf("err %v after %d records", err, n)
		}
	})
	t.Run("concurrent appenders get contiguous, disjoint ranges", func(t *testing.T) {
		j := open(t)
		const writers, batches = 8, 40
		type span struct{ first, last uint64 }
		var mu sync.Mutex
		spans := map[uint64]span{}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 1))
				for range batches {
					n := 1 + rng.IntN(16)
					payloads := make([][]byte, n)
					for i := range payloads {
						payloads[i] = fmt.Appendf(nil, "w%d", w)
					}
					last, err := j.Append(context.Background(), payloads)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					spans[last-uint64(n)+1] = span{last - uint64(n) + 1, last}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		// Every record of one batch carries the same writer tag, and the
		// batches tile [1, last] exactly.
		recs := readAll(t, j, 1)
		if uint64(len(recs)) != j.LastOffset() {
			t.Fatalf("%d records, LastOffset %d", len(recs), j.LastOffset())
		}
		for off := uint64(1); off <= uint64(len(recs)); {
			s, ok := spans[off]
			if !ok {
				t.Fatalf("no batch starts at %d", off)
			}
			for o := s.first; o <= s.last; o++ {
				if string(recs[o-1]) != string(recs[s.first-1]) {
					t.Fatalf("batch %v interleaved at %d", s, o)
				}
			}
			off = s.last + 1
		}
	})
	t.Run("Enqueue fixes the order at once and Wait returns when durable", func(t *testing.T) {
		j := open(t)
		ctx := context.Background()
		var tickets []Ticket
		next := uint64(1)
		buf := make([][]byte, 0, 8)
		for _, n := range []int{3, 1, 8, 2} {
			buf = append(buf[:0], batchOf(next, n)...)
			tk, err := j.Enqueue(ctx, buf)
			if err != nil {
				t.Fatal(err)
			}
			if tk.Last() != next+uint64(n)-1 {
				t.Fatalf("Last %d, want %d", tk.Last(), next+uint64(n)-1)
			}
			for i := range buf { // the journal copied them
				buf[i] = []byte("overwritten")
			}
			tickets = append(tickets, tk)
			next += uint64(n)
		}
		for i := len(tickets) - 1; i >= 0; i-- {
			last, err := tickets[i].Wait(ctx)
			if err != nil || last != tickets[i].Last() {
				t.Fatalf("Wait: %d %v", last, err)
			}
			if j.LastOffset() < last {
				t.Fatalf("LastOffset %d after Wait returned %d", j.LastOffset(), last)
			}
		}
		checkPayloads(t, readAll(t, j, 1), 1, int(next-1))
	})
	t.Run("append after close fails", func(t *testing.T) {
		j := open(t)
		mustAppend(t, j, batchOf(1, 1))
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Append(context.Background(), batchOf(2, 1)); !errors.Is(err, ErrClosed) && !errors.Is(err, ErrFailed) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a cancelled context appends nothing", func(t *testing.T) {
		j := open(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := j.Append(ctx, batchOf(1, 1)); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		// Give a (wrong) committer a chance to write it anyway.
		time.Sleep(5 * time.Millisecond)
		if j.LastOffset() != 0 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
	})
}

func TestMemory(t *testing.T) {
	testContract(t, func(t *testing.T) Journal {
		m := NewMemory()
		if _, err := m.Append(context.Background(), batchOf(1, 1)); !errors.Is(err, ErrNotStarted) {
			t.Fatalf("append before start: %v", err)
		}
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	})
	t.Run("Fail makes appends fail with the same error", func(t *testing.T) {
		m := NewMemory()
		m.Start()
		mustAppend(t, m, batchOf(1, 1))
		m.Fail(errors.New("disk on fire"))
		_, err1 := m.Append(context.Background(), batchOf(2, 1))
		_, err2 := m.Append(context.Background(), batchOf(2, 1))
		if !errors.Is(err1, ErrFailed) || err1 != err2 || m.Err() != err1 {
			t.Fatalf("errors %v / %v / %v", err1, err2, m.Err())
		}
		checkPayloads(t, readAll(t, m, 1), 1, 1)
	})
}
