// Package eventlog connects the engine to the journal: it satisfies the engine's
// OrderedJournal interface by encoding each engine batch as one journal record
// (engine.AppendBatch), and replays the journal into an engine at start-up. A record is
// CRC-framed by the journal, so a torn write loses whole batches, never half of a
// command's events; offsets count batches.
package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"svc/engine"
	"svc/persistence/journal"
)

// Log is the engine's journal on top of a byte journal. It is an engine.OrderedJournal:
// the engine's runners enqueue their batches concurrently, in an order that keeps causes
// before effects, and wait for durability afterwards, so batches of all runners share
// group commits.
type Log struct {
	j         journal.Journal
	onDurable OnDurable
	bufs      sync.Pool // *encodeBuf
	pendings  sync.Pool // *pending
}

// OnDurable is called after every successful append with the batch and the offset of its
// last event: the projector's wake-up and the market-data feed. It runs inside
// Pending.Wait on the completion goroutine of the batch's symbol's runner, after the batch
// is durable and before its commands are answered (one symbol's batches in order,
// different symbols concurrently, while the runner already runs later batches), must not
// block, and must not keep batch.
type OnDurable func(batch []engine.Event, last uint64)

var _ engine.OrderedJournal = (*Log)(nil)

// New wraps j; j must be started by the caller. onDurable (nil: none) is told of every
// durable batch.
func New(j journal.Journal, onDurable OnDurable) *Log {
	l := &Log{j: j, onDurable: onDurable}
	l.bufs.New = func() any { return &encodeBuf{} }
	l.pendings.New = func() any { return &pending{l: l} }
	return l
}

type encodeBuf struct {
	data     []byte
	payloads [][]byte
	ends     []int
	cuts     []int // end of each record's events in the batch
}

func (l *Log) encode(batch []engine.Event) *encodeBuf {
	b := l.bufs.Get().(*encodeBuf)
	// One record per batch, so a torn write loses whole batches only, never part of a
	// command's events (engine.AppendBatch). A batch too large for one record (a cancel-all
	// of thousands of orders, a market order sweeping many levels) is split into numbered
	// part records (engine.AppendBatchPart) of at most maxRecordBytes: the journal's record
	// limit must never fail-stop the engine. A crash may keep the first parts of such a
	// batch and lose the rest; readers (Replay, engine.BatchReader) then drop the
	// incomplete batch, which was never acknowledged.
	b.data, b.payloads, b.ends = b.data[:0], b.payloads[:0], b.ends[:0]
	b.cuts = b.cuts[:0]
	for start := 0; start < len(batch); {
		end, size := start, 7
		for end < len(batch) && end-start < engine.MaxBatchRecordEvents {
			n := 2 + engine.EventSize(&batch[end])
			if end > start && size+n > maxRecordBytes {
				break
			}
			size += n
			end++
		}
		b.cuts = append(b.cuts, end)
		start = end
	}
	start := 0
	for i, end := range b.cuts {
		if len(b.cuts) == 1 {
			b.data = engine.AppendBatch(b.data, batch[start:end])
		} else {
			b.data = engine.AppendBatchPart(b.data, batch[start:end], i, len(b.cuts))
		}
		b.ends = append(b.ends, len(b.data))
		start = end
	}
	prev := 0
	for _, e := range b.ends {
		b.payloads = append(b.payloads, b.data[prev:e:e])
		prev = e
	}
	return b
}

// maxRecordBytes bounds one journal record, below the file journal's 1 MiB default and
// Kafka's default message.max.bytes.
const maxRecordBytes = 512 << 10

// Append encodes batch and makes it durable.
func (l *Log) Append(batch []engine.Event) (uint64, error) {
	p, err := l.Enqueue(batch)
	if err != nil {
		return 0, err
	}
	return p.Wait()
}

// Enqueue encodes batch and queues it in the journal, which fixes its offsets; the
// returned Pending's Wait makes sure it is durable and then calls the OnDurable given to
// New. batch must stay unchanged until Wait returns. An empty batch writes nothing: its
// Wait returns once everything enqueued before it is durable.
func (l *Log) Enqueue(batch []engine.Event) (engine.Pending, error) {
	b := l.encode(batch)
	t, err := l.j.Enqueue(context.Background(), b.payloads)
	l.bufs.Put(b) // the journal copied the payloads
	if err != nil {
		return nil, err
	}
	p := l.pendings.Get().(*pending)
	p.t, p.batch = t, batch
	return p, nil
}

