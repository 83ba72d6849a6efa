package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func TestEpochFrame(t *testing.T) {
	t.Run("round trips offset, epoch and payload", func(t *testing.T) {
		for _, epoch := range []uint64{0, 1, 1 << 40} {
			b := appendEpochFrame(nil, 42, epoch, []byte("payload"))
			if len(b) != epochFrameSize(7, epoch) {
				t.Fatalf("epoch %d: size %d", epoch, len(b))
			}
			off, e, p, n, err := decodeEpochFrame(append(b, 1, 2), 1<<20)
			if err != nil || off != 42 || e != epoch || string(p) != "payload" || n != len(b) {
				t.Fatalf("epoch %d: decode = %d %d %q %d %v", epoch, off, e, p, n, err)
			}
		}
	})
	t.Run("a frame without an epoch reads as epoch 0", func(t *testing.T) {
		_, e, _, _, err := decodeEpochFrame(appendFrame(nil, 3, []byte("old")), 1<<20)
		if err != nil || e != 0 {
			t.Fatalf("epoch %d, err %v", e, err)
		}
	})
	t.Run("the epoch is covered by the CRC", func(t *testing.T) {
		b := appendEpochFrame(nil, 3, 9, []byte("x"))
		b[16] ^= 1
		if _, _, _, _, err := decodeEpochFrame(b, 1<<20); !errors.Is(err, errBadCRC) {
			t.Fatalf("err %v", err)
		}
	})
}

