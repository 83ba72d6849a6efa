package journal

import "context"

// Refresh re-reads the last acknowledged offset of a journal opened ReadOnly, so that a
// reader in another process than the writer (a projector or market-data node, a hot
// standby, svc journal) can follow it: LastOffset, and so ReadFrom's limit, move up to what
// the writer has acknowledged by now. It returns LastOffset. A writable journal knows its own
// offset and returns it unchanged. Call it from one goroutine at a time.
//
// It is incremental: it keeps a connection to the partition's leader and reads only the
// messages appended since the last call (OpenKafka scanned the tail), carrying the fencing
// rule across calls, so a deposed writer's record that lands after a newer fence is dropped
// however many polls later it arrives. With nothing new a call costs one offsets request.
// If the kept connection fails, the call dials again once; a call that still fails drops
// the connection, and the next one dials again and continues where the last one stopped.
func (j *Kafka) Refresh(ctx context.Context) (uint64, error) {
	if !j.opts.ReadOnly {
		return j.LastOffset(), nil
	}
	reused := j.tail.conn != nil
	last, err := j.refreshTail(ctx)
	if err != nil && reused && ctx.Err() == nil {
		// The kept connection may have gone stale (the broker closed it, or the partition's
		// leader moved): try once more on a new one before reporting a failure.
		j.dropTailConn()
		last, err = j.refreshTail(ctx)
	}
	if err != nil {
		j.dropTailConn()
		return j.LastOffset(), err
	}
	for {
		cur := j.c.durable.Load()
		if last <= cur || j.c.durable.CompareAndSwap(cur, last) {
			return max(cur, last), nil
		}
	}
}

// refreshTail continues the tail scan up to the partition's current end.
func (j *Kafka) refreshTail(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if j.tail.conn == nil {
		conn, err := j.dialLeader(ctx)
		if err != nil {
			return 0, err
		}
		j.tail.conn = conn
	}
	conn := j.tail.conn
	first, end, err := j.readOffsets(ctx, conn)
	if err != nil {
		return 0, err
	}
	switch {
	case end < j.tail.next:
		// The partition is shorter than what was scanned: the topic was deleted and made
		// again, or an unclean leader election cut it. Nothing here continues what was read,
		// so scan its tail afresh, as OpenKafka does (LastOffset never goes down).
		j.tail = tailScan{next: max(first, end-4*int64(j.opts.MaxBatchRecords)), conn: conn}
	case first > j.tail.next:
		// Retention deleted messages before they were scanned: continue at the oldest left.
		j.tail.next = first
	}
	if err := j.scanTail(ctx, conn, end); err != nil {
		return 0, err
	}
	j.epochSeen.Store(j.tail.f.max)
	return j.tail.last, nil
}

func (j *Kafka) dropTailConn() {
	if j.tail.conn != nil {
		j.tail.conn.Close()
		j.tail.conn = nil
	}
}