// pending is a batch between Enqueue and the end of Wait.
type pending struct {
	l     *Log
	t     journal.Ticket
	batch []engine.Event
}

func (p *pending) Wait() (uint64, error) {
	l, batch := p.l, p.batch
	last, err := p.t.Wait(context.Background())
	p.t, p.batch = journal.Ticket{}, nil
	l.pendings.Put(p)
	if err != nil {
		return 0, err
	}
	if l.onDurable != nil && len(batch) > 0 { // an empty batch is a sync point (engine rejections)
		l.onDurable(batch, last)
	}
	return last, nil
}

// Journal is the underlying byte journal.
func (l *Log) Journal() journal.Journal { return l.j }

// Reader is the part of a journal Replay reads: a journal.Journal, or a read-only one
// another process writes (a hot standby's).
type Reader interface {
	ReadFrom(ctx context.Context, from uint64, fn func(offset uint64, payload []byte) error) error
}

// errApplyFailed stops Replay's read once applying a chunk failed.
var errApplyFailed = errors.New("eventlog: apply failed")

// Replay applies every record after `after` to eng, in chunks, and reports the last offset
// applied and how many events were applied. On an error the offset is the last one through
// which every event was applied (`after` if none was): resuming after it skips no event and
// re-applies none that a successful Apply took (what a failed Apply left is eng's: an
// engine's state is then undefined). progress, if set, is called after each chunk.
// A batch split into part records is applied whole or not at all: an incomplete one (a
// crash between its records) is dropped, and the offset reported stops before a trailing
// one.
//
// Reading and decoding the next chunk overlaps applying the last one (a goroutine applies
// the chunks in order, one at a time, and calls progress): decoding is a fifth of a
// replay's work.
func Replay(ctx context.Context, j Reader, after uint64, eng interface{ Apply([]engine.Event) error }, progress func(offset uint64, n int)) (uint64, int, error) {
	const chunk = 4096
	type work struct {
		events []engine.Event
		last   uint64
	}
	// Two buffers: the reader fills one while the applier holds the other.
	free := make(chan []engine.Event, 2)
	free <- make([]engine.Event, 0, chunk)
	free <- make([]engine.Event, 0, chunk)
	todo := make(chan work)
	var (
		n         int
		applied   = after // the offset through which every event was applied
		applyErr  error
		applyDone = make(chan struct{})
		failed    atomic.Bool // set with applyErr: the reader stops early
	)
	go func() {
		defer close(applyDone)
		for w := range todo {
			if applyErr == nil {
				if err := eng.Apply(w.events); err != nil {
					applyErr = fmt.Errorf("apply events up to offset %d: %w", w.last, err)
					failed.Store(true)
				} else {
					n += len(w.events)
					applied = w.last
					if progress != nil {
						progress(w.last, n)
					}
				}
			}
			free <- w.events[:0]
		}
	}()
	events := <-free
	last := after
	var r engine.BatchReader
	err := j.ReadFrom(ctx, after+1, func(off uint64, payload []byte) error {
		var err error
		if events, err = r.Append(events, off, payload); err != nil {
			return fmt.Errorf("journal offset %d: %w", off, err)
		}
		last = max(last, r.Complete())
		if len(events) >= chunk {
			if failed.Load() {
				return errApplyFailed
			}
			todo <- work{events, last}
			events = <-free
		}
		return nil
	})
	if err == nil && len(events) > 0 {
		todo <- work{events, last}
	}
	close(todo)
	<-applyDone
	// On an error the offset is applied, not last: chunks read ahead of a failed one, and
	// the events read since the last chunk, were never applied, and a caller resuming
	// after last would skip them.
	if applyErr != nil { // before err: it may be errApplyFailed
		return applied, n, applyErr
	}
	if err != nil {
		return applied, n, err
	}
	return last, n, nil // every chunk applied; last may pass a dropped torn batch
}
