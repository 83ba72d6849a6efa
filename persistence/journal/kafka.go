package journal

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
)

// KafkaOptions configure OpenKafka. Zero fields take the defaults.
type KafkaOptions struct {
	// Brokers are host:port bootstrap addresses. Required.
	Brokers []string
	// Topic holds the journal in its partition 0. Required. It is created
	// if it does not exist (see Partitions, ReplicationFactor,
	// MinInsyncReplicas) with infinite retention.
	Topic string
	// Dev is for a one-broker development cluster: the defaults of
	// ReplicationFactor and MinInsyncReplicas become 1. Never in production:
	// acks=all then means one copy.
	Dev bool
	// ReplicationFactor for a topic OpenKafka creates, and the least an
	// existing topic's partition 0 must have. Default 3 (1 with Dev).
	ReplicationFactor int
	// MinInsyncReplicas is the min.insync.replicas of a created topic, and
	// the least an existing topic must have: with acks=all a write is
	// acknowledged only once this many replicas have it. Default 2 (1 with
	// Dev); at most ReplicationFactor.
	MinInsyncReplicas int
	// Partitions of a topic OpenKafka creates. Default 1. The journal is
	// partition 0 only (one total order); others stay empty.
	Partitions int
	// AllowFiniteRetention accepts an existing topic whose retention.ms or
	// retention.bytes is not -1. Without it OpenKafka refuses such a topic:
	// recovery and the projection read the journal from the newest
	// snapshot (or from the start), and a broker that deleted those records
	// leaves nothing to recover from. Set it only when snapshots are taken
	// well within the retention; ReadFrom then fails with ErrOffsetNotFound
	// if a needed record is gone, never silently.
	AllowFiniteRetention bool
	// TLS, if set, is used for every connection (server CA, optional client
	// certificate).
	TLS *tls.Config
	// SASL, if set, authenticates every connection (SCRAM-SHA-256/512).
	SASL sasl.Mechanism
	// Epoch is stamped on every record (a header "epoch", 8 bytes big
	// endian); 0 writes none. With an epoch OpenKafka first writes a fence
	// marker of that epoch, so every record of a lower epoch after it is
	// dropped by readers. OpenKafka fails with ErrFenced when the topic
	// already holds a higher epoch.
	Epoch uint64
	// ReadOnly opens the topic for reading only (tools, standbys): it is
	// neither created nor checked, no fence is written, Start fails.
	ReadOnly bool
	// Guard, if set, is called before each produce request and again before
	// it is acknowledged; an error fails the journal (ErrFenced). The
	// engine passes its lease's validity check.
	Guard func() error
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
		o.ReplicationFactor = 3
		if o.Dev {
			o.ReplicationFactor = 1
		}
	}
	if o.MinInsyncReplicas == 0 {
		o.MinInsyncReplicas = min(2, o.ReplicationFactor)
		if o.Dev {
			o.MinInsyncReplicas = 1
		}
	}
	if o.Partitions == 0 {
		o.Partitions = 1
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
	if o.MinInsyncReplicas > o.ReplicationFactor || o.MinInsyncReplicas < 0 || o.Partitions < 0 {
		return fmt.Errorf("journal: MinInsyncReplicas %d must be between 1 and ReplicationFactor %d, Partitions %d at least 1",
			o.MinInsyncReplicas, o.ReplicationFactor, o.Partitions)
	}
	if o.ReplicationFactor < 0 || o.BatchTimeout < 0 || o.MaxBatchRecords < 0 || o.MaxBatchBytes <= kafkaRecordOverhead+8 ||
		o.MaxAttempts < 0 || o.Timeout < 0 || o.MaxQueuedGroups < 0 {
		return fmt.Errorf("journal: invalid KafkaOptions %+v", *o)
	}
	return nil
}

