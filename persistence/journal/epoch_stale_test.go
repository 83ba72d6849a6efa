package journal

import (
	"context"
	"errors"
	"testing"
)

// A deposed writer's late group can be longer than the shift between journal and Kafka
// offsets (one message per fence and per duplicate). A read that starts inside that group,
// as a restart from a snapshot taken just after the takeover does, must still never hand on
// one of its records: it reads the right records, or reports corruption.
func TestKafkaReadFromInsideALongStaleRun(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	c := newCluster(t)
	brokers := c.ListenAddrs()
	topic := newTopic()
	a := openKafkaEpoch(t, brokers, topic, 1)
	mustAppend(t, a, batchOf(1, 3))
	b := openKafkaEpoch(t, brokers, topic, 2) // takes over: fence of epoch 2 after offset 3
	// The zombie's group in flight lands after the fence: offsets 4-9 of epoch 1.
	produceEpoch(t, brokers, topic, 1, "stale", 4, 5, 6, 7, 8, 9)
	mustAppend(t, b, batchOf(4, 8))
	const last = 11
	r, err := OpenKafka(context.Background(), KafkaOptions{Brokers: brokers, Topic: topic, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, j := range []*Kafka{b, r} {
		for from := uint64(1); from <= last; from++ {
			var got [][]byte
			err := j.ReadFrom(context.Background(), from, func(_ uint64, p []byte) error {
				got = append(got, append([]byte(nil), p...))
				return nil
			})
			for _, p := range got {
				if string(p) == "stale" {
					t.Fatalf("ReadFrom(%d) (read-only %v) handed on a deposed writer's record", from, j.opts.ReadOnly)
				}
			}
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("ReadFrom(%d): %v", from, err)
			}
			if err == nil {
				checkPayloads(t, got, from, last+1-int(from))
			}
		}
	}
}
