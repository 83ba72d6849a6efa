package engine

import "strconv"

// AccountID identifies a trading account: one merchant in one environment. The caller
// runs one Engine per environment, so the merchant's UUID is enough within an Engine.
type AccountID [16]byte

// OrderID is an order's UUID (v7), chosen by the caller and unique per account.
type OrderID [16]byte

// TransferID is the UUID of a credit or debit; a repeated TransferID changes nothing.
type TransferID [16]byte

// Side of an order.
type Side uint8

// Sides.
const (
	Buy Side = iota + 1
	Sell
)

func (s Side) String() string {
	switch s {
	case Buy:
		return "buy"
	case Sell:
		return "sell"
	}
	return "Side(" + strconv.Itoa(int(s)) + ")"
}

// OrderType is limit or market.
type OrderType uint8

// Order types.
const (
	Limit OrderType = iota + 1
	Market
)

func (t OrderType) String() string {
	switch t {
	case Limit:
		return "limit"
	case Market:
		return "market"
	}
	return "OrderType(" + strconv.Itoa(int(t)) + ")"
}

// TimeInForce of an order. The zero value means GTC for limit orders and IOC for market
// orders (a market order never rests).
type TimeInForce uint8

// Times in force.
const (
	GTC TimeInForce = iota
	IOC
	FOK
)

func (t TimeInForce) String() string {
	switch t {
	case GTC:
		return "GTC"
	case IOC:
		return "IOC"
	case FOK:
		return "FOK"
	}
	return "TimeInForce(" + strconv.Itoa(int(t)) + ")"
}

// STPMode says what happens when an order would trade with a resting order of the same
// account. The zero value cancels the resting order.
type STPMode uint8

// Self-trade prevention modes.
const (
	STPCancelResting STPMode = iota
	STPCancelTaker
	STPCancelBoth
)

func (m STPMode) String() string {
	switch m {
	case STPCancelResting:
		return "cancel_resting"
	case STPCancelTaker:
		return "cancel_taker"
	case STPCancelBoth:
		return "cancel_both"
	}
	return "STPMode(" + strconv.Itoa(int(m)) + ")"
}

// OrderState is the API's order status.
type OrderState uint8

// Order states.
const (
	StateNone OrderState = iota
	Open
	PartiallyFilled
	Filled
	Cancelled
)

var stateNames = [...]string{"NONE", "OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED"}

func (s OrderState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "OrderState(" + strconv.Itoa(int(s)) + ")"
}

// Closed reports whether s is FILLED or CANCELLED.
func (s OrderState) Closed() bool { return s == Filled || s == Cancelled }

// CancelReason says why an order was cancelled.
type CancelReason uint8

// Cancel reasons.
const (
	ReasonNone              CancelReason = iota
	ReasonUser                           // a cancel or cancel-all command
	ReasonIOCRemainder                   // the unfilled rest of an IOC or market order
	ReasonFOKUnfillable                  // a FOK order the book could not fill entirely
	ReasonSelfTrade                      // self-trade prevention
	ReasonInsufficientFunds              // a market buy whose reservation ran out
	ReasonCountdown                      // the account's countdown on the symbol ran out (CmdCountdown, CmdTick)
	ReasonDisconnect                     // cancel-on-disconnect: the session that placed it closed
)

var cancelReasonNames = [...]string{"NONE", "USER", "IOC_REMAINDER", "FOK_UNFILLABLE", "SELF_TRADE_PREVENTION", "INSUFFICIENT_FUNDS", "COUNTDOWN", "DISCONNECT"}

func (r CancelReason) String() string {
	if int(r) < len(cancelReasonNames) {
		return cancelReasonNames[r]
	}
	return "CancelReason(" + strconv.Itoa(int(r)) + ")"
}

// ResultCode is the outcome of a command. Rejections are codes, not Go errors; a
// rejected command changed nothing and produced no events.
type ResultCode uint8

// Result codes.
const (
	OK                      ResultCode = iota // done; see Result for the order's state
	AlreadyApplied                            // a credit or debit whose TransferID was seen before: nothing changed
	RejectUnknownSymbol                       // Command.Symbol names no pair
	RejectInvalidCommand                      // unknown command kind, side, type, time in force or STP mode
	RejectInvalidPrice                        // limit price missing, not positive, above the maximum or off the tick
	RejectInvalidQuantity                     // quantity not positive, off the step or above the maximum
	RejectBelowMinQty                         // quantity below the pair's minimum
	RejectBelowMinNotional                    // price x quantity (or quote amount) below the pair's minimum notional
	RejectInsufficientFunds                   // not enough available balance to lock or debit
	RejectPostOnlyWouldTake                   // a post-only order that would trade at once
	RejectDuplicateOrderID                    // the account already has an order with this OrderID
	RejectUnknownOrder                        // cancel of an order this account does not have (or no longer remembers)
	RejectNotCancellable                      // cancel of an order that is FILLED or CANCELLED
	RejectInvalidAsset                        // credit or debit of an unknown asset
	RejectInvalidAmount                       // credit or debit amount not positive or overflowing the balance
	// RejectDuplicateClientOrderID: the account already has an open or retained closed
	// order with this ClientOrderID (on any symbol). Result.OrderID, State, Reason and
	// Filled are that order's; Engine.Order or OrderByClientID gives the rest.
	RejectDuplicateClientOrderID
)