// Kafka is the journal in partition 0 of a Kafka topic, written with a
// kafka-go Writer (acks=all, bounded retries) and read with
// kafka.Conn.ReadBatch.
//
// Each message's key is the record's journal offset, 8 bytes big endian; the
// value is the payload; a writer with an epoch adds the header "epoch" (8
// bytes big endian; a message without it is epoch 0). Offsets are assigned
// by the journal, so a produce request that kafka-go retried after the
// broker had in fact stored it shows up as a run of offsets already seen;
// ReadFrom skips those and reports any gap as corruption. This is what we do
// instead of Kafka's idempotent producer, which kafka-go does not have. Each
// coalesced group is exactly one produce request, so a failed group never
// leaves a hole before a later one.
//
// Fencing: a writer with an epoch first appends a fence marker (key: journal
// offset 0, header epoch) and then reads the tail up to it to learn the last
// offset. Readers keep the highest epoch seen and drop any later message of a
// lower epoch: what a deposed writer still had in flight when the new one
// fenced the topic.
type Kafka struct {
	opts   KafkaOptions
	c      committer
	dialer *kafka.Dialer
	tr     *kafka.Transport
	w      *kafka.Writer

	maxEpoch uint64 // highest epoch in the tail at open (ours after our fence)
	// epochSeen is the highest epoch any scan of the tail has seen (open, then each
	// Refresh): every epoch in the topic up to LastOffset. ReadFrom reads it from any
	// goroutine.
	epochSeen   atomic.Uint64
	fenceOffset int64 // Kafka offset of our fence marker, -1 without one
	retention   Retention

	// tail is how far the partition has been scanned for the last offset: at open, then by
	// each Refresh of a read-only journal (one goroutine at a time), which reads only what
	// was appended since.
	tail tailScan

	// Committer goroutine only.
	msgs    []kafka.Message
	keys    []byte
	headers []kafka.Header // the epoch header, shared by every message
}

// Retention is what an existing topic keeps (-1: no limit).
type Retention struct {
	Ms, Bytes int64
}

// Finite reports whether the broker deletes old records.
func (r Retention) Finite() bool { return r.Ms >= 0 || r.Bytes >= 0 }

var _ Journal = (*Kafka)(nil)

// OpenKafka connects, creates the topic if needed (or checks an existing
// one's replication, min.insync.replicas, cleanup and retention), writes the
// fence marker of opts.Epoch and reads the last offset. Call Start before
// Append.
func OpenKafka(ctx context.Context, opts KafkaOptions) (*Kafka, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	j := &Kafka{opts: opts, fenceOffset: -1,
		dialer: &kafka.Dialer{Timeout: opts.Timeout, TLS: opts.TLS, SASLMechanism: opts.SASL}}
	j.tr = &kafka.Transport{DialTimeout: opts.Timeout, TLS: opts.TLS, SASL: opts.SASL}
	if err := j.ensureTopic(ctx); err != nil {
		j.tr.CloseIdleConnections()
		return nil, err
	}
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
	if opts.Epoch != 0 && !opts.ReadOnly {
		j.headers = []kafka.Header{{Key: epochHeader, Value: binary.BigEndian.AppendUint64(nil, opts.Epoch)}}
		if err := j.writeFence(ctx); err != nil {
			j.Close()
			return nil, err
		}
	}
	last, err := j.readLastOffset(ctx)
	if err != nil {
		j.Close()
		return nil, err
	}
	if opts.Epoch != 0 && j.maxEpoch > opts.Epoch {
		j.Close()
		return nil, fencedError(opts.Epoch, j.maxEpoch)
	}
	j.c = committer{
		encode:    func(dst []byte, _ uint64, p []byte) []byte { return append(dst, p...) },
		sizeOf:    func(p []byte) int { return len(p) + 8 + kafkaRecordOverhead },
		flush:     j.flush,
		guard:     opts.Guard,
		maxRecord: opts.MaxBatchBytes - 8 - kafkaRecordOverhead,
		maxBytes:  opts.MaxBatchBytes,
		maxRecs:   opts.MaxBatchRecords,
		maxQueued: opts.MaxQueuedGroups,
	}
	j.c.init(last)
	return j, nil
}

