package journal

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// A reader tailing the journal (the projector: read a chunk, stop, read on from there)
// resumes where the previous ReadFrom stopped instead of re-reading its segment from the
// start, which made each chunk cost O(segment size) and the projector slow down as the
// segment grew. The records delivered must be the same either way, and a wrong hint must
// fall back to reading the segment from its start.
func TestFileReadFromResumesAtHint(t *testing.T) {
	ctx := context.Background()
	j := openFile(t, FileOptions{SegmentSize: 1 << 12})
	const total = 300
	for i := 1; i <= total; i++ {
		if _, err := j.Append(ctx, [][]byte{fmt.Appendf(nil, "record %04d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("chunk full")
	readChunk := func(from uint64, n int) []uint64 {
		t.Helper()
		var got []uint64
		err := j.ReadFrom(ctx, from, func(off uint64, p []byte) error {
			if len(got) == n {
				return stop
			}
			if want := fmt.Sprintf("record %04d", off); string(p) != want {
				t.Fatalf("offset %d: payload %q, want %q", off, p, want)
			}
			got = append(got, off)
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			t.Fatalf("ReadFrom(%d): %v", from, err)
		}
		return got
	}
	next := uint64(1)
	for next <= total {
		got := readChunk(next, 7)
		if len(got) == 0 || got[0] != next {
			t.Fatalf("ReadFrom(%d) delivered %v", next, got)
		}
		for k, off := range got {
			if off != next+uint64(k) {
				t.Fatalf("ReadFrom(%d) delivered %v: not consecutive", next, got)
			}
		}
		next += uint64(len(got))
		j.hintMu.Lock()
		h := j.hint
		j.hintMu.Unlock()
		if next <= total && (h.next != next || h.pos == 0 && h.seg != next) {
			t.Fatalf("after reading up to %d the hint is %+v", next-1, h)
		}
	}

	// A hint pointing inside a frame is detected and the segment is read from its start.
	j.hintMu.Lock()
	h := j.hint
	j.hint = readHint{seg: h.seg, next: h.next - 1, pos: h.pos - 3}
	j.hintMu.Unlock()
	if got := readChunk(h.next-1, 1); len(got) != 1 || got[0] != h.next-1 {
		t.Fatalf("with a wrong hint ReadFrom(%d) delivered %v", h.next-1, got)
	}
	// An earlier offset than the hint reads from the segment's start.
	if got := readChunk(2, 3); len(got) != 3 || got[0] != 2 {
		t.Fatalf("ReadFrom(2) after the hint moved on delivered %v", got)
	}
}

// BenchmarkReadFromTail is the projector's read pattern: a chunk of 4,096 records read at
// the tail of a 48 MiB segment. "from segment start" drops the hint before each read (what
// every read cost before the hint existed); "resume" keeps it.
func BenchmarkReadFromTail(b *testing.B) {
	ctx := context.Background()
	j, err := OpenFile(FileOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	if err := j.Start(); err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	payload := make([]byte, 200) // about one engine event
	group := make([][]byte, 1024)
	for i := range group {
		group[i] = payload
	}
	const records = 48 << 20 / 216 // frames of 16 + 200 bytes
	for n := 0; n < records; n += len(group) {
		if _, err := j.Append(ctx, group); err != nil {
			b.Fatal(err)
		}
	}
	last := j.LastOffset()
	const chunk = 4096
	stop := errors.New("chunk full")
	for _, mode := range []string{"from segment start", "resume"} {
		b.Run(mode, func(b *testing.B) {
			from := last - chunk*uint64(b.N+1)
			if b.N+1 > int(last/chunk)-1 {
				from = 1
			}
			b.SetBytes(chunk * 216)
			for i := 0; i < b.N; i++ {
				if mode != "resume" {
					j.hintMu.Lock()
					j.hint = readHint{}
					j.hintMu.Unlock()
				}
				n := 0
				err := j.ReadFrom(ctx, from, func(uint64, []byte) error {
					if n++; n == chunk {
						return stop
					}
					return nil
				})
				if err != nil && !errors.Is(err, stop) {
					b.Fatal(err)
				}
				from += chunk
				if from+chunk > last {
					from = last - chunk*uint64(b.N)
					if from < 1 || from > last {
						from = 1
					}
				}
			}
		})
	}
}
