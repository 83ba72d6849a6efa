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
