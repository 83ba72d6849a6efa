package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DefaultDir is where the file journal lives unless FileOptions.Dir is set.
const DefaultDir = ".data/journal"

const segmentExt = ".journal"

// FileOptions configure OpenFile. Zero fields take the defaults.
type FileOptions struct {
	// Dir holds the segments. Default DefaultDir; created if missing.
	Dir string
	// SegmentSize: a new segment is started before a group that would be
	// written to a segment already this large. Default 64 MiB.
	SegmentSize int64
	// MaxRecordSize bounds one payload. Default 1 MiB.
	MaxRecordSize int
	// MaxGroupBytes bounds one coalesced write (frames included) unless a
	// single record is larger. Default 8 MiB.
	MaxGroupBytes int
	// MaxQueuedGroups: Append waits while this many groups wait to be
	// written. Default 4.
	MaxQueuedGroups int
	// Logger receives the repairs made on open (a torn tail truncated) and
	// the segments Prune removes. Default: nothing is logged.
	Logger *slog.Logger
	// Epoch is stamped on every record this journal writes (the engine
	// lease's epoch); 0 writes records without one. Start refuses an epoch
	// lower than the highest one already in the journal (ErrFenced).
	Epoch uint64
	// Guard, if set, is called before each group is written and again
	// before it is acknowledged; an error fails the journal (sticky,
	// wrapping ErrFenced). The engine passes its lease's validity check.
	Guard func() error
}

func (o *FileOptions) setDefaults() error {
	if o.Dir == "" {
		o.Dir = DefaultDir
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = 64 << 20
	}
	if o.MaxRecordSize == 0 {
		o.MaxRecordSize = 1 << 20
	}
	if o.MaxGroupBytes == 0 {
		o.MaxGroupBytes = 8 << 20
	}
	if o.MaxQueuedGroups == 0 {
		o.MaxQueuedGroups = 4
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case o.SegmentSize < 0:
		return fmt.Errorf("journal: SegmentSize %d < 0", o.SegmentSize)
	case o.MaxRecordSize < 0 || o.MaxRecordSize > 1<<30:
		return fmt.Errorf("journal: MaxRecordSize %d out of range", o.MaxRecordSize)
	case o.MaxGroupBytes < 0:
		return fmt.Errorf("journal: MaxGroupBytes %d < 0", o.MaxGroupBytes)
	case o.MaxQueuedGroups < 0:
		return fmt.Errorf("journal: MaxQueuedGroups %d < 0", o.MaxQueuedGroups)
	}
	return nil
}

// File is the segmented file journal.
//
// Layout: Dir holds segment files named after the offset of their first
// record, zero padded to 20 digits, with the extension ".journal"
// (00000000000000000001.journal), plus a LOCK file held with flock while the
// journal is open. A segment is a sequence of frames, little endian:
//
//	[length u32][crc32c u32][offset u64][payload: length bytes]
//
// where length is the payload length and the CRC32C covers offset and
// payload. Offsets run without gaps from the segment's name.
//
// Each coalesced group is one write followed by one fdatasync; a segment's
// creation is followed by an fsync of the directory. Recovery on open scans
// the last segment: a partial frame, or a bad frame after which nothing valid
// follows, is a torn tail and is truncated away. A bad frame followed by a
// valid later record, a bad frame in an earlier segment (found by ReadFrom),
// or a gap in offsets is corruption and yields an error wrapping ErrCorrupt.
type File struct {
	opts     FileOptions
	c        committer
	lock     *os.File
	maxEpoch uint64 // highest epoch found at open

	segMu    sync.RWMutex
	segments []uint64 // first offsets, ascending

	// Committer goroutine only.
	seg     *os.File
	segSize int64

	// Where the last ReadFrom stopped, so that a reader tailing the journal (the
	// projector) resumes there instead of re-reading its segment from the start.
	hintMu sync.Mutex
	hint   readHint
	bufs   sync.Pool // *[]byte, ReadFrom's read buffers (1 MiB, or the largest frame)
}

