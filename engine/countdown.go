package engine

import (
	"bytes"
	"cmp"
	"slices"
)

// Countdowns are the dead-man switch of an account on a symbol (CmdCountdown): armed
// with a deadline (the command's Time plus Amount nanoseconds), renewed by arming it
// again, cleared with Amount 0. An account may hold several on a symbol, told apart by
// the command's TransferID, the countdown's owner: zero for the account's own countdown
// (the REST route), a WebSocket session's id for the lease that stands in for that
// session if its gateway dies. Whichever runs out cancels all the account's orders there. The engine reads no clock: the caller's clock reaches a
// market as CmdTick, and a tick at or after a deadline clears that countdown and cancels
// every open order of the account on the symbol (ReasonCountdown). Countdowns are
// journaled (EventCountdown), replayed and kept in snapshots, so they survive a restart:
// the first tick after it fires whatever ran out meanwhile.

// countdownKey names one countdown of a market: its account and its owner.
type countdownKey struct {
	acct  AccountID
	owner TransferID
}

func compareKeys(x, y countdownKey) int {
	if c := bytes.Compare(x.acct[:], y.acct[:]); c != 0 {
		return c
	}
	return bytes.Compare(x.owner[:], y.owner[:])
}

// countdown arms or clears c.Account's countdown (owner c.TransferID) on m.
func (m *market) countdown(c *Command, r *Result) {
	if c.Amount < 0 || c.Time > 1<<62 || c.Amount > 1<<62 {
		r.Code = RejectInvalidAmount
		return
	}
	deadline := int64(0)
	if c.Amount > 0 {
		deadline = c.Time + c.Amount
	}
	k := countdownKey{c.Account, c.TransferID}
	if m.countdowns[k] == deadline {
		r.Code = OK
		return
	}
	m.setCountdown(k, deadline)
	e := m.event(EventCountdown, c.Time)
	e.Account, e.TransferID, e.Amount = c.Account, c.TransferID, deadline
	r.Code, r.Seq = OK, m.seq
}

func (m *market) setCountdown(k countdownKey, deadline int64) {
	if deadline == 0 {
		delete(m.countdowns, k)
		return
	}
	if m.countdowns == nil {
		m.countdowns = make(map[countdownKey]int64)
	}
	m.countdowns[k] = deadline
}

// tick fires the countdowns due at c.Time, in (account, owner) order.
func (m *market) tick(c *Command, r *Result) {
	r.Code = OK
	if len(m.countdowns) == 0 {
		return
	}
	var due []countdownKey
	for k, d := range m.countdowns {
		if d <= c.Time {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, compareKeys)
	for _, k := range due {
		m.setCountdown(k, 0)
		e := m.event(EventCountdown, c.Time)
		e.Account, e.TransferID = k.acct, k.owner
		r.Cancelled += m.cancelAccount(k.acct, ReasonCountdown, c.Time)
	}
	if len(due) > 0 {
		r.Seq = m.seq
	}
}

// cancelAccount cancels every resting order of acct on m, in time priority, and returns
// how many.
func (m *market) cancelAccount(acct AccountID, reason CancelReason, now int64) int {
	a := m.accts.table.get(acct)
	if a == nil {
		return 0
	}
	m.scratch = m.scratch[:0]
	a.mu.Lock()
	for o := range a.orders.all {
		if o.mkt == m && o.lvl != nil {
			m.scratch = append(m.scratch, o)
		}
	}
	a.mu.Unlock()
	slices.SortFunc(m.scratch, func(x, y *order) int { return cmp.Compare(x.seq, y.seq) })
	for _, o := range m.scratch {
		m.cancelResting(o, reason, now)
	}
	n := len(m.scratch)
	clear(m.scratch)
	return n
}

// countdownsOf returns the armed countdowns of acct with owner: symbol -> deadline (unix
// ns). It reads the markets' maps, so it is for tests and a stopped engine only.
func (c *core) countdownsOf(acct AccountID, owner TransferID) map[string]int64 {
	out := map[string]int64{}
	for _, m := range c.markets {
		if d, ok := m.countdowns[countdownKey{acct, owner}]; ok {
			out[m.symbol] = d
		}
	}
	return out
}