const epochHeader = "epoch"

// partitionZero keeps the whole journal in one partition, in one order.
type partitionZero struct{}

func (partitionZero) Balance(kafka.Message, ...int) int { return 0 }

func (j *Kafka) client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(j.opts.Brokers...), Timeout: j.opts.Timeout, Transport: j.tr}
}

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
	created := false
	for attempt := 0; ; attempt++ {
		parts, err := conn.ReadPartitions(j.opts.Topic)
		if err == nil {
			for _, p := range parts {
				if p.ID == 0 && p.Leader.Host != "" {
					if created || j.opts.ReadOnly {
						return nil
					}
					return j.checkTopic(ctx, p)
				}
			}
			err = errors.New("partition 0 has no leader")
		}
		if attempt == 0 && errors.Is(err, kafka.UnknownTopicOrPartition) && !j.opts.ReadOnly {
			if created, err = j.createTopic(ctx); err != nil {
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

// topicConfig is what OpenKafka sets on a topic it creates.
func (j *Kafka) topicConfig() []kafka.ConfigEntry {
	return []kafka.ConfigEntry{
		{ConfigName: "min.insync.replicas", ConfigValue: strconv.Itoa(j.opts.MinInsyncReplicas)},
		{ConfigName: "retention.ms", ConfigValue: "-1"},
		{ConfigName: "retention.bytes", ConfigValue: "-1"},
		{ConfigName: "cleanup.policy", ConfigValue: "delete"},
	}
}

// createTopic creates the topic and reports whether this call created it (an
// existing one, created meanwhile by someone else, is checked instead).
func (j *Kafka) createTopic(ctx context.Context) (bool, error) {
	resp, err := j.client().CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic:             j.opts.Topic,
		NumPartitions:     j.opts.Partitions,
		ReplicationFactor: j.opts.ReplicationFactor,
		ConfigEntries:     j.topicConfig(),
	}}})
	if err == nil {
		err = resp.Errors[j.opts.Topic]
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, kafka.TopicAlreadyExists):
		return false, nil
	case errors.Is(err, kafka.InvalidReplicationFactor):
		return false, fmt.Errorf("journal: creating topic %s with replication factor %d: %w (a one-broker development cluster needs the development setting, --kafka-dev)",
			j.opts.Topic, j.opts.ReplicationFactor, err)
	default:
		return false, fmt.Errorf("journal: creating topic %s: %w", j.opts.Topic, err)
	}
}

// checkTopic refuses an existing topic that cannot keep the journal as
// promised: fewer replicas or a lower min.insync.replicas than configured, a
// compacted topic (compaction would keep one fence marker and drop records
// by key) and, unless allowed, finite retention.
func (j *Kafka) checkTopic(ctx context.Context, p kafka.Partition) error {
	cfg, err := j.TopicConfig(ctx)
	if err != nil {
		return err
	}
	var problems []string
	if len(p.Replicas) < j.opts.ReplicationFactor {
		problems = append(problems, fmt.Sprintf("partition 0 has %d replicas, want at least %d", len(p.Replicas), j.opts.ReplicationFactor))
	}
	if isr, err := strconv.Atoi(cfg["min.insync.replicas"]); err != nil || isr < j.opts.MinInsyncReplicas {
		problems = append(problems, fmt.Sprintf("min.insync.replicas is %q, want at least %d", cfg["min.insync.replicas"], j.opts.MinInsyncReplicas))
	}
	if strings.Contains(cfg["cleanup.policy"], "compact") {
		problems = append(problems, fmt.Sprintf("cleanup.policy is %q, want delete (with infinite retention)", cfg["cleanup.policy"]))
	}
	j.retention = Retention{Ms: parseRetention(cfg["retention.ms"]), Bytes: parseRetention(cfg["retention.bytes"])}
	if j.retention.Finite() && !j.opts.AllowFiniteRetention {
		problems = append(problems, fmt.Sprintf("retention.ms=%s retention.bytes=%s: the journal must keep every record (set both to -1), or allow finite retention only when snapshots are taken well within it",
			cfg["retention.ms"], cfg["retention.bytes"]))
	}
	if len(problems) > 0 {
		return fmt.Errorf("journal: topic %s cannot hold the journal: %s", j.opts.Topic, strings.Join(problems, "; "))
	}
	return nil
}

