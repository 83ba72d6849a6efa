package journal

import (
	"sync/atomic"
	"time"
)

// Bucket bounds of the commit histograms (read-only tables).
var (
	secondsBounds = [...]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}
	recordsBounds = [...]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}
)

const numBuckets = len(secondsBounds) // both tables have this many bounds

// CommitSecondsBounds are the upper bounds (seconds) of CommitStats.SecondsBuckets.
func CommitSecondsBounds() []float64 { return append([]float64(nil), secondsBounds[:]...) }

// CommitRecordsBounds are the upper bounds (records) of CommitStats.RecordsBuckets.
func CommitRecordsBounds() []float64 { return append([]float64(nil), recordsBounds[:]...) }

// CommitStats describe the group commits since the journal was opened: how long each
// write-and-sync took and how many records it made durable. Buckets are counts per
// bucket (not cumulative), the last one past the highest bound.
type CommitStats struct {
	Commits        uint64
	SecondsSum     float64
	RecordsSum     uint64
	SecondsBuckets [numBuckets + 1]uint64
	RecordsBuckets [numBuckets + 1]uint64
}

// commitStats is written by the committer goroutine only (a few atomic adds per group
// commit, next to a write and an fsync) and read by CommitStats at any time.
type commitStats struct {
	commits, nanos, records atomic.Uint64
	seconds, size           [numBuckets + 1]atomic.Uint64
}

func (s *commitStats) observe(d time.Duration, records int) {
	s.commits.Add(1)
	s.nanos.Add(uint64(d))
	s.records.Add(uint64(records))
	s.seconds[bucket(secondsBounds[:], d.Seconds())].Add(1)
	s.size[bucket(recordsBounds[:], float64(records))].Add(1)
}

func bucket(bounds []float64, v float64) int {
	for i, b := range bounds {
		if v <= b {
			return i
		}
	}
	return len(bounds)
}

func (s *commitStats) load() CommitStats {
	st := CommitStats{Commits: s.commits.Load(), SecondsSum: time.Duration(s.nanos.Load()).Seconds(), RecordsSum: s.records.Load()}
	for i := range s.seconds {
		st.SecondsBuckets[i] = s.seconds[i].Load()
		st.RecordsBuckets[i] = s.size[i].Load()
	}
	return st
}

// CommitStats returns the journal's group-commit latency and size counters.
func (j *File) CommitStats() CommitStats { return j.c.stats.load() }

// CommitStats returns the journal's group-commit latency and size counters.
func (j *Kafka) CommitStats() CommitStats { return j.c.stats.load() }