var resultNames = [...]string{
	"OK", "ALREADY_APPLIED", "UNKNOWN_SYMBOL", "INVALID_COMMAND", "INVALID_PRICE",
	"INVALID_QUANTITY", "BELOW_MIN_QUANTITY", "BELOW_MIN_NOTIONAL", "INSUFFICIENT_BALANCE",
	"POST_ONLY_WOULD_TAKE", "DUPLICATE_ORDER_ID", "ORDER_NOT_FOUND", "ORDER_NOT_CANCELLABLE",
	"INVALID_ASSET", "INVALID_AMOUNT", "DUPLICATE_CLIENT_ORDER_ID",
}

func (c ResultCode) String() string {
	if int(c) < len(resultNames) {
		return resultNames[c]
	}
	return "ResultCode(" + strconv.Itoa(int(c)) + ")"
}

// CommandKind selects what a Command does.
type CommandKind uint8

// Command kinds.
const (
	CmdPlace     CommandKind = iota + 1 // place an order
	CmdCancel                           // cancel one order by Account and OrderID
	CmdCancelAll                        // cancel every open order of Account on Symbol
	CmdCredit                           // add Amount of Asset to Account's available balance
	CmdDebit                            // take Amount of Asset from Account's available balance
	CmdAmend                            // change a resting order's Price and/or Qty (amend.go)
	CmdCountdown                        // arm (Amount ns from Time) or clear (Amount 0) Account's countdown on Symbol
	CmdTick                             // the caller's clock on Symbol: fire the countdowns due at Time

	cmdQueryDepth   // internal: depth snapshot, answered by the runner
	cmdBarrier      // internal: pause the runner for a snapshot
	numCommandKinds // sentinel
)

func (k CommandKind) String() string {
	switch k {
	case CmdPlace:
		return "place"
	case CmdCancel:
		return "cancel"
	case CmdCancelAll:
		return "cancel_all"
	case CmdCredit:
		return "credit"
	case CmdDebit:
		return "debit"
	case CmdAmend:
		return "amend"
	case CmdCountdown:
		return "countdown"
	case CmdTick:
		return "tick"
	}
	return "CommandKind(" + strconv.Itoa(int(k)) + ")"
}

// Command is one request to the engine. Only the fields of its Kind are read.
type Command struct {
	Kind    CommandKind
	Time    int64 // unix nanoseconds, chosen by the caller; copied to the events
	Account AccountID

	// Place, Cancel, CancelAll, Amend (Price and Qty: 0 keeps the order's), Countdown, Tick.
	Symbol        string // Place, CancelAll, Countdown and Tick; Cancel and Amend find it from the order
	OrderID       OrderID
	ClientOrderID string
	Side          Side
	Type          OrderType
	TIF           TimeInForce
	STP           STPMode
	PostOnly      bool
	Price         Price // limit price; ignored for market orders
	Qty           Qty   // base quantity; for a market buy, 0 with QuoteQty set buys for an amount
	QuoteQty      int64 // market buy by quote amount, in quote asset units (Qty must be 0)
	// Reason of a Cancel or CancelAll: ReasonNone (user) or ReasonDisconnect.
	Reason CancelReason
	// Metadata of a Place: the caller's opaque bytes (the gateway's JSON object), at most
	// MaxMetadata, kept on the order as they are and journaled with its EventAccepted.
	// The engine never reads them; "" for none. A string, so it is immutable and shared
	// by the order, its event and its views without copies.
	Metadata string

	// Credit, Debit; Countdown (Amount: nanoseconds from Time, 0 clears it; TransferID:
	// the countdown's owner, zero for the account's own).
	Asset      Asset
	Amount     int64 // units of Asset, > 0
	TransferID TransferID

	query *depthQuery // internal query payload
}

// MaxMetadata is the longest Command.Metadata a place accepts (RejectInvalidCommand
// beyond): an event with it still fits the u16 length of a batch record's event.
const MaxMetadata = 32 << 10

// Result is what a command did.
type Result struct {
	Code    ResultCode
	OrderID OrderID      // the order placed or cancelled
	State   OrderState   // the order's state after the command
	Reason  CancelReason // why the order is CANCELLED, if it is
	Filled  Qty          // the order's cumulative filled quantity
	Seq     uint64       // sequence of the command's last event in its stream (0 if none)
	Offset  uint64       // the journal offset returned for the batch holding the command
	// Cancelled is how many orders a CancelAll cancelled.
	Cancelled int
}