// writeSegment writes frames (offset, epoch, payloadFor(offset) or a stale payload) as the
// journal's first segment.
func writeSegment(t *testing.T, dir string, frames ...[2]uint64) {
	t.Helper()
	var b []byte
	for _, f := range frames {
		p := payloadFor(f[0])
		if f[1] == 1 {
			p = []byte("stale")
		}
		b = appendEpochFrame(b, f[0], f[1], p)
	}
	if err := os.WriteFile(filepath.Join(dir, segmentName(frames[0][0])), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFileEpoch(t *testing.T) {
	testContract(t, func(t *testing.T) Journal { return openFile(t, FileOptions{Epoch: 7}) })

	t.Run("every record carries the writer's epoch; old records read as epoch 0", func(t *testing.T) {
		j := openFile(t, FileOptions{})
		mustAppend(t, j, batchOf(1, 3)) // before epochs
		j.Close()
		j = openFile(t, FileOptions{Dir: j.Dir(), Epoch: 5})
		mustAppend(t, j, batchOf(4, 3))
		checkPayloads(t, readAll(t, j, 1), 1, 6)
		j.Close()
		data, err := os.ReadFile(filepath.Join(j.Dir(), segmentName(1)))
		if err != nil {
			t.Fatal(err)
		}
		var epochs []uint64
		for len(data) > 0 {
			_, e, _, n, err := decodeEpochFrame(data, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			epochs = append(epochs, e)
			data = data[n:]
		}
		if want := []uint64{0, 0, 0, 5, 5, 5}; !equalUints(epochs, want) {
			t.Fatalf("epochs %v, want %v", epochs, want)
		}
	})

	t.Run("a writer older than the journal is fenced at Start", func(t *testing.T) {
		j := openFile(t, FileOptions{Epoch: 4})
		mustAppend(t, j, batchOf(1, 2))
		j.Close()
		old, err := OpenFile(FileOptions{Dir: j.Dir(), Epoch: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		if err := old.Start(); !errors.Is(err, ErrFenced) {
			t.Fatalf("Start with an older epoch: %v", err)
		}
		checkPayloads(t, readAll(t, old, 1), 1, 2) // reading is fine
	})

	t.Run("recovery drops a stale epoch's records after a newer epoch's", func(t *testing.T) {
		dir := t.TempDir()
		// Epoch 2 wrote 1-2; a fenced epoch-1 writer's 3 and 4 follow; epoch 2 goes on at 3.
		writeSegment(t, dir, [2]uint64{1, 2}, [2]uint64{2, 2}, [2]uint64{3, 1}, [2]uint64{4, 1}, [2]uint64{3, 2}, [2]uint64{5, 1})
		j := openFile(t, FileOptions{Dir: dir, Epoch: 3})
		if j.LastOffset() != 3 {
			t.Fatalf("LastOffset %d, want 3", j.LastOffset())
		}
		mustAppend(t, j, batchOf(4, 2))
		checkPayloads(t, readAll(t, j, 1), 1, 5)
		checkPayloads(t, readAll(t, j, 3), 3, 3)
		j = reopen(t, j)
		checkPayloads(t, readAll(t, j, 1), 1, 5)
	})

	t.Run("a failing guard fails the journal before anything is written", func(t *testing.T) {
		var lost error
		j := openFile(t, FileOptions{Epoch: 1, Guard: func() error { return lost }})
		mustAppend(t, j, batchOf(1, 1))
		lost = errors.New("lease lost")
		_, err := j.Append(context.Background(), batchOf(2, 1))
		if !errors.Is(err, ErrFenced) || !errors.Is(err, ErrFailed) {
			t.Fatalf("Append with a failed guard: %v", err)
		}
		if j.LastOffset() != 1 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
		j = reopen(t, j)
		if j.LastOffset() != 1 {
			t.Fatalf("after reopen LastOffset %d: the fenced group reached the disk", j.LastOffset())
		}
	})

	t.Run("Fail stops appends with the cause", func(t *testing.T) {
		j := openFile(t, FileOptions{Epoch: 1})
		mustAppend(t, j, batchOf(1, 1))
		cause := errors.New("lease lost")
		j.Fail(cause)
		if _, err := j.Append(context.Background(), batchOf(2, 1)); !errors.Is(err, ErrFailed) || !errors.Is(err, cause) {
			t.Fatalf("Append after Fail: %v", err)
		}
		if !errors.Is(j.Err(), cause) {
			t.Fatalf("Err %v", j.Err())
		}
	})
}

func equalUints(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func openKafkaEpoch(t *testing.T, brokers []string, topic string, epoch uint64) *Kafka {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j, err := OpenKafka(ctx, KafkaOptions{Brokers: brokers, Topic: topic, Timeout: 5 * time.Second, Dev: true, Epoch: epoch})
	if err != nil {
		t.Fatalf("OpenKafka epoch %d: %v", epoch, err)
	}
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

type rawMessage struct {
	seq, epoch uint64
	value      string
}

// readRaw reads every message of partition 0.
func readRaw(t *testing.T, brokers []string, topic string) []rawMessage {
	t.Helper()
	conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	first, end, err := conn.ReadOffsets()
	if err != nil {
		t.Fatal(err)
	}
	var out []rawMessage
	conn.Seek(first, kafka.SeekAbsolute)
	for int64(len(out)) < end-first {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		m, err := conn.ReadMessage(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		e, err := messageEpoch(m.Headers)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rawMessage{binary.BigEndian.Uint64(m.Key), e, string(m.Value)})
	}
	return out
}

// produceEpoch writes records as a writer of epoch would (a zombie's, or a retried request).
func produceEpoch(t *testing.T, brokers []string, topic string, epoch uint64, value string, offsets ...uint64) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: partitionZero{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: &kafka.Transport{}}
	defer w.Close()
	var msgs []kafka.Message
	for _, o := range offsets {
		v := payloadFor(o)
		if value != "" {
			v = []byte(value)
		}
		msgs = append(msgs, kafka.Message{Key: binary.BigEndian.AppendUint64(nil, o), Value: v,
			Headers: []kafka.Header{{Key: epochHeader, Value: binary.BigEndian.AppendUint64(nil, epoch)}}})
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

func TestKafkaEpoch(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	c := newCluster(t)
	brokers := c.ListenAddrs()

	testContract(t, func(t *testing.T) Journal { return openKafkaEpoch(t, brokers, newTopic(), 3) })

	t.Run("a fence marker, then records stamped with the writer's epoch", func(t *testing.T) {
		topic := newTopic()
		j := openKafka(t, brokers, topic) // before epochs: no header
		mustAppend(t, j, batchOf(1, 2))
		j.Close()
		j = openKafkaEpoch(t, brokers, topic, 4)
		mustAppend(t, j, batchOf(3, 2))
		got := readRaw(t, brokers, topic)
		want := []rawMessage{{1, 0, string(payloadFor(1))}, {2, 0, string(payloadFor(2))},
			{0, 4, "svc journal fence: epoch 4"}, {3, 4, string(payloadFor(3))}, {4, 4, string(payloadFor(4))}}
		if len(got) != len(want) {
			t.Fatalf("messages %+v", got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("message %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		checkPayloads(t, readAll(t, j, 1), 1, 4)
	})

	t.Run("a deposed writer's records after the new fence are dropped", func(t *testing.T) {
		topic := newTopic()
		a := openKafkaEpoch(t, brokers, topic, 1)
		mustAppend(t, a, batchOf(1, 3))
		b := openKafkaEpoch(t, brokers, topic, 2) // takes over: fence of epoch 2
		if b.LastOffset() != 3 {
			t.Fatalf("new writer's LastOffset %d", b.LastOffset())
		}
		mustAppend(t, a, [][]byte{[]byte("stale"), []byte("stale")}) // the zombie goes on: 4, 5 of epoch 1
		mustAppend(t, b, batchOf(4, 2))
		produceEpoch(t, brokers, topic, 1, "stale", 6) // one more in flight
		mustAppend(t, b, batchOf(6, 1))
		checkPayloads(t, readAll(t, b, 1), 1, 6)
		for from := uint64(2); from <= 6; from++ {
			checkPayloads(t, readAll(t, b, from), from, 7-int(from))
		}
		// Recovery by a later writer, and a reader, see the same.
		b.Close()
		c := openKafkaEpoch(t, brokers, topic, 3)
		if c.LastOffset() != 6 {
			t.Fatalf("LastOffset after takeover %d", c.LastOffset())
		}
		checkPayloads(t, readAll(t, c, 1), 1, 6)
		r, err := OpenKafka(context.Background(), KafkaOptions{Brokers: brokers, Topic: topic, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		checkPayloads(t, readAll(t, r, 1), 1, 6)
		// A reader without the writer's context that starts among the stale records never
		// applies one: it reads the right records, or reports the clash as corruption.
		for from := uint64(1); from <= 6; from++ {
			var got [][]byte
			err := r.ReadFrom(context.Background(), from, func(_ uint64, p []byte) error {
				got = append(got, append([]byte(nil), p...))
				return nil
			})
			for _, p := range got {
				if string(p) == "stale" {
					t.Fatalf("ReadFrom(%d) delivered a deposed writer's record", from)
				}
			}
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("ReadFrom(%d): %v", from, err)
			}
			if err == nil {
				checkPayloads(t, got, from, 7-int(from))
			}
		}
		if err := r.Start(); err == nil {
			t.Fatal("a read-only journal started")
		}
	})

	t.Run("a deposed writer's records before the new fence count; the new writer continues after them", func(t *testing.T) {
		// Whatever the old writer got in before the fence of epoch 2 (in Kafka order) is history:
		// the new writer's tail read includes it and continues at the next offset.
		topic := newTopic()
		a := openKafkaEpoch(t, brokers, topic, 1)
		mustAppend(t, a, batchOf(1, 4))
		b := openKafkaEpoch(t, brokers, topic, 2)
		if b.LastOffset() != 4 {
			t.Fatalf("LastOffset %d", b.LastOffset())
		}
		mustAppend(t, b, batchOf(5, 1))
		checkPayloads(t, readAll(t, b, 1), 1, 5)
	})

	t.Run("a writer older than the topic is refused", func(t *testing.T) {
		topic := newTopic()
		openKafkaEpoch(t, brokers, topic, 5).Close()
		_, err := OpenKafka(context.Background(), KafkaOptions{Brokers: brokers, Topic: topic, Dev: true, Epoch: 4})
		if !errors.Is(err, ErrFenced) {
			t.Fatalf("OpenKafka with an older epoch: %v", err)
		}
		j, err := OpenKafka(context.Background(), KafkaOptions{Brokers: brokers, Topic: topic, Dev: true})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if err := j.Start(); !errors.Is(err, ErrFenced) {
			t.Fatalf("Start without an epoch on a fenced topic: %v", err)
		}
	})

	t.Run("duplicates of a retried produce are dropped, with epochs too", func(t *testing.T) {
		topic := newTopic()
		j := openKafkaEpoch(t, brokers, topic, 2)
		mustAppend(t, j, batchOf(1, 4))
		produceEpoch(t, brokers, topic, 2, "", 3, 4) // the last request again, as after a lost ack
		j.Close()
		j = openKafkaEpoch(t, brokers, topic, 3)
		if j.LastOffset() != 4 {
			t.Fatalf("LastOffset %d", j.LastOffset())
		}
		mustAppend(t, j, batchOf(5, 2))
		checkPayloads(t, readAll(t, j, 1), 1, 6)
		checkPayloads(t, readAll(t, j, 4), 4, 3)
	})

	t.Run("a failing guard fails the journal", func(t *testing.T) {
		var lost error
		ctx := context.Background()
		j, err := OpenKafka(ctx, KafkaOptions{Brokers: brokers, Topic: newTopic(), Dev: true, Epoch: 1,
			Guard: func() error { return lost }})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		j.Start()
		mustAppend(t, j, batchOf(1, 1))
		lost = errors.New("lease lost")
		if _, err := j.Append(ctx, batchOf(2, 1)); !errors.Is(err, ErrFenced) {
			t.Fatalf("Append: %v", err)
		}
	})
}

// BenchmarkEpochFrame compares encoding and decoding a 100-byte record without and with an
// epoch (what the stamp costs the file journal's committer and readers).
func BenchmarkEpochFrame(b *testing.B) {
	payload := make([]byte, 100)
	for _, epoch := range []uint64{0, 5} {
		name := "no-epoch"
		if epoch != 0 {
			name = "epoch"
		}
		b.Run(name+"/encode", func(b *testing.B) {
			buf := make([]byte, 0, 1<<16)
			b.SetBytes(int64(len(payload)))
			for i := 0; b.Loop(); i++ {
				if len(buf) > 1<<15 {
					buf = buf[:0]
				}
				buf = appendEpochFrame(buf, uint64(i), epoch, payload)
			}
		})
		b.Run(name+"/decode", func(b *testing.B) {
			frame := appendEpochFrame(nil, 7, epoch, payload)
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				if _, _, _, _, err := decodeEpochFrame(frame, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
