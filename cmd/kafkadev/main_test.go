package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"svc/persistence/journal"
)

func TestKafkadev(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--port", "0", "--data-dir", t.TempDir()}, w, &stderr)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address line: %v (%s)", err, <-done)
	}
	go io.Copy(io.Discard, out)
	brokers := strings.Split(strings.TrimSpace(line), ",")
	if !strings.HasPrefix(brokers[0], "127.0.0.1:") {
		t.Fatalf("addresses %q", line)
	}

	t.Run("a kafka-go client produces and consumes", func(t *testing.T) {
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		defer ccancel()
		conn, err := kafka.DialContext(cctx, "tcp", brokers[0])
		if err != nil {
			t.Fatal(err)
		}
		err = conn.CreateTopics(kafka.TopicConfig{Topic: "dev", NumPartitions: 1, ReplicationFactor: 1})
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		wr := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: "dev", RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
		defer wr.Close()
		if err := wr.WriteMessages(cctx, kafka.Message{Key: []byte("k"), Value: []byte("hello")}, kafka.Message{Value: []byte("world")}); err != nil {
			t.Fatal(err)
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: "dev", Partition: 0, MaxWait: 50 * time.Millisecond})
		defer r.Close()
		for _, want := range []string{"hello", "world"} {
			m, err := r.ReadMessage(cctx)
			if err != nil || string(m.Value) != want {
				t.Fatalf("read %q, %v; want %q", m.Value, err, want)
			}
		}
	})

	t.Run("the journal runs on it with the development setting", func(t *testing.T) {
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		defer ccancel()
		j, err := journal.OpenKafka(cctx, journal.KafkaOptions{Brokers: brokers, Topic: "svc-journal-sandbox", Dev: true, Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if err := j.Start(); err != nil {
			t.Fatal(err)
		}
		if last, err := j.Append(cctx, [][]byte{[]byte("a"), []byte("b")}); err != nil || last != 2 {
			t.Fatalf("Append = %d, %v", last, err)
		}
	})

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "DEVELOPMENT ONLY") {
		t.Fatalf("no development-only warning in %q", stderr.String())
	}
}
