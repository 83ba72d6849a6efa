package journal

import (
	"context"
	"errors"
	"fmt"
)

// Journal is what every implementation provides: a group-committed Append,
// a reader from an offset and the last durable offset.
type Journal interface {
	// Start starts the committer. Append fails with ErrNotStarted before.
	Start() error
	// Append makes payloads durable as consecutive records and returns the
	// offset of the last one. Safe for concurrent use. An empty batch
	// waits for every record enqueued before it and returns the offset of
	// the last of those.
	Append(ctx context.Context, payloads [][]byte) (last uint64, err error)
	// Enqueue is the first half of Append: it assigns the payloads their
	// offsets, copies them and returns at once; Ticket.Wait is the second
	// half. Calls are ordered: a batch enqueued after another Enqueue
	// returned gets later offsets and becomes durable no earlier (a failure
	// fails every batch enqueued after it). The payloads may be reused as
	// soon as Enqueue returns. Safe for concurrent use. An empty batch is a
	// sync point: its Ticket is durable once every record enqueued before
	// it is, and Last is the offset of the last of those.
	Enqueue(ctx context.Context, payloads [][]byte) (Ticket, error)
	// ReadFrom calls fn for each durable record with offset >= from, in
	// order. An error from fn stops the read and is returned as is.
	ReadFrom(ctx context.Context, from uint64, fn func(offset uint64, payload []byte) error) error
	// LastOffset is the offset of the last durable record, 0 if none.
	LastOffset() uint64
	// Err is the sticky failure, nil while the journal is healthy.
	Err() error
	// Close flushes what is queued, stops the committer and waits for it.
	Close() error
}

// Record is one journal entry.
type Record struct {
	Offset  uint64 // assigned by the journal: 1, 2, 3, ...
	Payload []byte // opaque to the journal
}

var (
	// ErrFailed is wrapped by the sticky error of a journal whose write path
	// failed. Nothing is appended after it; restart to recover.
	ErrFailed = errors.New("journal failed")
	// ErrClosed is returned by Append after Close.
	ErrClosed = errors.New("journal closed")
	// ErrNotStarted is returned by Append before Start.
	ErrNotStarted = errors.New("journal not started")
	// ErrTooLarge is returned by Append, before anything is written, when a
	// payload exceeds the implementation's limit. It is not sticky.
	ErrTooLarge = errors.New("journal record too large")
	// ErrCorrupt is wrapped by every error about damaged stored data (a bad
	// CRC or frame before the tail, a gap or duplicate in offsets).
	ErrCorrupt = errors.New("journal corrupt")
	// ErrOffsetNotFound is returned by ReadFrom when from is older than the
	// oldest stored record.
	ErrOffsetNotFound = errors.New("journal offset not found")
	// ErrFenced is wrapped by Start's error when the journal holds records of
	// a newer epoch than the writer's (another engine took over), and by the
	// sticky error when the writer's guard (its lease) fails.
	ErrFenced = errors.New("journal writer fenced")
)

func fencedError(ours, theirs uint64) error {
	return fmt.Errorf("%w: the journal holds records of epoch %d, newer than this writer's epoch %d: another engine took over this environment", ErrFenced, theirs, ours)
}

// CorruptError describes damaged stored data. errors.Is(err, ErrCorrupt) holds.
type CorruptError struct {
	Where  string // a segment file name, or "kafka topic/partition"
	Pos    int64  // byte position in the file, or Kafka offset; -1 if unknown
	Offset uint64 // journal offset expected there
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal corrupt: %s at %d (expected offset %d): %s", e.Where, e.Pos, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func failed(op string, cause error) error {
	return fmt.Errorf("%w: %s: %w", ErrFailed, op, cause)
}