// readHint is a position inside a segment: the frame of offset next starts at pos
// of the segment starting at seg. A stale or wrong hint is detected (the frame's
// offset must be next) and the segment is then read from its start.
type readHint struct {
	seg, next uint64
	pos       int64
	epoch     uint64 // highest epoch read before pos
}

var _ Journal = (*File)(nil)

// OpenFile opens (creating if needed) the journal in opts.Dir and recovers its
// tail. Call Start before Append.
func OpenFile(opts FileOptions) (*File, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(opts.Dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := lockDir(lock); err != nil {
		lock.Close()
		return nil, fmt.Errorf("journal: %s is in use: %w", opts.Dir, err)
	}
	j := &File{opts: opts, lock: lock}
	last, err := j.recover()
	if err != nil {
		lock.Close()
		return nil, err
	}
	epoch := opts.Epoch
	j.c = committer{
		encode:    func(dst []byte, off uint64, p []byte) []byte { return appendEpochFrame(dst, off, epoch, p) },
		sizeOf:    func(p []byte) int { return epochFrameSize(len(p), epoch) },
		flush:     j.flush,
		guard:     opts.Guard,
		maxRecord: opts.MaxRecordSize,
		maxBytes:  max(opts.MaxGroupBytes, epochFrameSize(opts.MaxRecordSize, epoch)),
		maxRecs:   int(^uint32(0) >> 1),
		maxQueued: opts.MaxQueuedGroups,
	}
	j.c.init(last)
	return j, nil
}

// recover lists the segments, repairs the tail of the last one and opens it
// for appending. It returns the last offset.
func (j *File) recover() (uint64, error) {
	entries, err := os.ReadDir(j.opts.Dir)
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, segmentExt) {
			continue
		}
		first, err := strconv.ParseUint(strings.TrimSuffix(name, segmentExt), 10, 64)
		if err != nil || first == 0 || segmentName(first) != name {
			return 0, fmt.Errorf("journal: unexpected file %s in %s", name, j.opts.Dir)
		}
		j.segments = append(j.segments, first)
	}
	slices.Sort(j.segments)
	if len(j.segments) == 0 {
		return 0, nil
	}
	first := j.segments[len(j.segments)-1]
	path := j.segmentPath(first)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	end, next, maxEpoch, err := scanTailEpoch(data, first, j.opts.MaxRecordSize)
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Where = filepath.Base(path)
		}
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	if end < len(data) {
		// A write cut short by a crash: its records were never acknowledged. Say so,
		// since the bytes go away.
		j.opts.Logger.Warn("journal: truncating a torn tail", "segment", filepath.Base(path),
			"at_byte", end, "dropped_bytes", len(data)-end, "next_offset", next)
		if err := f.Truncate(int64(end)); err != nil {
			f.Close()
			return 0, fmt.Errorf("journal: truncating torn tail: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return 0, fmt.Errorf("journal: truncating torn tail: %w", err)
		}
	}
	if _, err := f.Seek(int64(end), io.SeekStart); err != nil {
		f.Close()
		return 0, fmt.Errorf("journal: %w", err)
	}
	j.seg, j.segSize = f, int64(end)
	j.maxEpoch = maxEpoch
	return next - 1, nil
}

// scanTail is scanTailEpoch without the epoch.
func scanTail(data []byte, first uint64, maxPayload int) (end int, next uint64, err error) {
	end, next, _, err = scanTailEpoch(data, first, maxPayload)
	return end, next, err
}

// scanTailEpoch validates the frames of the last segment, whose first record
// has offset first. It returns the end of the valid prefix, the next offset
// and the highest epoch seen. A record of a lower epoch than one before it
// (a fenced writer's) is skipped: it takes no offset. A bad or partial frame
// is a torn tail unless a valid later record follows it, which is corruption.
func scanTailEpoch(data []byte, first uint64, maxPayload int) (end int, next, maxEpoch uint64, err error) {
	next = first
	for end < len(data) {
		off, epoch, _, n, err := decodeEpochFrame(data[end:], maxPayload)
		if err == nil && epoch < maxEpoch {
			end += n // stale: dropped by every reader
			continue
		}
		if err == nil && off == next {
			end += n
			next++
			maxEpoch = epoch
			continue
		}
		reason := "bad frame"
		switch {
		case err != nil:
			reason = err.Error()
		default:
			reason = fmt.Sprintf("offset %d out of sequence", off)
		}
		if err == nil || laterRecord(data[end+1:], next, maxPayload) {
			return 0, 0, 0, &CorruptError{Pos: int64(end), Offset: next, Reason: reason}
		}
		return end, next, maxEpoch, nil
	}
	return end, next, maxEpoch, nil
}

