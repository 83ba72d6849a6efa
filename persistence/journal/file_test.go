package journal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func openFile(t *testing.T, opts FileOptions) *File {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	j, err := OpenFile(opts)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func reopen(t *testing.T, j *File) *File {
	t.Helper()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return openFile(t, j.opts)
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func TestFile(t *testing.T) {
	testContract(t, func(t *testing.T) Journal { return openFile(t, FileOptions{}) })

	t.Run("reopen keeps every record and continues at the next offset", func(t *testing.T) {
		j := openFile(t, FileOptions{})
		mustAppend(t, j, batchOf(1, 10))
		j = reopen(t, j)
		if j.LastOffset() != 10 {
			t.Fatalf("LastOffset %d after reopen", j.LastOffset())
		}
		if last := mustAppend(t, j, batchOf(11, 5)); last != 15 {
			t.Fatalf("last %d", last)
		}
		j = reopen(t, j)
		checkPayloads(t, readAll(t, j, 1), 1, 15)
	})

	t.Run("a torn last record is truncated at every byte position", func(t *testing.T) {
		dir := t.TempDir()
		j := openFile(t, FileOptions{Dir: dir})
		mustAppend(t, j, batchOf(1, 5))
		j.Close()
		seg := segmentFiles(t, dir)[0]
		full, _ := os.ReadFile(seg)
		lastStart := len(full) - frameSize(len(payloadFor(5)))
		for cut := lastStart; cut < len(full); cut++ {
			if err := os.WriteFile(seg, full[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			j := openFile(t, FileOptions{Dir: dir})
			if j.LastOffset() != 4 {
				t.Fatalf("cut %d: LastOffset %d, want 4", cut, j.LastOffset())
			}
			if fi, _ := os.Stat(seg); fi.Size() != int64(lastStart) {
				t.Fatalf("cut %d: size %d after recovery, want %d", cut, fi.Size(), lastStart)
			}
			if last := mustAppend(t, j, batchOf(5, 2)); last != 6 {
				t.Fatalf("cut %d: appended at %d", cut, last)
			}
			checkPayloads(t, readAll(t, j, 1), 1, 6)
			j.Close()
		}
	})

	t.Run("garbage after the last record is a torn tail", func(t *testing.T) {
		dir := t.TempDir()
		j := openFile(t, FileOptions{Dir: dir})
		mustAppend(t, j, batchOf(1, 3))
		j.Close()
		seg := segmentFiles(t, dir)[0]
		f, _ := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
		f.Write(bytes.Repeat([]byte{0xa5}, 100))
		f.Close()
		j = openFile(t, FileOptions{Dir: dir})
		if j.LastOffset() != 3 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
	})

	t.Run("a bad CRC at the end of the last segment is a torn tail", func(t *testing.T) {
		dir := t.TempDir()
		j := openFile(t, FileOptions{Dir: dir})
		mustAppend(t, j, batchOf(1, 3))
		j.Close()
		seg := segmentFiles(t, dir)[0]
		b, _ := os.ReadFile(seg)
		b[len(b)-1] ^= 0xff
		os.WriteFile(seg, b, 0o644)
		j = openFile(t, FileOptions{Dir: dir})
		if j.LastOffset() != 2 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
	})

	t.Run("a bad CRC followed by valid records is corruption, not a torn tail", func(t *testing.T) {
		dir := t.TempDir()
		j := openFile(t, FileOptions{Dir: dir})
		mustAppend(t, j, batchOf(1, 5))
		j.Close()
		seg := segmentFiles(t, dir)[0]
		b, _ := os.ReadFile(seg)
		for _, pos := range []int{frameHeaderSize + 2, 0} { // a payload byte, then the length
			c := bytes.Clone(b)
			c[pos] ^= 0x40
			os.WriteFile(seg, c, 0o644)
			_, err := OpenFile(FileOptions{Dir: dir})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d: OpenFile err %v, want ErrCorrupt", pos, err)
			}
			if fi, _ := os.Stat(seg); fi.Size() != int64(len(b)) {
				t.Fatalf("byte %d: the segment was truncated", pos)
			}
		}
	})

	t.Run("rotates segments and reads across them", func(t *testing.T) {
		dir := t.TempDir()
		j := openFile(t, FileOptions{Dir: dir, SegmentSize: 300})
		next := uint64(1)
		for range 40 {
			next = mustAppend(t, j, batchOf(next, 3)) + 1
		}
		segs := segmentFiles(t, dir)
		if len(segs) < 10 {
			t.Fatalf("%d segments", len(segs))
		}
		if filepath.Base(segs[0]) != segmentName(1) {
			t.Fatalf("first segment %s", segs[0])
		}
		for _, from := range []uint64{1, 2, 50, 119, 120} {
			checkPayloads(t, readAll(t, j, from), from, 121-int(from))
		}
		j = reopen(t, j)
		mustAppend(t, j, batchOf(121, 1))
		checkPayloads(t, readAll(t, j, 1), 1, 121)
	})

	t.Run("a bad CRC in an earlier segment fails the read", func(t *testing.T) {
		dir := t.TempDir()
		j := openFile(t, FileOptions{Dir: dir, SegmentSize: 200})
		next := uint64(1)
		for range 10 {
			next = mustAppend(t, j, batchOf(next, 3)) + 1
		}
		j.Close()
		segs := segmentFiles(t, dir)
		b, _ := os.ReadFile(segs[1])
		b[len(b)-1] ^= 1 // the last record of a non-last segment
		os.WriteFile(segs[1], b, 0o644)
		j = openFile(t, FileOptions{Dir: dir, SegmentSize: 200})
		err := j.ReadFrom(context.Background(), 1, func(uint64, []byte) error { return nil })
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Where != filepath.Base(segs[1]) {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("a missing segment is a gap", func(t *testing.T) {
		dir := t.TempDir()
		j := openFile(t, FileOptions{Dir: dir, SegmentSize: 200})
		next := uint64(1)
		for range 10 {
			next = mustAppend(t, j, batchOf(next, 3)) + 1
		}
		j.Close()
		segs := segmentFiles(t, dir)
		os.Remove(segs[2])
		j = openFile(t, FileOptions{Dir: dir, SegmentSize: 200})
		if err := j.ReadFrom(context.Background(), 1, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err %v", err)
		}
		os.Remove(segs[0])
		j = reopen(t, j)
		if err := j.ReadFrom(context.Background(), 1, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrOffsetNotFound) {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("a write error is sticky", func(t *testing.T) {
		j := openFile(t, FileOptions{})
		mustAppend(t, j, batchOf(1, 2))
		j.seg.Close() // the next write fails
		_, err1 := j.Append(context.Background(), batchOf(3, 1))
		_, err2 := j.Append(context.Background(), batchOf(3, 1))
		if !errors.Is(err1, ErrFailed) || err1 != err2 || j.Err() != err1 {
			t.Fatalf("errors %v / %v / %v", err1, err2, j.Err())
		}
		if j.LastOffset() != 2 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
	})

	t.Run("a failed group fails every batch enqueued after it", func(t *testing.T) {
		j := openFile(t, FileOptions{})
		ctx := context.Background()
		gate := make(chan struct{})
		flush := j.c.flush
		calls := 0
		j.c.flush = func(g *group) error { // committer goroutine only
			if calls++; calls == 1 {
				<-gate
				return failed("write", errors.New("disk on fire"))
			}
			return flush(g)
		}
		first, err := j.Enqueue(ctx, batchOf(1, 2))
		if err != nil {
			t.Fatal(err)
		}
		var later []Ticket
		for i := 0; i < 3; i++ {
			tk, err := j.Enqueue(ctx, batchOf(uint64(3+i), 1))
			if err != nil {
				t.Fatal(err)
			}
			later = append(later, tk)
		}
		close(gate)
		if _, err := first.Wait(ctx); !errors.Is(err, ErrFailed) {
			t.Fatalf("first: %v", err)
		}
		for _, tk := range later {
			if _, err := tk.Wait(ctx); !errors.Is(err, ErrFailed) {
				t.Fatalf("later batch %d: %v", tk.Last(), err)
			}
		}
		if _, err := j.Enqueue(ctx, batchOf(9, 1)); !errors.Is(err, ErrFailed) {
			t.Fatalf("enqueue after failure: %v", err)
		}
		if j.LastOffset() != 0 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
	})

	t.Run("a second open of the same directory is refused", func(t *testing.T) {
		j := openFile(t, FileOptions{})
		if _, err := OpenFile(FileOptions{Dir: j.Dir()}); err == nil {
			t.Fatal("second OpenFile succeeded")
		}
	})

	t.Run("append before start and oversize records fail without writing", func(t *testing.T) {
		j, err := OpenFile(FileOptions{Dir: t.TempDir(), MaxRecordSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if _, err := j.Append(context.Background(), batchOf(1, 1)); !errors.Is(err, ErrNotStarted) {
			t.Fatalf("err %v", err)
		}
		j.Start()
		if _, err := j.Append(context.Background(), [][]byte{make([]byte, 11)}); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err %v", err)
		}
		if _, err := j.Append(context.Background(), [][]byte{make([]byte, 10)}); err != nil {
			t.Fatal(err)
		}
	})
}