// parseRetention reads a retention setting; anything unreadable counts as
// finite (0).
func parseRetention(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < -1 {
		return 0
	}
	return n
}

// TopicConfig returns the topic's min.insync.replicas, retention.ms,
// retention.bytes and cleanup.policy as the broker reports them.
func (j *Kafka) TopicConfig(ctx context.Context) (map[string]string, error) {
	names := []string{"min.insync.replicas", "retention.ms", "retention.bytes", "cleanup.policy"}
	resp, err := j.client().DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: j.opts.Topic, ConfigNames: names}}})
	if err == nil && len(resp.Resources) != 1 {
		err = errors.New("no answer for the topic")
	}
	if err == nil {
		err = resp.Resources[0].Error
	}
	if err != nil {
		return nil, fmt.Errorf("journal: describing topic %s: %w", j.opts.Topic, err)
	}
	cfg := map[string]string{}
	for _, e := range resp.Resources[0].ConfigEntries {
		cfg[e.ConfigName] = e.ConfigValue
	}
	for _, n := range names {
		if _, ok := cfg[n]; !ok {
			return nil, fmt.Errorf("journal: describing topic %s: the broker did not report %s", j.opts.Topic, n)
		}
	}
	return cfg, nil
}

// Retention is the existing topic's retention found at open ({-1, -1} when
// OpenKafka created the topic or retention is infinite).
func (j *Kafka) Retention() Retention {
	if j.retention == (Retention{}) {
		return Retention{Ms: -1, Bytes: -1}
	}
	return j.retention
}