// laterRecord reports whether b holds, at any position, a valid frame with an
// offset in [next, next+len(b)/frameHeaderSize]: evidence that data after a
// bad frame was once written in full.
func laterRecord(b []byte, next uint64, maxPayload int) bool {
	hi := next + uint64(len(b)/frameHeaderSize)
	for i := 0; i+frameHeaderSize <= len(b); i++ {
		off := binary.LittleEndian.Uint64(b[i+8 : i+16])
		if off < next || off > hi {
			continue
		}
		if _, _, _, _, err := decodeEpochFrame(b[i:], maxPayload); err == nil {
			return true
		}
	}
	return false
}

func segmentName(first uint64) string { return fmt.Sprintf("%020d%s", first, segmentExt) }

func (j *File) segmentPath(first uint64) string {
	return filepath.Join(j.opts.Dir, segmentName(first))
}

// Dir is the journal's directory.
func (j *File) Dir() string { return j.opts.Dir }

// Start starts the committer goroutine. It fails with ErrFenced when the
// journal already holds records of an epoch higher than FileOptions.Epoch.
func (j *File) Start() error {
	if j.opts.Epoch < j.maxEpoch {
		return fencedError(j.opts.Epoch, j.maxEpoch)
	}
	return j.c.start()
}

// Fail makes every later Append fail with a sticky error wrapping ErrFailed
// and cause (the engine's lease was lost); queued groups fail with it.
func (j *File) Fail(cause error) { j.c.failNow(cause) }

// Epoch is the epoch this journal stamps on its records.
func (j *File) Epoch() uint64 { return j.opts.Epoch }

// MaxEpoch is the highest epoch found in the journal's last segment at open (0 for records
// written without one). Start refuses a writer whose Epoch is below it.
func (j *File) MaxEpoch() uint64 { return j.maxEpoch }

// Append makes payloads durable; see Journal.
func (j *File) Append(ctx context.Context, payloads [][]byte) (uint64, error) {
	return j.c.append(ctx, payloads)
}

// Enqueue queues payloads for the next group commit; see Journal.
func (j *File) Enqueue(ctx context.Context, payloads [][]byte) (Ticket, error) {
	return j.c.enqueue(ctx, payloads)
}

// LastOffset is the last durable offset.
func (j *File) LastOffset() uint64 { return j.c.durable.Load() }

// Err is the sticky failure, or nil.
func (j *File) Err() error { return j.c.stickyErr() }

// Close flushes queued groups, stops the committer and closes the files.
func (j *File) Close() error {
	j.c.close()
	var err error
	if j.seg != nil {
		err = j.seg.Close()
		j.seg = nil
	}
	if j.lock != nil {
		if e := j.lock.Close(); err == nil {
			err = e
		}
		j.lock = nil
	}
	return err
}

// flush writes one group: rotate if needed, one write, one fdatasync.
func (j *File) flush(g *group) error {
	if j.seg == nil || j.segSize >= j.opts.SegmentSize {
		if err := j.rotate(g.first); err != nil {
			return err
		}
	}
	n, err := j.seg.Write(g.buf)
	j.segSize += int64(n)
	if err != nil {
		return failed("write", err)
	}
	if err := datasync(j.seg); err != nil {
		return failed("fdatasync", err)
	}
	return nil
}

