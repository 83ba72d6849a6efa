package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// newCluster starts a one-broker kfake cluster on 127.0.0.1.
func newCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(1)}, opts...)...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

var topicSeq atomic.Int64

func openKafka(t testing.TB, brokers []string, topic string) *Kafka {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j, err := OpenKafka(ctx, KafkaOptions{Brokers: brokers, Topic: topic, Timeout: 5 * time.Second, Dev: true})
	if err != nil {
		t.Fatalf("OpenKafka: %v", err)
	}
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func newTopic() string { return fmt.Sprintf("journal-%d", topicSeq.Add(1)) }

// produceRaw writes messages with the given journal offsets as keys, as a
// retried produce request would.
func produceRaw(t *testing.T, brokers []string, topic string, offsets ...uint64) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: partitionZero{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: &kafka.Transport{}}
	defer w.Close()
	msgs := make([]kafka.Message, len(offsets))
	for i, o := range offsets {
		msgs[i] = kafka.Message{Key: binary.BigEndian.AppendUint64(nil, o), Value: payloadFor(o)}
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

func TestKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	c := newCluster(t)
	brokers := c.ListenAddrs()

	testContract(t, func(t *testing.T) Journal { return openKafka(t, brokers, newTopic()) })

	t.Run("creates the topic with one partition", func(t *testing.T) {
		topic := newTopic()
		openKafka(t, brokers, topic)
		conn, err := kafka.Dial("tcp", brokers[0])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		parts, err := conn.ReadPartitions(topic)
		if err != nil || len(parts) != 1 {
			t.Fatalf("partitions %v, err %v", parts, err)
		}
	})

	t.Run("reopen learns the last offset and continues", func(t *testing.T) {
		topic := newTopic()
		j := openKafka(t, brokers, topic)
		mustAppend(t, j, batchOf(1, 7))
		mustAppend(t, j, batchOf(8, 3))
		j.Close()
		j = openKafka(t, brokers, topic)
		if j.LastOffset() != 10 {
			t.Fatalf("LastOffset %d after reopen", j.LastOffset())
		}
		if last := mustAppend(t, j, batchOf(11, 2)); last != 12 {
			t.Fatalf("last %d", last)
		}
		checkPayloads(t, readAll(t, j, 1), 1, 12)
	})

	t.Run("duplicates from a retried produce are skipped on replay", func(t *testing.T) {
		topic := newTopic()
		j := openKafka(t, brokers, topic)
		mustAppend(t, j, batchOf(1, 5))
		j.Close()
		produceRaw(t, brokers, topic, 4, 5) // the last group again, as after a lost ack
		j = openKafka(t, brokers, topic)
		if j.LastOffset() != 5 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
		mustAppend(t, j, batchOf(6, 3))
		j.Close()
		produceRaw(t, brokers, topic, 6, 7, 8)
		j = openKafka(t, brokers, topic)
		mustAppend(t, j, batchOf(9, 1))
		checkPayloads(t, readAll(t, j, 1), 1, 9)
		for from := uint64(2); from <= 9; from++ {
			checkPayloads(t, readAll(t, j, from), from, 10-int(from))
		}
	})

	t.Run("a gap in offsets is corruption", func(t *testing.T) {
		topic := newTopic()
		openKafka(t, brokers, topic).Close() // creates the topic
		produceRaw(t, brokers, topic, 1, 2, 4)
		j := openKafka(t, brokers, topic)
		if j.LastOffset() != 4 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
		err := j.ReadFrom(context.Background(), 1, func(uint64, []byte) error { return nil })
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestKafkaRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	dir := t.TempDir()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1), kfake.DataDir(dir), kfake.SyncWrites())
	if err != nil {
		t.Fatal(err)
	}
	brokers := c.ListenAddrs()
	topic := newTopic()

	t.Run("a broker restarted on its data keeps the journal", func(t *testing.T) {
		j := openKafka(t, brokers, topic)
		mustAppend(t, j, batchOf(1, 20))
		j.Close()
		c.Close()
		c, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1), kfake.DataDir(dir), kfake.SyncWrites(), kfake.Ports(portOf(t, brokers[0])))
		if err != nil {
			t.Fatal(err)
		}
		j = openKafka(t, brokers, topic)
		if j.LastOffset() != 20 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
		mustAppend(t, j, batchOf(21, 1))
		checkPayloads(t, readAll(t, j, 1), 1, 21)
	})

	t.Run("a broker going down fails Append, stickily", func(t *testing.T) {
		j := openKafka(t, brokers, topic)
		mustAppend(t, j, batchOf(j.LastOffset()+1, 1))
		c.Close()
		start := time.Now()
		_, err1 := j.Append(context.Background(), batchOf(23, 1))
		_, err2 := j.Append(context.Background(), batchOf(23, 1))
		if !errors.Is(err1, ErrFailed) || err1 != err2 || j.Err() != err1 {
			t.Fatalf("errors %v / %v", err1, err2)
		}
		t.Logf("failed after %v: %v", time.Since(start).Round(time.Millisecond), err1)
	})
}

func portOf(t *testing.T, addr string) int {
	var port int
	if _, err := fmt.Sscanf(addr[len(addr)-5:], "%d", &port); err != nil {
		t.Fatalf("port of %s: %v", addr, err)
	}
	return port
}
