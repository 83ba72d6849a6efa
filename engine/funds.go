package engine

// funds is the stream of credits and debits (Symbol ""). Like a market it is
// single-threaded, driven by its own runner.
type funds struct {
	stream
	accts accountCache
}

func newFunds(accts *accountTable) *funds {
	return &funds{accts: accountCache{table: accts, m: make(map[uint64]*account)}}
}

func (f *funds) exec(c *Command, r *Result) {
	if c.Kind != CmdCredit && c.Kind != CmdDebit {
		r.Code = RejectInvalidCommand
		return
	}
	if !c.Asset.Valid() {
		r.Code = RejectInvalidAsset
		return
	}
	if c.Amount <= 0 {
		r.Code = RejectInvalidAmount
		return
	}
	a := f.accts.get(c.Account)
	a.mu.Lock()
	if c.Kind == CmdDebit {
		f.accts.follow(a) // after other runners' changes to a in the journal (sequence.go)
	} else {
		f.accts.touch(a)
	}
	if _, seen := a.transfers[c.TransferID]; seen {
		a.mu.Unlock()
		r.Code = AlreadyApplied
		return
	}
	b := &a.bal[c.Asset]
	delta := c.Amount
	kind := EventCredit
	if c.Kind == CmdDebit {
		if b.Available < c.Amount {
			a.mu.Unlock()
			r.Code = RejectInsufficientFunds
			return
		}
		delta, kind = -c.Amount, EventDebit
	} else if b.Available+b.Locked > 1<<62-c.Amount {
		a.mu.Unlock()
		r.Code = RejectInvalidAmount
		return
	}
	b.Available += delta
	if a.transfers == nil {
		a.transfers = make(map[TransferID]struct{})
	}
	a.transfers[c.TransferID] = struct{}{}
	a.mu.Unlock()

	e := f.event(kind, c.Time)
	e.Account, e.Asset, e.Amount, e.TransferID = a.id, c.Asset, c.Amount, c.TransferID
	e.addDelta(a.id, c.Asset, delta, 0)
	r.Code, r.Seq = OK, f.seq
}