// rotate closes the current segment (already synced) and creates the one
// starting at first, then syncs the directory.
func (j *File) rotate(first uint64) error {
	if j.seg != nil {
		if j.segSize == 0 {
			// An empty last segment (recovered from a torn tail): reuse it
			// only if it is named for this offset.
			j.segMu.RLock()
			name := j.segments[len(j.segments)-1]
			j.segMu.RUnlock()
			if name == first {
				return nil
			}
		}
		if err := j.seg.Close(); err != nil {
			return failed("close segment", err)
		}
		j.seg = nil
	}
	f, err := os.OpenFile(j.segmentPath(first), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return failed("create segment", err)
	}
	if err := syncDir(j.opts.Dir); err != nil {
		f.Close()
		return failed("sync directory", err)
	}
	j.seg, j.segSize = f, 0
	j.segMu.Lock()
	j.segments = append(j.segments, first)
	j.segMu.Unlock()
	return nil
}

// Prune removes the segments whose records all have offsets below before
// (the journal still holds every record from before on, and the segment being
// written is never removed) and returns how many it removed. Call it with the
// offset after the oldest state anyone may still need to replay from: the
// snapshot recovery would start from, and the projection's position. ReadFrom
// an offset in a removed segment then fails with ErrOffsetNotFound.
func (j *File) Prune(before uint64) (int, error) {
	j.segMu.Lock()
	n := 0
	for n+1 < len(j.segments) && j.segments[n+1] <= before {
		n++
	}
	gone := slices.Clone(j.segments[:n])
	j.segments = slices.Delete(j.segments, 0, n)
	j.segMu.Unlock()
	for _, first := range gone {
		if err := os.Remove(j.segmentPath(first)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("journal: prune: %w", err)
		}
	}
	if len(gone) > 0 {
		if err := syncDir(j.opts.Dir); err != nil {
			return len(gone), fmt.Errorf("journal: prune: %w", err)
		}
		j.opts.Logger.Info("journal: pruned segments", "segments", len(gone),
			"first_offset_kept", j.firstOffset())
	}
	return len(gone), nil
}

// firstOffset is the offset the oldest segment starts at.
func (j *File) firstOffset() uint64 {
	j.segMu.RLock()
	defer j.segMu.RUnlock()
	if len(j.segments) == 0 {
		return 0
	}
	return j.segments[0]
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if e := d.Close(); err == nil {
		err = e
	}
	return err
}

// ReadFrom calls fn for each durable record with offset >= from (0 means 1),
// up to the offset that was durable when it was called. Damaged data yields an
// error wrapping ErrCorrupt; from older than the first segment yields
// ErrOffsetNotFound. payload is valid only during fn (the read buffer is reused).
func (j *File) ReadFrom(ctx context.Context, from uint64, fn func(offset uint64, payload []byte) error) error {
	limit := j.LastOffset()
	if from == 0 {
		from = 1
	}
	if from > limit {
		return nil
	}
	j.segMu.RLock()
	segs := slices.Clone(j.segments)
	j.segMu.RUnlock()
	i, found := slices.BinarySearch(segs, from)
	if !found {
		if i == 0 {
			return fmt.Errorf("%w: %d (oldest segment starts at %d)", ErrOffsetNotFound, from, segs[0])
		}
		i--
	}
	bp, _ := j.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, 1<<20)
		bp = &b
	}
	r := segmentReader{buf: (*bp)[:0], maxPayload: j.opts.MaxRecordSize}
	defer func() { *bp = r.buf[:0]; j.bufs.Put(bp) }()
	j.hintMu.Lock()
	h := j.hint
	j.hintMu.Unlock()
	next := segs[i]
	for ; i < len(segs) && next <= limit; i++ {
		if segs[i] != next {
			return &CorruptError{Where: segmentName(segs[i]), Pos: 0, Offset: next, Reason: "segment does not continue the previous one"}
		}
		var (
			err        error
			start      int64
			first      = next
			firstEpoch = r.maxEpoch
		)
		if h.seg == segs[i] && h.next > next && h.next <= from {
			start, next, r.maxEpoch = h.pos, h.next, h.epoch
		}
		var pos int64
		next, pos, err = r.read(ctx, j.segmentPath(segs[i]), next, start, from, limit, fn)
		if err != nil && start > 0 && next == h.next && errors.Is(err, ErrCorrupt) {
			// The hint did not point at a frame boundary: read the segment from its start.
			r.maxEpoch = firstEpoch
			next, pos, err = r.read(ctx, j.segmentPath(segs[i]), first, 0, from, limit, fn)
		}
		j.hintMu.Lock()
		j.hint = readHint{seg: segs[i], next: next, pos: pos, epoch: r.maxEpoch}
		j.hintMu.Unlock()
		if err != nil {
			return err
		}
	}
	if next <= limit {
		return &CorruptError{Where: j.opts.Dir, Pos: -1, Offset: next, Reason: "durable records missing"}
	}
	return nil
}