// writeFence appends the fence marker of our epoch with acks=all.
func (j *Kafka) writeFence(ctx context.Context) error {
	j.w.BatchSize = 1
	err := j.w.WriteMessages(ctx, kafka.Message{
		Key:     make([]byte, 8), // journal offset 0: not a record
		Value:   []byte("svc journal fence: epoch " + strconv.FormatUint(j.opts.Epoch, 10)),
		Headers: j.headers,
	})
	if err != nil {
		return fmt.Errorf("journal: writing the fence marker of epoch %d to %s: %w", j.opts.Epoch, j.where(), err)
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

// epochFilter applies the fencing rule to a stream of messages in Kafka
// order: a marker raises the epoch; a record of a lower epoch than the
// highest seen is stale.
type epochFilter struct{ max uint64 }

// keep reports whether the record (seq > 0) or marker (seq 0) of epoch is
// to be read; markers are never read.
func (f *epochFilter) keep(seq, epoch uint64) bool {
	if epoch < f.max {
		return false
	}
	f.max = epoch
	return seq != 0
}

// tailScan is the state of a scan of the partition for its largest journal offset: the
// Kafka offset to continue at, the fencing rule's state there and the largest journal
// offset kept so far. Continuing a scan gives what one scan of the whole range would.
type tailScan struct {
	next int64
	f    epochFilter
	last uint64
	conn *kafka.Conn // Refresh's connection to the leader, kept between polls; nil when closed
}

// readLastOffset returns the largest journal offset in the tail of the
// partition and notes the highest epoch there. A retried produce request
// can repeat at most one group, and a deposed writer has at most one in
// flight, so the last 4*MaxBatchRecords messages (and our fence marker)
// hold the largest offset. It leaves j.tail at the end of the partition.
func (j *Kafka) readLastOffset(ctx context.Context) (uint64, error) {
	conn, err := j.dialLeader(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	first, end, err := j.readOffsets(ctx, conn)
	if err != nil {
		return 0, err
	}
	j.tail = tailScan{next: max(first, end-4*int64(j.opts.MaxBatchRecords))}
	err = j.scanTail(ctx, conn, end)
	j.maxEpoch = j.tail.f.max
	j.epochSeen.Store(j.tail.f.max)
	return j.tail.last, err
}

// readOffsets is the partition's first offset and its end (the next offset to be
// written), within Timeout.
func (j *Kafka) readOffsets(ctx context.Context, conn *kafka.Conn) (first, end int64, err error) {
	deadline := time.Now().Add(j.opts.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	if first, end, err = conn.ReadOffsets(); err != nil {
		return 0, 0, fmt.Errorf("journal: reading %s offsets: %w", j.where(), err)
	}
	return first, end, nil
}

// scanTail continues j.tail up to Kafka offset end: the fencing rule over every message,
// the largest journal offset of those kept. j.tail.next follows each message read, so an
// interrupted scan continues where it stopped.
func (j *Kafka) scanTail(ctx context.Context, conn *kafka.Conn, end int64) error {
	t := &j.tail
	if t.next >= end {
		return nil
	}
	err := j.scan(ctx, conn, t.next, end, func(kafkaOff int64, seq, epoch uint64, _ []byte) (bool, error) {
		if seq == 0 && epoch == j.opts.Epoch && j.opts.Epoch != 0 {
			j.fenceOffset = kafkaOff
		}
		if t.f.keep(seq, epoch) {
			t.last = max(t.last, seq)
		}
		t.next = kafkaOff + 1
		return true, nil
	})
	if err == nil {
		t.next = end // the scan read everything before end (offsets without a message too)
	}
	return err
}

// scan reads messages [start, end) of partition 0 and calls fn with each
// one's Kafka offset, journal offset, epoch and value until fn returns false.
func (j *Kafka) scan(ctx context.Context, conn *kafka.Conn, start, end int64,
	fn func(kafkaOff int64, seq, epoch uint64, value []byte) (bool, error)) error {
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
			epoch, err := messageEpoch(msg.Headers)
			if err != nil {
				batch.Close()
				return &CorruptError{Where: j.where(), Pos: msg.Offset, Reason: err.Error()}
			}
			more, err := fn(msg.Offset, binary.BigEndian.Uint64(msg.Key), epoch, msg.Value)
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

// messageEpoch is the epoch header's value, 0 without one.
func messageEpoch(hs []kafka.Header) (uint64, error) {
	for _, h := range hs {
		if h.Key == epochHeader {
			if len(h.Value) != 8 {
				return 0, fmt.Errorf("epoch header of %d bytes, want 8", len(h.Value))
			}
			return binary.BigEndian.Uint64(h.Value), nil
		}
	}
	return 0, nil
}

// Start starts the committer goroutine. A writer without an epoch on a
// topic that has one fails with ErrFenced (its records would be dropped).
func (j *Kafka) Start() error {
	if j.opts.ReadOnly {
		return errors.New("journal: Kafka journal opened read-only")
	}
	if j.opts.Epoch < j.maxEpoch {
		return fencedError(j.opts.Epoch, j.maxEpoch)
	}
	return j.c.start()
}

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

// Fail makes every later Append fail with a sticky error wrapping ErrFailed
// and cause (the engine's lease was lost); queued groups fail with it.
func (j *Kafka) Fail(cause error) { j.c.failNow(cause) }

// Epoch is the epoch this journal stamps on its records.
func (j *Kafka) Epoch() uint64 { return j.opts.Epoch }

// Close flushes queued groups, stops the committer and closes the writer and Refresh's
// connection. Call it after the last Refresh has returned.
func (j *Kafka) Close() error {
	if j.c.done != nil {
		j.c.close()
	}
	err := j.w.Close()
	j.tr.CloseIdleConnections()
	j.dropTailConn()
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
		j.msgs = append(j.msgs, kafka.Message{Key: j.keys[8*i : 8*i+8 : 8*i+8], Value: g.buf[start:end:end], Headers: j.headers})
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
// 1), skipping duplicates and records of a stale epoch; a gap yields an error
// wrapping ErrCorrupt.
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
	first, end, err := j.readOffsets(ctx, conn)
	if err != nil {
		return err
	}
	if end <= first {
		return &CorruptError{Where: j.where(), Pos: first, Offset: from, Reason: "partition is empty"}
	}
	// Find a Kafka offset at or before the record: without deleted messages
	// journal offset s sits at Kafka offset >= s-1 (duplicates and markers
	// only push it later), so one probe usually does.
	k := min(max(first, int64(from)-1), end-1)
	var epochAtK uint64
	for {
		seq, epoch, err := j.seqAt(ctx, conn, k, end)
		if err != nil {
			return err
		}
		if seq <= from {
			epochAtK = epoch
			break
		}
		if k == first {
			return fmt.Errorf("%w: %d (oldest Kafka message holds %d)", ErrOffsetNotFound, from, seq)
		}
		k = max(first, k-int64(seq-from))
	}
	var (
		seen uint64
		f    epochFilter
	)
	ownFence := j.fenceOffset >= 0 && k > j.fenceOffset
	if ownFence {
		f.max = j.opts.Epoch // after our own fence nothing older counts
	} else if epochAtK < j.epochSeen.Load() {
		// The probe may have landed among a deposed writer's records, which lie after the
		// fence of a newer epoch, and a read that starts there cannot tell them from the
		// history. They follow their fence by at most a retried group and one more in
		// flight (readLastOffset's bound): start at the newest fence within that reach.
		lo := max(first, k-4*int64(j.opts.MaxBatchRecords))
		fk, ok, err := j.lastFence(ctx, conn, lo, k)
		if err != nil {
			return err
		}
		if ok {
			k = fk
		}
	}
	done := false
	var fence uint64 // epoch of the last fence marker read
	err = j.scan(ctx, conn, k, end, func(kafkaOff int64, seq, epoch uint64, value []byte) (bool, error) {
		prev := f.max
		if seq == 0 && epoch >= prev {
			fence = epoch
		}
		if !f.keep(seq, epoch) {
			return true, nil // a fence marker, or a deposed writer's record
		}
		switch {
		case epoch > prev && seen != 0 && fence != epoch:
			// Every epoch's records follow its fence marker. Records of a lower epoch read
			// before this one's first record without its fence in between lie after that
			// fence: a deposed writer's, and this read started too late to tell.
			return false, &CorruptError{Where: j.where(), Pos: kafkaOff, Offset: seq,
				Reason: fmt.Sprintf("records of epoch %d read before the fence of epoch %d: start the read earlier (an older snapshot)", prev, epoch)}
		case seq <= seen && epoch > prev && seen != 0:
			return false, &CorruptError{Where: j.where(), Pos: kafkaOff, Offset: seen + 1,
				Reason: fmt.Sprintf("epoch %d starts at offset %d after offset %d of epoch %d", epoch, seq, seen, prev)}
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

// seqAt is the journal offset and epoch of the first record at or after Kafka
// offset k (a fence marker counts as offset 0).
func (j *Kafka) seqAt(ctx context.Context, conn *kafka.Conn, k, end int64) (seq, epoch uint64, err error) {
	found := false
	err = j.scan(ctx, conn, k, end, func(_ int64, s, e uint64, _ []byte) (bool, error) {
		seq, epoch, found = s, e, true
		return false, nil
	})
	if err == nil && !found {
		err = fmt.Errorf("journal: no message at %s offset %d", j.where(), k)
	}
	return seq, epoch, err
}

// lastFence is the Kafka offset of the last fence marker in [lo, hi), ok false without one.
func (j *Kafka) lastFence(ctx context.Context, conn *kafka.Conn, lo, hi int64) (at int64, ok bool, err error) {
	if lo >= hi {
		return 0, false, nil
	}
	err = j.scan(ctx, conn, lo, hi, func(kafkaOff int64, seq, _ uint64, _ []byte) (bool, error) {
		if seq == 0 {
			at, ok = kafkaOff, true
		}
		return true, nil
	})
	return at, ok, err
}
