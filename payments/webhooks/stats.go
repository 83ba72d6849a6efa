package webhooks

import (
	"sync/atomic"
	"time"
)

// Outcome is how one delivery attempt ended (a fixed set, for metrics).
type Outcome uint8

// Delivery outcomes.
const (
	OutcomeSuccess   Outcome = iota // the receiver answered 2xx
	OutcomeFailure                  // an error or non-2xx answer; the job retries
	OutcomeExhausted                // a failure on the job's last attempt: no retry follows
	OutcomeGone                     // the receiver answered 410 Gone: endpoint disabled
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"success", "failure", "retry_exhausted", "gone"}

func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "unknown"
}

// Bucket upper bounds (seconds) of DeliveryStats.SecondsBuckets (read-only table).
var deliveryBounds = [...]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// DeliverySecondsBounds are the upper bounds (seconds) of DeliveryStats.SecondsBuckets.
func DeliverySecondsBounds() []float64 { return append([]float64(nil), deliveryBounds[:]...) }

// DeliveryStats count the worker's delivery attempts since it was built: by outcome,
// and the HTTP attempt's duration (per bucket, not cumulative; the last is past the
// highest bound).
type DeliveryStats struct {
	Attempts       [numOutcomes]uint64 // indexed by Outcome
	Count          uint64
	SecondsSum     float64
	SecondsBuckets [len(deliveryBounds) + 1]uint64
}

type deliveryStats struct {
	attempts [numOutcomes]atomic.Uint64
	count    atomic.Uint64
	nanos    atomic.Uint64
	buckets  [len(deliveryBounds) + 1]atomic.Uint64
}

func (s *deliveryStats) observe(o Outcome, d time.Duration) {
	s.attempts[o].Add(1)
	s.count.Add(1)
	s.nanos.Add(uint64(max(d, 0)))
	i := len(deliveryBounds)
	for j, b := range deliveryBounds {
		if d.Seconds() <= b {
			i = j
			break
		}
	}
	s.buckets[i].Add(1)
}

// Stats returns the worker's delivery counters (for metrics).
func (w *Worker) Stats() DeliveryStats {
	st := DeliveryStats{Count: w.stats.count.Load(), SecondsSum: time.Duration(w.stats.nanos.Load()).Seconds()}
	for i := range st.Attempts {
		st.Attempts[i] = w.stats.attempts[i].Load()
	}
	for i := range st.SecondsBuckets {
		st.SecondsBuckets[i] = w.stats.buckets[i].Load()
	}
	return st
}
