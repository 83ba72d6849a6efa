package journal

import "context"

// Refresh re-reads the last acknowledged offset of a journal opened ReadOnly, so that a
// reader in another process than the writer (a projector or market-data node, svc journal)
// can follow it: LastOffset, and so ReadFrom's limit, move up to what the writer has
// acknowledged by now. It returns LastOffset. A writable journal knows its own offset and
// returns it unchanged. Call it from one goroutine at a time.
//
// It reads the tail of the partition (as OpenKafka does), which costs a fetch of up to
// 4*MaxBatchRecords messages: poll it every tens of milliseconds, not in a tight loop.
func (j *Kafka) Refresh(ctx context.Context) (uint64, error) {
	if !j.opts.ReadOnly {
		return j.LastOffset(), nil
	}
	last, err := j.readLastOffset(ctx)
	if err != nil {
		return j.LastOffset(), err
	}
	for {
		cur := j.c.durable.Load()
		if last <= cur || j.c.durable.CompareAndSwap(cur, last) {
			return max(cur, last), nil
		}
	}
}
