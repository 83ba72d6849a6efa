package engine

import (
	"math/rand/v2"
	"strconv"
)

// gen produces random command streams over a few accounts and the three default pairs.
type gen struct {
	r       *rand.Rand
	accts   []AccountID
	symbols []string
	placed  []struct {
		a  AccountID
		id OrderID
	}
	next   uint64
	xfer   uint64
	rich   bool // fund generously, never debit (for the differential test)
	single bool // one symbol only
}

func newGen(seed uint64, naccts int) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for i := 0; i < naccts; i++ {
		g.accts = append(g.accts, acc(i+1))
	}
	g.symbols = []string{"USDT-NGN", "USDC-NGN", "USD-NGN"}
	return g
}

// funding returns credits that give every account something of every asset.
func (g *gen) funding() []Command {
	var out []Command
	for _, a := range g.accts {
		for as := NGN; as < numAssets; as++ {
			amt := int64(150) * pow10[as.Decimals()]
			if as == NGN {
				amt = 250_000 * pow10[as.Decimals()]
			}
			if g.rich {
				amt *= 1_000_000
			}
			g.xfer++
			out = append(out, Command{Kind: CmdCredit, Account: a, Asset: as, Amount: amt, TransferID: tid(g.xfer)})
		}
	}
	return out
}

func (g *gen) cmd() Command {
	r := g.r
	a := g.accts[r.IntN(len(g.accts))]
	sym := g.symbols[0]
	if !g.single {
		sym = g.symbols[r.IntN(len(g.symbols))]
	}
	n := r.IntN(100)
	switch {
	case n < 55 || (g.rich && n < 70):
		g.next++
		c := Command{Kind: CmdPlace, Symbol: sym, Account: a, OrderID: oid(g.next), Type: Limit,
			Side: Side(1 + r.IntN(2)), Price: Price(150000 + r.IntN(61) - 30), Qty: Qty(100 + r.IntN(30)*50 + r.IntN(3))}
		if c.Side == Buy {
			c.Price -= 10
		} else {
			c.Price += 10
		}
		switch k := r.IntN(20); {
		case k < 2:
			c.TIF = IOC
		case k < 4:
			c.TIF = FOK
		case k < 6:
			c.PostOnly = true
		}
		c.STP = STPMode(r.IntN(6) / 4 * (1 + r.IntN(2))) // mostly cancel-resting
		if r.IntN(4) == 0 {
			// Unique per generator: a repeated client order id is a rejection the
			// reference book does not model (clientid_test.go covers it).
			c.ClientOrderID = "c" + string(rune('a'+r.IntN(26))) + strconv.FormatUint(g.next, 36)
		}
		g.placed = append(g.placed, struct {
			a  AccountID
			id OrderID
		}{a, c.OrderID})
		return c
	case n < 65:
		g.next++
		c := Command{Kind: CmdPlace, Symbol: sym, Account: a, OrderID: oid(g.next), Type: Market, Side: Side(1 + r.IntN(2)),
			Qty: Qty(100 + r.IntN(40)*25), STP: STPMode(r.IntN(3))}
		if c.Side == Buy && r.IntN(2) == 0 {
			c.Qty, c.QuoteQty = 0, int64(1000+r.IntN(20000))*ngn
		} else if r.IntN(5) == 0 {
			c.TIF = FOK
		}
		return c
	case n < 78 && len(g.placed) > 0:
		// amend: keep or change the price (which may cross), shrink, grow, or go to or
		// below what is filled
		// among the last few placed, which are the likeliest to rest still
		p := g.placed[len(g.placed)-1-r.IntN(min(len(g.placed), 6))]
		c := Command{Kind: CmdAmend, Account: p.a, OrderID: p.id}
		if r.IntN(3) == 0 {
			c.Price = Price(150000 + r.IntN(61) - 30)
		}
		if r.IntN(4) != 0 || c.Price == 0 {
			c.Qty = Qty(r.IntN(40)*25 + r.IntN(3))
		}
		return c
	case n < 88 && len(g.placed) > 0:
		p := g.placed[r.IntN(len(g.placed))]
		if r.IntN(10) == 0 {
			p.a = a // often someone else's order
		}
		return Command{Kind: CmdCancel, Account: p.a, OrderID: p.id}
	case n < 91:
		return Command{Kind: CmdCancelAll, Symbol: sym, Account: a}
	case g.rich:
		return Command{Kind: CmdCancelAll, Symbol: "nope", Account: a}
	case n < 94:
		// countdowns (two owners, armed, renewed, cleared) and the clock: times advance by
		// one per command in the test drivers, so a few dozen fires within the stream
		if r.IntN(3) == 0 {
			return Command{Kind: CmdTick, Symbol: sym}
		}
		c := Command{Kind: CmdCountdown, Symbol: sym, Account: a, Amount: int64(r.IntN(60))}
		if r.IntN(2) == 0 {
			c.TransferID = TransferID{byte(1 + r.IntN(2))}
		}
		return c
	default:
		as := Asset(1 + r.IntN(int(numAssets)-1))
		if r.IntN(4) != 0 {
			g.xfer++
		}
		c := Command{Kind: CmdCredit, Account: a, Asset: as, Amount: int64(1+r.IntN(5000)) * pow10[as.Decimals()], TransferID: tid(g.xfer)}
		if r.IntN(2) == 0 {
			c.Kind = CmdDebit
		}
		return c
	}
}
