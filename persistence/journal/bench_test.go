package journal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

const benchPayload = 96 // bytes per event, in the 64-128 range of engine events

// BenchmarkFdatasync is the reference: one small write plus one fdatasync.
func BenchmarkFdatasync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 16*(benchPayload+frameHeaderSize))
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := datasync(f); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAppend runs appenders goroutines, each appending batches of batch
// events, for b.N batches in total, and reports events/s and ack latency.
func benchAppend(b *testing.B, j Journal, appenders, batch int) {
	payloads := make([][]byte, batch)
	for i := range payloads {
		payloads[i] = make([]byte, benchPayload)
	}
	hists := make([]*hdrhistogram.Histogram, appenders)
	var next sync.Mutex
	remaining := b.N
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for a := range appenders {
		h := hdrhistogram.New(1, int64(10*time.Second), 3)
		hists[a] = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if remaining == 0 {
					next.Unlock()
					return
				}
				remaining--
				next.Unlock()
				t0 := time.Now()
				if _, err := j.Append(context.Background(), payloads); err != nil {
					b.Error(err)
					return
				}
				h.RecordValue(int64(time.Since(t0)))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := hdrhistogram.New(1, int64(10*time.Second), 3)
	for _, h := range hists {
		all.Merge(h)
	}
	b.ReportMetric(float64(b.N*batch)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(all.ValueAtQuantile(50))/1e3, "p50-µs")
	b.ReportMetric(float64(all.ValueAtQuantile(99))/1e3, "p99-µs")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkFileAppend(b *testing.B) {
	for _, tc := range []struct{ appenders, batch int }{{1, 16}, {16, 16}, {64, 16}, {64, 64}, {256, 16}} {
		b.Run(fmt.Sprintf("appenders=%d/batch=%d", tc.appenders, tc.batch), func(b *testing.B) {
			j, err := OpenFile(FileOptions{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			j.Start()
			defer j.Close()
			benchAppend(b, j, tc.appenders, tc.batch)
		})
	}
}

func BenchmarkKafkaAppend(b *testing.B) {
	c := newCluster(b)
	for _, tc := range []struct{ appenders, batch int }{{64, 16}, {256, 16}} {
		b.Run(fmt.Sprintf("appenders=%d/batch=%d", tc.appenders, tc.batch), func(b *testing.B) {
			j := openKafka(b, c.ListenAddrs(), newTopic())
			benchAppend(b, j, tc.appenders, tc.batch)
		})
	}
}

// BenchmarkFileReplay reads a journal of 1M events; one op is one full read.
func BenchmarkFileReplay(b *testing.B) {
	j, err := OpenFile(FileOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	j.Start()
	defer j.Close()
	const events = 1 << 20
	payloads := make([][]byte, 1024)
	for i := range payloads {
		payloads[i] = make([]byte, benchPayload)
	}
	for range events / len(payloads) {
		if _, err := j.Append(context.Background(), payloads); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(events * frameSize(benchPayload)))
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		n := 0
		err := j.ReadFrom(context.Background(), 1, func(uint64, []byte) error { n++; return nil })
		if err != nil || n != events {
			b.Fatalf("read %d, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N*events)/time.Since(start).Seconds(), "events/s")
}
