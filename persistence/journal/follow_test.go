package journal

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestKafkaReadOnlyFollowsTheWriter(t *testing.T) {
	c := newCluster(t)
	brokers, topic := c.ListenAddrs(), newTopic()
	w := openKafka(t, brokers, topic)
	ctx := context.Background()
	appendN := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			if _, err := w.Append(ctx, [][]byte{fmt.Appendf(nil, "record %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(1, 2)

	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r, err := OpenKafka(octx, KafkaOptions{Brokers: brokers, Topic: topic, Timeout: 5 * time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.LastOffset() != 2 {
		t.Fatalf("reader opened at %d, want 2", r.LastOffset())
	}
	appendN(3, 3)
	if r.LastOffset() != 2 {
		t.Fatalf("reader moved by itself to %d", r.LastOffset())
	}
	last, err := r.Refresh(ctx)
	if err != nil || last != 5 || r.LastOffset() != 5 {
		t.Fatalf("Refresh = %d, %v; LastOffset %d; want 5", last, err, r.LastOffset())
	}
	var got []string
	if err := r.ReadFrom(ctx, 3, func(off uint64, p []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", off, p))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "[3:record 3 4:record 4 5:record 5]"; fmt.Sprint(got) != want {
		t.Fatalf("read %v, want %s", got, want)
	}
	// A writer's Refresh is its own offset.
	if last, err := w.Refresh(ctx); err != nil || last != 5 {
		t.Fatalf("writer Refresh = %d, %v", last, err)
	}
}

// BenchmarkKafkaRefreshIdle is one Refresh of a read-only journal with nothing new, on a
// topic of 10,000 records: what every tail (projector, market-data node, hot standby) pays
// per poll, 20 times a second, while the engine is idle. "rescan" is what Refresh did
// before it was incremental (dial the leader, read the last 4*MaxBatchRecords messages),
// measured in the same run.
func BenchmarkKafkaRefreshIdle(b *testing.B) {
	c := newCluster(b)
	brokers, topic := c.ListenAddrs(), newTopic()
	w := openKafka(b, brokers, topic)
	ctx := context.Background()
	batch := make([][]byte, 100)
	for i := range batch {
		batch[i] = make([]byte, 100)
	}
	for range 100 {
		if _, err := w.Append(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	open := func(b *testing.B) *Kafka {
		r, err := OpenKafka(ctx, KafkaOptions{Brokers: brokers, Topic: topic, Timeout: 5 * time.Second, ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		return r
	}
	b.Run("incremental", func(b *testing.B) {
		r := open(b)
		b.ReportAllocs()
		for b.Loop() {
			if last, err := r.Refresh(ctx); err != nil || last != 10_000 {
				b.Fatalf("Refresh = %d, %v", last, err)
			}
		}
	})
	b.Run("rescan", func(b *testing.B) {
		r := open(b)
		b.ReportAllocs()
		for b.Loop() {
			if last, err := r.readLastOffset(ctx); err != nil || last != 10_000 {
				b.Fatalf("readLastOffset = %d, %v", last, err)
			}
		}
	})
}

// TestKafkaRefreshKeepsTheFence polls a reader while a writer is deposed: the fence of the
// new epoch is read by one Refresh, and the old writer's records that land after it, polls
// later, never count, even once the fence is far behind the last few messages (the reader's
// MaxBatchRecords of 1 makes a rescan of the tail see only the last 4).
func TestKafkaRefreshKeepsTheFence(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	c := newCluster(t)
	brokers, topic := c.ListenAddrs(), newTopic()
	ctx := context.Background()
	a := openKafkaEpoch(t, brokers, topic, 1)
	mustAppend(t, a, batchOf(1, 3))

	r, err := OpenKafka(ctx, KafkaOptions{Brokers: brokers, Topic: topic, Timeout: 5 * time.Second,
		ReadOnly: true, MaxBatchRecords: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	poll := func(want uint64) {
		t.Helper()
		if last, err := r.Refresh(ctx); err != nil || last != want || r.LastOffset() != want {
			t.Fatalf("Refresh = %d, %v (LastOffset %d), want %d", last, err, r.LastOffset(), want)
		}
	}
	poll(3)
	poll(3) // nothing new

	b := openKafkaEpoch(t, brokers, topic, 2) // takes over: the fence of epoch 2
	poll(3)
	mustAppend(t, b, batchOf(4, 1))
	poll(4)
	// The deposed writer's late records, after the fence: never acknowledged to anyone.
	produceEpoch(t, brokers, topic, 1, "stale", 5, 6, 7, 8, 9)
	poll(4)
	produceEpoch(t, brokers, topic, 1, "stale", 10)
	poll(4)
	// A retried produce of epoch 2 repeats offset 4: a duplicate, not a new record.
	produceEpoch(t, brokers, topic, 2, "", 4)
	poll(4)
	mustAppend(t, b, batchOf(5, 2))
	poll(6)
	checkPayloads(t, readAll(t, r, 1), 1, 6)
	checkPayloads(t, readAll(t, r, 5), 5, 2)

	// The scenario is one that needs the state carried across polls: a fresh scan of the
	// last 4 messages (what each Refresh did before) takes the stale offsets for records.
	if last, err := r.readLastOffset(ctx); err != nil || last == 6 {
		t.Fatalf("a rescan of the tail found %d, %v: the fence is not out of its reach", last, err)
	}
}

// TestKafkaRefreshRecovers: a Refresh that fails (a cancelled context) returns the last
// offset known and an error, and the next one continues; a kept connection that broke is
// replaced within the call.
func TestKafkaRefreshRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	c := newCluster(t)
	brokers, topic := c.ListenAddrs(), newTopic()
	ctx := context.Background()
	w := openKafka(t, brokers, topic)
	mustAppend(t, w, batchOf(1, 2))
	r, err := OpenKafka(ctx, KafkaOptions{Brokers: brokers, Topic: topic, Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if last, err := r.Refresh(ctx); err != nil || last != 2 {
		t.Fatalf("Refresh = %d, %v", last, err)
	}
	// A cancelled context fails at once and keeps the offset.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if last, err := r.Refresh(cctx); err == nil || last != 2 {
		t.Fatalf("Refresh with a cancelled context = %d, %v", last, err)
	}
	mustAppend(t, w, batchOf(3, 2))
	if last, err := r.Refresh(ctx); err != nil || last != 4 {
		t.Fatalf("Refresh after the failure = %d, %v", last, err)
	}
	// The kept connection breaks (the broker closed it, or the leader moved): the poll dials
	// again at once and does not fail.
	broken := r.tail.conn
	broken.Close()
	mustAppend(t, w, batchOf(5, 1))
	if last, err := r.Refresh(ctx); err != nil || last != 5 {
		t.Fatalf("Refresh after the dropped connection = %d, %v", last, err)
	}
	if r.tail.conn == nil || r.tail.conn == broken {
		t.Fatal("the broken connection was not replaced")
	}
	checkPayloads(t, readAll(t, r, 1), 1, 5)

	// The broker gone: the poll fails promptly and keeps the offset.
	w.Close()
	c.Close()
	start := time.Now()
	if last, err := r.Refresh(ctx); err == nil || last != 5 {
		t.Fatalf("Refresh without a broker = %d, %v", last, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Refresh without a broker took %v (Timeout 1s)", d)
	}
	if r.tail.conn != nil {
		t.Fatal("a failed poll kept its connection")
	}
}
