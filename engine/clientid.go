package engine

import "hash/maphash"

// Client order ids. An account's client order ids are unique among the orders the
// account's order index holds: its open orders and its retained closed ones (the last
// Config.ClosedOrders closed orders of each symbol). The client id index below mirrors
// the order index: an order enters both in addOrder and leaves both in removeOrder, under
// the account's mutex, so the check in place and the insert are one critical section even
// when runners of two symbols place the same client id for one account at once.
//
// The client id index is an orderIndex keyed by the id's hash, which the order keeps
// (order.clientKey): evicting a closed order (market.retire, a quarter of a replay when
// this was a map[string]*order) finds its slot by that key and the order's pointer,
// without hashing or reading the string again; a lookup compares the string only on a
// key match.

// clientSeed seeds the client id hash: random per process, so no client can choose ids
// that collide in one account's index. It is never changed after package init.
var clientSeed = maphash.MakeSeed()

// clientKey is the client id index's key of a client order id.
func clientKey(id string) uint64 { return maphash.String(clientSeed, id) }

// getClient returns the indexed order with client order id id, whose key is k, or nil.
// With probe inlined into it, it is over the inliner's budget (cost 110 of 80, Go 1.26),
// so the place path (clientIDTaken and addOrderAt) calls probe itself: calling getClient
// there cost each place with a client id 55 instructions more (cachegrind,
// BenchmarkPlaceCancelClientID), 2.6% of its engine work.
func (ix *orderIndex) getClient(k uint64, id string) *order {
	o, _ := ix.probe(k, uint(len(ix.slots)), func(o *order) bool { return o.clientID == id })
	return o
}

// maxClientOrderID is the longest client order id the engine accepts: the journal's
// event codec stores at most 255 bytes (the gateway allows 64).
const maxClientOrderID = 255

// addOrder puts o in the account's order index and, if it has a client order id, in the
// client id index. The caller holds a.mu. Live, the id is free (place checked it under
// the same lock). Replay may see two holders of one id at once: a journal keeps each
// symbol's order but may put one symbol's acceptance of a reused id before another
// symbol's events that evicted its old holder (and a journal or snapshot written before
// client ids were unique may repeat one). The extra holder waits in a.clientDups until
// the entry's holder leaves; once the replay is complete one holder is left, as live.
func (a *account) addOrder(o *order) { a.addOrderAt(o, foldID((*[16]byte)(&o.id)), -1) }

// addOrderAt is addOrder with the fold and slot a.orders.find returned for o's id (slot
// -1: probe again); the caller held a.mu since that find.
func (a *account) addOrderAt(o *order, k uint64, slot int) {
	a.orders.addAt(k, o, slot)
	if o.clientID == "" {
		return
	}
	o.clientKey = clientKey(o.clientID)
	if dup, _ := a.byClient.probe(o.clientKey, uint(len(a.byClient.slots)), func(d *order) bool { return d.clientID == o.clientID }); dup != nil {
		a.clientDups = append(a.clientDups, o)
		return
	}
	a.byClient.addKey(o.clientKey, o)
}

// removeOrder takes o out of the account's order index and client id index. The caller
// holds a.mu.
func (a *account) removeOrder(o *order) {
	a.orders.remove(o)
	if o.clientID == "" {
		return
	}
	if len(a.clientDups) == 0 { // always, but in a replay that met a reused id
		a.byClient.removeKey(o.clientKey, o)
		return
	}
	if a.byClient.getClient(o.clientKey, o.clientID) == o {
		a.byClient.removeKey(o.clientKey, o)
		for i, d := range a.clientDups {
			if d.clientID == o.clientID {
				a.byClient.addKey(d.clientKey, d)
				a.clientDups = append(a.clientDups[:i], a.clientDups[i+1:]...)
				break
			}
		}
		return
	}
	for i, d := range a.clientDups {
		if d == o {
			a.clientDups = append(a.clientDups[:i], a.clientDups[i+1:]...)
			return
		}
	}
}

// clientIDTaken reports whether a place command may not use c.ClientOrderID for a, and
// then fills r: RejectDuplicateClientOrderID with the existing order's id, state,
// reason and filled quantity, or RejectInvalidCommand for an id too long to journal.
// The caller holds a.mu.
func (a *account) clientIDTaken(c *Command, r *Result) bool {
	if c.ClientOrderID == "" {
		return false
	}
	if len(c.ClientOrderID) > maxClientOrderID {
		r.Code = RejectInvalidCommand
		return true
	}
	o, _ := a.byClient.probe(clientKey(c.ClientOrderID), uint(len(a.byClient.slots)), func(o *order) bool { return o.clientID == c.ClientOrderID })
	if o == nil {
		return false
	}
	r.Code, r.OrderID, r.State, r.Reason, r.Filled = RejectDuplicateClientOrderID, o.id, o.state, o.reason, o.filled
	return true
}

// OrderByClientID returns the account's order with client order id clientID among the
// orders Order can return (open, and the retained closed ones), ok false if none.
func (e *Engine) OrderByClientID(acct AccountID, clientID string) (OrderView, bool) {
	if clientID == "" {
		return OrderView{}, false
	}
	a := e.core.accts.get(acct)
	if a == nil {
		return OrderView{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.byClient.getClient(clientKey(clientID), clientID)
	if o == nil {
		return OrderView{}, false
	}
	return o.view(), true
}

// orderIDByClientID finds the id of an account's order by client order id.
func (c *core) orderIDByClientID(acct AccountID, clientID string) (OrderID, bool) {
	a := c.accts.get(acct)
	if a == nil || clientID == "" {
		return OrderID{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if o := a.byClient.getClient(clientKey(clientID), clientID); o != nil {
		return o.id, true
	}
	return OrderID{}, false
}
