// Package journal is the durable, append-only log of the exchange core.
//
// The journal is byte oriented and knows nothing about the engine: a record is
// an opaque payload plus the offset the journal assigns to it. Offsets start at
// 1, increase by one per record and have no gaps, in every implementation.
//
// # Writing
//
// Append takes a batch of payloads (one engine batch, 1 to a few dozen events)
// and returns the offset of its last record once the whole batch is durable.
// It is safe for many goroutines at once (one per symbol runner): batches that
// arrive while the previous write is in flight are coalesced into one group
// and made durable together (one write and one fdatasync for the file journal,
// one produce request with acks=all for Kafka). Records of one Append are
// contiguous and keep their order; concurrent Appends are ordered by the
// journal.
//
// Enqueue and Ticket.Wait are the two halves of Append, for a caller that
// must fix the order of its batches without waiting for a sync in between
// (the engine's runners): Enqueue assigns offsets, copies the payloads into
// the queued group and returns at once; a batch enqueued after another one
// returned gets later offsets and is durable no earlier, since groups are
// made durable in order and the first failure fails every later group. Wait
// returns when the batch's group is durable. An empty Enqueue is a sync
// point: its Ticket is durable once everything enqueued before it is.
//
// The write path runs in one committer goroutine per journal. It is started
// by Start and stopped by Close, which flushes what is queued and waits for
// the goroutine to exit; constructors start nothing.
//
// # Failure
//
// The first write, sync or produce error is sticky: that Append and every
// later one return the same error, which wraps ErrFailed and the cause. The
// engine must treat it as fatal (fail-stop) and recover from a restart. An
// Append whose context ends while it waits returns the context error: its
// records may or may not become durable, so the caller must not acknowledge
// them (the engine fail-stops here as well).
//
// # Reading
//
// ReadFrom calls fn for every durable record with offset >= from, in order,
// up to the last offset that was durable when the call started. It may run
// concurrently with Append. The payload passed to fn is only valid during the
// call.
//
// # Implementations
//
//   - File (OpenFile): segmented files under a directory (.data/journal by
//     default). See the File type for the on-disk format and recovery rules.
//   - Kafka (OpenKafka): one partition of a Kafka topic, written with
//     github.com/segmentio/kafka-go; each message carries its offset in the key
//     so duplicates from retried produce requests are skipped on replay.
//   - Memory (NewMemory): in process, for tests of other packages; it can be
//     told to fail.
package journal
