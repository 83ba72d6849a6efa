package engine

import "strconv"

// EventKind says what an Event records.
type EventKind uint8

// Event kinds.
const (
	// EventAccepted: an order entered the engine. Deltas[0] locks its reservation.
	// A GTC limit order that is not filled at once rests in the book.
	EventAccepted EventKind = iota + 1
	// EventTrade: Qty traded at Price (the maker's price) between the taker OrderID and
	// MakerOrderID. Deltas hold all four balance changes (buyer quote, buyer base,
	// seller base, seller quote). Amount is the notional in quote units.
	EventTrade
	// EventCancelled: the order's remaining Qty left the book (Reason says why) at its
	// limit Price (0 for market orders);
	// Deltas[0] releases what it still held.
	EventCancelled
	// EventDone: a market buy finished FILLED; Deltas[0] releases what its reservation
	// had left (possibly nothing), Qty is its final filled quantity.
	EventDone
	// EventCredit: Amount of Asset added to Account's available balance (TransferID).
	EventCredit
	// EventDebit: Amount of Asset taken from Account's available balance (TransferID).
	EventDebit
	// EventAmended: a resting limit order was amended (CmdAmend). Price is its new limit
	// price and Qty its new open quantity; Amount is the price and QuoteQty the open
	// quantity it had before. Deltas[0] moves the change of its reservation between
	// available and locked. The order keeps its place in the queue when the price is
	// unchanged and the open quantity went down; otherwise it goes to the back of the
	// queue at the new price (the event's Seq is its new time priority), and trades that
	// follow in the same command have it as the taker.
	EventAmended
	// EventCountdown: Account's countdown on Symbol owned by TransferID (zero: the
	// account's own; else a session's lease) was armed (Amount: the deadline, unix ns) or
	// cleared (Amount 0: turned off, or it fired; the cancels follow it).
	EventCountdown
)

var eventKindNames = [...]string{"", "ORDER_ACCEPTED", "TRADE", "ORDER_CANCELLED", "ORDER_DONE", "CREDIT", "DEBIT", "ORDER_AMENDED", "COUNTDOWN"}

func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// BalanceDelta is a change to one account's balance of one asset.
type BalanceDelta struct {
	Account   AccountID
	Asset     Asset
	Available int64
	Locked    int64
}

// Event is a fact the engine journals. Events are flat values; consumers (journal,
// market data, WebSocket hub, projector) read them, never engine internals.
//
// Seq numbers the events of one stream: each symbol is a stream, and credits and
// debits form the stream with Symbol "". Within a stream Seq increases by one per
// event; across streams there is no order.
//
// The one-byte fields sit together (Kind beside Side, Asset and NDeltas after Reason) so
// the struct has one padded word instead of four: 352 bytes, not 368. The runner writes a
// batch's events into a buffer beyond L1, so every byte is zeroed and written on a line
// that misses (issue 33). The journal and snapshot codecs encode field by field; the
// order here changes neither.
type Event struct {
	Seq    uint64
	Time   int64  // unix nanoseconds of the command that caused the event
	Symbol string // "" for credits and debits

	Account       AccountID // the order's owner (the taker for a trade), or the credited account
	OrderID       OrderID   // the order accepted, cancelled or done; the taker of a trade
	ClientOrderID string    // EventAccepted only
	Metadata      string    // EventAccepted only: the place command's Metadata ("": none)
	Kind          EventKind
	Side          Side // the order's side (the taker's for a trade)
	Type          OrderType
	TIF           TimeInForce
	STP           STPMode
	PostOnly      bool
	Reason        CancelReason // EventCancelled
	Asset         Asset        // EventCredit, EventDebit
	NDeltas       uint8
	Price         Price // the limit price (EventAccepted) or the execution price (EventTrade)
	Qty           Qty   // ordered (accepted), traded (trade), left unfilled (cancelled), filled (done)
	QuoteQty      int64 // EventAccepted of a market buy by amount

	MakerOrderID OrderID   // EventTrade
	MakerAccount AccountID // EventTrade

	Amount     int64      // credit or debit amount; notional of a trade
	TransferID TransferID // EventCredit, EventDebit

	Deltas [4]BalanceDelta
}

func (e *Event) addDelta(acct AccountID, asset Asset, avail, locked int64) {
	e.Deltas[e.NDeltas] = BalanceDelta{Account: acct, Asset: asset, Available: avail, Locked: locked}
	e.NDeltas++
}
