package engine

import "sync/atomic"

// numResultCodes bounds ResultCode: the codes are a fixed enum.
const numResultCodes = len(resultNames)

// cmdCounters count answered commands by kind and result code. Each runner owns one set
// and is its only writer (one uncontended atomic add per command, no lock, no
// allocation); readers load them at any time. The engine keeps one more set for the
// commands answered before reaching a runner (unknown symbol or order).
type cmdCounters [numCommandKinds][numResultCodes]atomic.Uint64

func (c *cmdCounters) add(k CommandKind, code ResultCode) {
	if k < numCommandKinds && int(code) < numResultCodes {
		c[k][code].Add(1)
	}
}

// CommandCount is how many commands of Kind the engine answered with Code.
type CommandCount struct {
	Kind CommandKind
	Code ResultCode
	N    uint64
}

// CommandCounts appends to dst the non-zero counts of answered commands by kind and
// result since the engine was built, summed over its runners (for metrics). Commands
// refused with ErrBusy, ErrUnavailable or ErrStopped are not answered and not counted
// here; see Rings for ErrBusy.
func (e *Engine) CommandCounts(dst []CommandCount) []CommandCount {
	var sum [numCommandKinds][numResultCodes]uint64
	load := func(c *cmdCounters) {
		for k := range c {
			for code := range c[k] {
				sum[k][code] += c[k][code].Load()
			}
		}
	}
	load(&e.early)
	for _, rn := range e.runners {
		load(&rn.counts)
	}
	for k := range sum {
		for code, n := range sum[k] {
			if n > 0 {
				dst = append(dst, CommandCount{Kind: CommandKind(k), Code: ResultCode(code), N: n})
			}
		}
	}
	return dst
}

// RingStats describes one runner's command ring.
type RingStats struct {
	Symbol   string // the market's symbol; "" for the funds runner (credits and debits)
	Depth    int    // commands queued and not yet taken by the runner
	Capacity int    // slots in the ring
	Busy     uint64 // submissions refused with ErrBusy because the ring was full
}

// Rings appends to dst each runner's ring depth, capacity and ErrBusy count (for
// metrics). Depth is read without stopping the runner, so it is a moment's estimate.
func (e *Engine) Rings(dst []RingStats) []RingStats {
	for _, rn := range e.runners {
		st := RingStats{Capacity: len(rn.ring.slots), Depth: rn.ring.depth(), Busy: rn.busy.Load()}
		if rn.mkt != nil {
			st.Symbol = rn.mkt.pair.Symbol
		}
		dst = append(dst, st)
	}
	return dst
}
