package engine

import "errors"

// core is the engine's state without goroutines: the accounts, one market per symbol and
// the funds stream. Runners drive it live; Apply and Restore drive it during recovery.
type core struct {
	accts    *accountTable
	markets  []*market
	bySymbol map[string]*market
	funds    *funds
}

func newCore(pairs []PairConfig, closedCap int) (*core, error) {
	if len(pairs) == 0 {
		return nil, errors.New("engine: no pairs")
	}
	c := &core{accts: new(accountTable), bySymbol: make(map[string]*market)}
	for _, pc := range pairs {
		p, err := newPair(pc)
		if err != nil {
			return nil, err
		}
		if _, dup := c.bySymbol[p.Symbol]; dup {
			return nil, errors.New("engine: duplicate pair " + p.Symbol)
		}
		m := newMarket(p, c.accts, closedCap)
		c.markets = append(c.markets, m)
		c.bySymbol[p.Symbol] = m
	}
	c.funds = newFunds(c.accts)
	return c, nil
}

// exec runs one command synchronously on the stream it belongs to.
func (c *core) exec(cmd *Command, r *Result) {
	switch cmd.Kind {
	case CmdCredit, CmdDebit:
		c.funds.exec(cmd, r)
	case CmdPlace, CmdCancelAll, CmdCountdown, CmdTick:
		m := c.bySymbol[cmd.Symbol]
		if m == nil {
			r.Code = RejectUnknownSymbol
			return
		}
		m.exec(cmd, r)
	case CmdCancel, CmdAmend:
		m := c.marketOf(cmd.Account, cmd.OrderID)
		if m == nil {
			r.Code, r.OrderID = RejectUnknownOrder, cmd.OrderID
			return
		}
		m.exec(cmd, r)
	default:
		r.Code = RejectInvalidCommand
	}
}

// marketOf finds the market of an account's order from the account's order map.
func (c *core) marketOf(acct AccountID, id OrderID) *market {
	a := c.accts.get(acct)
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if o := a.orders.get(&id); o != nil {
		return o.mkt
	}
	return nil
}
