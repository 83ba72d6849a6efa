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
