package engine

import (
	"runtime"
	"sync"
)

// Replay applies each stream's events on a goroutine of its own. Replay does not match:
// an event of one symbol changes that market and the accounts it names, and a market's
// events only need each other in order, which is what the live runners guarantee too
// (one runner per symbol, every account behind its own mutex). So the streams of a chunk
// of events can be applied at once, as the runners once produced them, one goroutine
// per stream, each taking its own events in journal order. Balances are sums and end
// the same in any interleaving; a client order id reused across symbols is what
// account.addOrder already takes in any order (clientid.go).

// parallelApplyMin is the fewest events worth fanning out: below it, starting the
// goroutines costs more than it saves.
const parallelApplyMin = 64

// applyAll applies events in order within each stream and reports the error of the
// earliest event that failed. After an error the state is undefined, as with a
// sequential apply that stopped half way: the caller drops the engine.
func (c *core) applyAll(events []Event) error {
	if len(events) < parallelApplyMin || runtime.GOMAXPROCS(0) < 2 {
		return c.applySeq(events)
	}
	// streams[i] is event i's stream: 0 for credits and debits, 1+k for c.markets[k].
	streams := make([]uint8, len(events))
	var seen [256]bool
	var byName map[string]int
	if len(c.markets) > scanMarkets {
		byName = make(map[string]int, len(c.markets))
		for k, m := range c.markets {
			byName[m.pair.Symbol] = k
		}
	}
	n := 0
	for i := range events {
		s := 0
		if sym := events[i].Symbol; sym != "" {
			s = c.marketIndex(sym, byName) + 1
			if s == 0 || s > 255 {
				return c.applySeq(events) // an unknown symbol, or too many to number here
			}
		}
		streams[i] = uint8(s)
		if !seen[s] {
			seen[s] = true
			n++
		}
	}
	if n < 2 {
		return c.applySeq(events)
	}
	type failure struct {
		at  int
		err error
	}
	fails := make(chan failure, n)
	var wg sync.WaitGroup
	for s := range seen {
		if !seen[s] {
			continue
		}
		wg.Add(1)
		go func(s uint8) {
			defer wg.Done()
			for i := range events {
				if streams[i] != s {
					continue
				}
				if err := c.apply(&events[i]); err != nil {
					fails <- failure{i, err}
					return
				}
			}
		}(uint8(s))
	}
	wg.Wait()
	close(fails)
	first := failure{at: len(events)}
	for f := range fails {
		if f.at < first.at {
			first = f
		}
	}
	return first.err
}

func (c *core) applySeq(events []Event) error {
	for i := range events {
		if err := c.apply(&events[i]); err != nil {
			return err
		}
	}
	return nil
}

// marketIndex is the index in c.markets of symbol's market, -1 if none; byName, built
// by the caller when there are many markets, maps symbols to it.
func (c *core) marketIndex(symbol string, byName map[string]int) int {
	if byName != nil {
		if k, ok := byName[symbol]; ok {
			return k
		}
		return -1
	}
	for k, m := range c.markets {
		if m.pair.Symbol == symbol {
			return k
		}
	}
	return -1
}
