package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// KafkaOptions configure OpenKafka. Zero fields take the defaults.
type KafkaOptions struct {
	// Brokers are host:port bootstrap addresses. Required.
	Brokers []string
	// Topic holds the journal in its partition 0. Required. It is created
	// with one partition if it does not exist.
	Topic string
	// ReplicationFactor for a topic OpenKafka creates. Default 1.
	ReplicationFactor int
	// BatchTimeout is how long the kafka-go writer waits for a batch to fill
	// before sending it. The committer hands it whole groups, so this is
	// pure latency per group. Default 1ms (kafka-go's own default is 1s).
	BatchTimeout time.Duration
	// MaxBatchRecords bounds the records of one group, which is written as
	// one produce request. Default 1024. Each group is handed to kafka-go
	// as one batch of exactly its size, so it is sent at once.
	MaxBatchRecords int
	// MaxBatchBytes bounds the size of one group (kafka.Writer.BatchBytes),
	// counting 72 bytes of overhead per record. Default 1,000,000 (the
	// broker's message.max.bytes is 1,048,588 by default).
	MaxBatchBytes int
	// MaxAttempts is how often kafka-go tries a produce request before the
	// journal fails. Default 3.
	MaxAttempts int
	// Timeout bounds dials, produce requests and each fetch. Default 10s.
	Timeout time.Duration
	// MaxQueuedGroups: Append waits while this many groups wait to be
	// produced. Default 4.
	MaxQueuedGroups int
}

const kafkaRecordOverhead = 72 // >= kafka-go's per-message size beyond key and value