type segmentReader struct {
	buf        []byte
	maxPayload int
	// maxEpoch is the highest epoch read so far: a later record of a lower
	// epoch was written by a fenced writer and is skipped.
	maxEpoch uint64
}

// read delivers the records of one segment with offsets in [from, limit]. The
// frame of offset next must start at file position start (0: the segment's first
// record); it returns the offset after its last record and where that record's
// frame ends (where next's frame starts when fn stopped the read).
func (r *segmentReader) read(ctx context.Context, path string, next uint64, start int64, from, limit uint64,
	fn func(uint64, []byte) error) (uint64, int64, error) {
	pos := start // file position of r.buf[0]
	next, err := r.readAt(ctx, path, next, &pos, from, limit, fn)
	return next, pos, err
}

func (r *segmentReader) readAt(ctx context.Context, path string, next uint64, posp *int64, from, limit uint64,
	fn func(uint64, []byte) error) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return next, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	name := filepath.Base(path)
	if *posp > 0 {
		if _, err := f.Seek(*posp, io.SeekStart); err != nil {
			return next, fmt.Errorf("journal: %w", err)
		}
	}
	pos := *posp
	defer func() { *posp = pos }()
	buf := r.buf[:0]
	eof := false
	for count := 0; ; {
		if len(buf) < frameHeaderSize || !frameComplete(buf, r.maxPayload) {
			if eof {
				if len(buf) == 0 {
					return next, nil
				}
				if next > limit {
					return next, nil // a group being written after limit
				}
				return next, &CorruptError{Where: name, Pos: pos, Offset: next, Reason: errShortFrame.Error()}
			}
			// Refill: keep the partial frame, grow if one frame needs it.
			need := frameNeed(buf, r.maxPayload)
			if cap(r.buf) < need {
				r.buf = make([]byte, 0, max(need, 2*cap(r.buf)))
			}
			m := copy(r.buf[:cap(r.buf)], buf)
			buf = r.buf[:m]
			n, err := io.ReadFull(f, r.buf[m:cap(r.buf)])
			buf = r.buf[:m+n]
			switch err {
			case nil:
			case io.EOF, io.ErrUnexpectedEOF:
				eof = true
			default:
				return next, fmt.Errorf("journal: %w", err)
			}
			continue
		}
		off, epoch, payload, n, err := decodeEpochFrame(buf, r.maxPayload)
		if err == nil && epoch < r.maxEpoch {
			// A fenced writer's record: it takes no offset.
			buf = buf[n:]
			pos += int64(n)
			continue
		}
		if err != nil || off != next {
			if next > limit {
				return next, nil
			}
			reason := fmt.Sprintf("offset %d out of sequence", off)
			if err != nil {
				reason = err.Error()
			}
			return next, &CorruptError{Where: name, Pos: pos, Offset: next, Reason: reason}
		}
		if off > limit {
			return next, nil
		}
		r.maxEpoch = epoch
		if off >= from {
			if err := fn(off, payload); err != nil {
				return next, err
			}
		}
		next++
		buf = buf[n:]
		pos += int64(n)
		if count++; count&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return next, err
			}
		}
	}
}

// frameComplete reports whether b starts with a whole frame, or with a header
// whose length is over the limit (decodeFrame then reports it).
func frameComplete(b []byte, maxPayload int) bool {
	n := frameNeed(b, maxPayload)
	return n == 0 || len(b) >= n
}