func (o *KafkaOptions) setDefaults() error {
	if len(o.Brokers) == 0 || o.Topic == "" {
		return errors.New("journal: Kafka needs Brokers and Topic")
	}
	if o.ReplicationFactor == 0 {
		o.ReplicationFactor = 1
	}
	if o.BatchTimeout == 0 {
		o.BatchTimeout = time.Millisecond
	}
	if o.MaxBatchRecords == 0 {
		o.MaxBatchRecords = 1024
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = 1_000_000
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 3
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxQueuedGroups == 0 {
		o.MaxQueuedGroups = 4
	}
	if o.ReplicationFactor < 0 || o.BatchTimeout < 0 || o.MaxBatchRecords < 0 || o.MaxBatchBytes <= kafkaRecordOverhead+8 ||
		o.MaxAttempts < 0 || o.Timeout < 0 || o.MaxQueuedGroups < 0 {
		return fmt.Errorf("journal: invalid KafkaOptions %+v", *o)
	}
	return nil
}

// Kafka is the journal in partition 0 of a Kafka topic, written with a
// kafka-go Writer (acks=all) and read with kafka.Conn.ReadBatch.
//
// Each message's key is the record's journal offset, 8 bytes big endian; the
// value is the payload. Offsets are assigned by the journal, so a produce
// request that kafka-go retried after the broker had in fact stored it shows
// up as a run of offsets already seen; ReadFrom skips those and reports any
// gap as corruption. Each coalesced group is exactly one produce request, so
// a failed group never leaves a hole before a later one. Open learns the last
// offset from the tail of the partition.
type Kafka struct {
	opts   KafkaOptions
	c      committer
	dialer *kafka.Dialer
	tr     *kafka.Transport
	w      *kafka.Writer

	// Committer goroutine only.
	msgs []kafka.Message
	keys []byte
}

var _ Journal = (*Kafka)(nil)

// OpenKafka connects, creates the topic if needed and reads the last offset.
// Call Start before Append.
func OpenKafka(ctx context.Context, opts KafkaOptions) (*Kafka, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	j := &Kafka{opts: opts, dialer: &kafka.Dialer{Timeout: opts.Timeout}}
	if err := j.ensureTopic(ctx); err != nil {
		return nil, err
	}
	last, err := j.readLastOffset(ctx)
	if err != nil {
		return nil, err
	}
	j.tr = &kafka.Transport{DialTimeout: opts.Timeout}
	j.w = &kafka.Writer{
		Addr:         kafka.TCP(opts.Brokers...),
		Topic:        opts.Topic,
		Balancer:     partitionZero{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: opts.BatchTimeout,
		BatchSize:    opts.MaxBatchRecords,
		BatchBytes:   int64(opts.MaxBatchBytes),
		MaxAttempts:  opts.MaxAttempts,
		WriteTimeout: opts.Timeout,
		ReadTimeout:  opts.Timeout,
		Transport:    j.tr,
	}
	j.c = committer{
		encode:    func(dst []byte, _ uint64, p []byte) []byte { return append(dst, p...) },
		sizeOf:    func(p []byte) int { return len(p) + 8 + kafkaRecordOverhead },
		flush:     j.flush,
		maxRecord: opts.MaxBatchBytes - 8 - kafkaRecordOverhead,
		maxBytes:  opts.MaxBatchBytes,
		maxRecs:   opts.MaxBatchRecords,
		maxQueued: opts.MaxQueuedGroups,
	}
	j.c.init(last)
	return j, nil
}

// partitionZero keeps the whole journal in one partition, in one order.
type partitionZero struct{}

func (partitionZero) Balance(kafka.Message, ...int) int { return 0 }

func (j *Kafka) dialAny(ctx context.Context) (*kafka.Conn, error) {
	var errs []error
	for _, b := range j.opts.Brokers {
		conn, err := j.dialer.DialContext(ctx, "tcp", b)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("journal: no Kafka broker reachable: %w", errors.Join(errs...))
}

func (j *Kafka) ensureTopic(ctx context.Context) error {
	conn, err := j.dialAny(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for attempt := 0; ; attempt++ {
		parts, err := conn.ReadPartitions(j.opts.Topic)
		if err == nil {
			for _, p := range parts {
				if p.ID == 0 && p.Leader.Host != "" {
					return nil
				}
			}
			err = errors.New("partition 0 has no leader")
		}
		if attempt == 0 && errors.Is(err, kafka.UnknownTopicOrPartition) {
			if err := j.createTopic(ctx, conn); err != nil {
				return err
			}
			continue
		}
		if attempt >= 50 {
			return fmt.Errorf("journal: topic %s: %w", j.opts.Topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (j *Kafka) createTopic(ctx context.Context, conn *kafka.Conn) error {
	ctl, err := conn.Controller()
	if err != nil {
		return fmt.Errorf("journal: finding the Kafka controller: %w", err)
	}
	cc, err := j.dialer.DialContext(ctx, "tcp", net.JoinHostPort(ctl.Host, strconv.Itoa(ctl.Port)))
	if err != nil {
		return fmt.Errorf("journal: dialing the Kafka controller: %w", err)
	}
	defer cc.Close()
	err = cc.CreateTopics(kafka.TopicConfig{
		Topic:             j.opts.Topic,
		NumPartitions:     1,
		ReplicationFactor: j.opts.ReplicationFactor,
	})
	if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("journal: creating topic %s: %w", j.opts.Topic, err)
	}
	return nil
}

func (j *Kafka) dialLeader(ctx context.Context) (*kafka.Conn, error) {
	var errs []error
	for _, b := range j.opts.Brokers {
		conn, err := j.dialer.DialLeader(ctx, "tcp", b, j.opts.Topic, 0)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("journal: no leader for %s/0: %w", j.opts.Topic, errors.Join(errs...))
}

func (j *Kafka) where() string { return "kafka " + j.opts.Topic + "/0" }

// readLastOffset returns the largest journal offset in the tail of the
// partition. A retried produce request can repeat at most one group, so the
// last 2*MaxBatchRecords messages hold the largest offset.
func (j *Kafka) readLastOffset(ctx context.Context) (uint64, error) {
	conn, err := j.dialLeader(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	first, end, err := conn.ReadOffsets()
	if err != nil {
		return 0, fmt.Errorf("journal: reading %s offsets: %w", j.where(), err)
	}
	if end <= first {
		return 0, nil
	}
	start := max(first, end-2*int64(j.opts.MaxBatchRecords))
	var last uint64
	err = j.scan(ctx, conn, start, end, func(kafkaOff int64, seq uint64, _ []byte) (bool, error) {
		last = max(last, seq)
		return true, nil
	})
	return last, err
}

// scan reads messages [start, end) of partition 0 and calls fn with each
// one's Kafka offset, journal offset and value until fn returns false.
func (j *Kafka) scan(ctx context.Context, conn *kafka.Conn, start, end int64,
	fn func(kafkaOff int64, seq uint64, value []byte) (bool, error)) error {
	if _, err := conn.Seek(start, kafka.SeekAbsolute); err != nil {
		return fmt.Errorf("journal: seeking %s to %d: %w", j.where(), start, err)
	}
	next := start
	for next < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		conn.SetReadDeadline(time.Now().Add(j.opts.Timeout))
		batch := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 16 << 20, MaxWait: j.opts.Timeout})
		for next < end {
			msg, err := batch.ReadMessage()
			if err != nil {
				break
			}
			if msg.Offset < next {
				continue
			}
			next = msg.Offset + 1
			if len(msg.Key) != 8 {
				batch.Close()
				return &CorruptError{Where: j.where(), Pos: msg.Offset, Reason: fmt.Sprintf("key of %d bytes, want 8", len(msg.Key))}
			}
			more, err := fn(msg.Offset, binary.BigEndian.Uint64(msg.Key), msg.Value)
			if err != nil || !more {
				batch.Close()
				return err
			}
		}
		if err := batch.Close(); err != nil && next < end {
			return fmt.Errorf("journal: reading %s at %d: %w", j.where(), next, err)
		}
	}
	return nil
}

// Start starts the committer goroutine.
func (j *Kafka) Start() error { return j.c.start() }

// Append produces payloads with acks=all; see Journal.
func (j *Kafka) Append(ctx context.Context, payloads [][]byte) (uint64, error) {
	return j.c.append(ctx, payloads)
}

// Enqueue queues payloads for the next produce request; see Journal.
func (j *Kafka) Enqueue(ctx context.Context, payloads [][]byte) (Ticket, error) {
	return j.c.enqueue(ctx, payloads)
}

// LastOffset is the last acknowledged journal offset.
func (j *Kafka) LastOffset() uint64 { return j.c.durable.Load() }

// Err is the sticky failure, or nil.
func (j *Kafka) Err() error { return j.c.stickyErr() }

// Close flushes queued groups, stops the committer and closes the writer.
func (j *Kafka) Close() error {
	j.c.close()
	err := j.w.Close()
	j.tr.CloseIdleConnections()
	return err
}

// flush produces one group as one request and waits for acks=all.
func (j *Kafka) flush(g *group) error {
	n := g.records()
	j.msgs = j.msgs[:0]
	j.keys = j.keys[:0]
	for i := range n {
		j.keys = binary.BigEndian.AppendUint64(j.keys, g.first+uint64(i))
	}
	start := int32(0)
	for i, end := range g.ends {
		j.msgs = append(j.msgs, kafka.Message{Key: j.keys[8*i : 8*i+8 : 8*i+8], Value: g.buf[start:end:end]})
		start = end
	}
	// The group is complete: size the writer's batch to it so kafka-go sends
	// it at once ("batch full") instead of waiting BatchTimeout. kafka-go
	// reads BatchSize only inside WriteMessages (and Stats, which we never
	// call), and only this goroutine calls WriteMessages.
	j.w.BatchSize = n
	if err := j.w.WriteMessages(context.Background(), j.msgs...); err != nil {
		return failed("kafka produce", err)
	}
	clear(j.msgs) // drop references to the group's buffer
	return nil
}

// ReadFrom calls fn for each acknowledged record with offset >= from (0 means
// 1), skipping duplicates; a gap yields an error wrapping ErrCorrupt.
func (j *Kafka) ReadFrom(ctx context.Context, from uint64, fn func(offset uint64, payload []byte) error) error {
	limit := j.LastOffset()
	if from == 0 {
		from = 1
	}
	if from > limit {
		return nil
	}
	conn, err := j.dialLeader(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	first, end, err := conn.ReadOffsets()
	if err != nil {
		return fmt.Errorf("journal: reading %s offsets: %w", j.where(), err)
	}
	if end <= first {
		return &CorruptError{Where: j.where(), Pos: first, Offset: from, Reason: "partition is empty"}
	}
	// Find a Kafka offset at or before the record: without deleted messages
	// journal offset s sits at Kafka offset >= s-1 (duplicates only push it
	// later), so one probe usually does.
	k := min(max(first, int64(from)-1), end-1)
	for {
		seq, err := j.seqAt(ctx, conn, k, end)
		if err != nil {
			return err
		}
		if seq <= from {
			break
		}
		if k == first {
			return fmt.Errorf("%w: %d (oldest Kafka message holds %d)", ErrOffsetNotFound, from, seq)
		}
		k = max(first, k-int64(seq-from))
	}
	var seen uint64
	done := false
	err = j.scan(ctx, conn, k, end, func(kafkaOff int64, seq uint64, value []byte) (bool, error) {
		switch {
		case seq <= seen:
			return true, nil // a duplicate from a retried produce
		case seen != 0 && seq != seen+1:
			return false, &CorruptError{Where: j.where(), Pos: kafkaOff, Offset: seen + 1, Reason: fmt.Sprintf("offset %d follows %d", seq, seen)}
		}
		seen = seq
		if seq >= from {
			if err := fn(seq, value); err != nil {
				return false, err
			}
		}
		if seq >= limit {
			done = true
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if !done {
		return &CorruptError{Where: j.where(), Pos: end, Offset: seen + 1, Reason: "acknowledged records missing"}
	}
	return nil
}

// seqAt is the journal offset of the message at Kafka offset k.
func (j *Kafka) seqAt(ctx context.Context, conn *kafka.Conn, k, end int64) (uint64, error) {
	var seq uint64
	found := false
	err := j.scan(ctx, conn, k, end, func(_ int64, s uint64, _ []byte) (bool, error) {
		seq, found = s, true
		return false, nil
	})
	if err == nil && !found {
		err = fmt.Errorf("journal: no message at %s offset %d", j.where(), k)
	}
	return seq, err
}
