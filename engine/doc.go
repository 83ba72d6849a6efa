// Package engine is the exchange core: fixed-point prices and quantities, one order book
// per symbol, matching, trading accounts (available and locked balances), per-symbol
// runner goroutines fed by bounded command rings, and the events that make it all
// durable. It does no I/O, reads no clock (times come in with commands), encodes no JSON
// and logs nothing.
//
// # Use
//
//	j := myJournal                    // a Journal; an OrderedJournal (eventlog.Log) for group commit
//	eng, err := engine.New(engine.Config{Pairs: engine.DefaultPairs(), Journal: j})
//	// recovery: eng.Restore(snapshot); eng.Apply(eventsAfterSnapshotOffset)
//	eng.Start()
//	res, err := eng.Submit(&engine.Command{Kind: engine.CmdPlace, Symbol: "USDT-NGN",
//		Account: acct, OrderID: id, Side: engine.Buy, Type: engine.Limit,
//		Price: 150000, Qty: 250, Time: nowUnixNano})
//	// err is only ErrBusy (ring full, nothing queued), ErrUnavailable (fail-stopped after
//	// a journal error) or ErrStopped; everything else is res.Code (OK, or a rejection
//	// such as RejectInsufficientFunds) with res.State, res.Filled, res.Seq, res.Offset.
//	eng.SubmitAsync(&cmd, completer)  // pipelined: completer.Complete(res, err) later
//	eng.Order(acct, id); eng.OrderByClientID(acct, "my-1"); eng.OpenOrders(acct, "USDT-NGN", nil)
//	eng.Balances(acct)
//	eng.Depth("USDT-NGN", 20); eng.BestBidAsk("USDT-NGN")
//	snap, offset, err := eng.Snapshot(nil) // barrier: pauses all runners at one offset
//	if err := eng.Err(); err != nil { /* fail-stopped: serve no reads (503) */ }
//	eng.Stop()                        // drains the rings, waits for the goroutines
//
// Commands: CmdPlace (limit or market; GTC/IOC/FOK; post-only; self-trade prevention
// STPCancelResting (default), STPCancelTaker, STPCancelBoth; client order id; a market
// buy by quote amount sets QuoteQty and Qty 0), CmdCancel (Account + OrderID, or
// Account + ClientOrderID with a zero OrderID; the symbol is found from the account's
// orders), CmdCancelAll (Account + Symbol), CmdCredit and CmdDebit (Account, Asset,
// Amount, TransferID; a repeated TransferID answers AlreadyApplied and changes nothing),
// CmdAmend (Account + OrderID or ClientOrderID, new Price and/or total Qty: a smaller
// quantity at the same price keeps the order's place, anything else re-queues it at the
// back and may trade; at or below the filled quantity cancels the rest; amend.go),
// CmdCountdown (Account + Symbol + Amount ns from Time; 0 clears) and CmdTick (Symbol +
// Time: the caller's clock fires the countdowns due; countdown.go).
//
// # Client order ids
//
// A non-empty Command.ClientOrderID (at most 255 bytes; the gateway allows 64) is unique
// per account across all symbols among the orders the engine remembers: the open ones
// and the recent closed ones, "recent" meaning the last Config.ClosedOrders (default
// 4096) orders closed on the order's symbol. A CmdPlace reusing one is answered
// RejectDuplicateClientOrderID with Result.OrderID, State, Reason and Filled of the
// order that holds it, and changes nothing; Engine.OrderByClientID(acct, clientID)
// returns that order's view. Once the order's symbol has closed Config.ClosedOrders
// orders after it, the engine forgets it and the id is free again: a retry window
// longer than that needs the caller's own record (the gateway's idempotency keys, the
// order history). The index is part of the account, checked and updated under its
// mutex, so two runners placing one id at once accept it once; Restore and Apply
// rebuild it from the orders of the snapshot and the EventAccepted records, so it
// survives a restart.
//
// # Metadata
//
// Command.Metadata of a CmdPlace (at most MaxMetadata bytes) is the caller's: the engine
// never reads it, keeps it on the order, hands it to the order's EventAccepted (journaled
// there, once) and its views, and snapshots it, so it survives recovery like the order.
//
// # Units
//
// Price is an int64 count of 10^-PriceDecimals quote per base (0.01 NGN for the default
// pairs USDT-NGN, USDC-NGN, USD-NGN), a multiple of TickSize. Qty is an int64 count of
// lots of 10^-QtyDecimals base (0.01), a multiple of StepSize, at least MinQty (1.00).
// Balances and amounts are int64 counts of each asset's engine unit (Asset.Decimals):
// NGN 1e-4, USDT 1e-6, USDC 1e-6, USD 1e-2. NGN is kept at 1e-4 rather than kobo
// because price (0.01) x quantity (0.01) is a multiple of 0.0001 NGN: with that unit every
// notional is exact and no fill ever rounds. A lot converts to base units by a fixed
// multiplier (1 lot = 10,000 USDT units = 1 USD unit). Payments' decimal strings (NGN
// and USD with 2 places, USDT and USDC with 6) parse with ParseAmount; AppendAmount
// prints at least the display places and more only for sub-kobo NGN. Parsers return
// *DecimalError with a Reason (negative, zero, exponent, too many decimals, overflow,
// off tick or step, below minimum). Products are overflow-checked with math/bits; the
// pair's MaxPrice x MaxQty bound lets the matching loop multiply unchecked.
//
// # Model and invariants
//
// Risk surrounds the match. On accept an order locks what it may spend: price x qty of
// the quote for a limit buy, qty of the base for a sell, the quote amount for a market
// buy by amount, and for a market buy by quantity what the book says the quantity costs
// now (capped at what is available). A fill at a better price than a buy's limit releases
// the difference at once; whatever an order still holds when it is cancelled or done is
// released in the same command. Matching is price-time priority at the maker's price;
// FOK checks fillability before touching the book; a post-only order that would take is
// rejected. After every command: available >= 0 for every account and asset; locked
// equals the sum of the open orders' remaining reservations; each asset's total over all
// accounts changes only by credits and debits; no book is crossed; each level is FIFO by
// acceptance. The tests check all of these after every command (random, differential
// against a naive book, fuzz).
//
// Each side of a book keeps the price levels within 16,384 ticks of the touch in a
// ladder: an array indexed by tick offset, with a two-level bitmap that finds the next
// occupied tick in a few word operations. Levels further out live in a btree; the window
// moves only when an order arrives outside it while the ladder is empty or at a better
// price than the window's start. A level is a FIFO (an intrusive doubly linked list).
// Orders are cut from 64-byte aligned chunks, three cache lines each with what queueing,
// filling and cancelling touch in the first two, and recycled through the runner's free
// list.
//
// Each account has one mutex; runners of different symbols share accounts and never hold
// two account mutexes at once. An account's order index (open orders and the last
// Config.ClosedOrders closed orders of each symbol) is the id index used to cancel and
// to answer Order and OpenOrders as soon as a command is acknowledged. It is an
// open-addressing table keyed by a 64-bit fold of the 16-byte OrderID (the random tail
// of a UUIDv7 xor its time head), comparing the full id on a match; runners find
// accounts through a private cache keyed the same way (a direct-mapped array of recent
// accounts in front of a map). The 16-byte ids stay at the edges (commands, events,
// views).
//
// # Events and the ordering contract
//
// A command's effects are events (EventAccepted with the amount locked, EventTrade with
// all four balance deltas, EventCancelled with the amount released and a CancelReason:
// user, IOC remainder, FOK unfillable, self-trade prevention, insufficient funds,
// EventDone for a finished market buy, EventCredit and EventDebit with the TransferID).
// Each symbol is a stream with its own Seq; credits and debits are the stream "".
// A runner drains its ring in batches. It runs a batch and hands its events to the
// journal (OrderedJournal.Enqueue, which fixes their offsets and returns at once;
// Journal.Append for a plain Journal), hands the batch to its completion stage and goes
// on to the next batch at once. The completion stage (one goroutine per runner, fed in
// FIFO order, at most 4 batches in flight per runner) waits until each batch is durable
// (Pending.Wait) and only then completes its commands: nothing is acknowledged before it
// is durable, and one symbol's replies keep their order.
//
// Runners do not share a lock: matching of different symbols runs in parallel. The
// journal still gets a causal order (sequence.go): each runner numbers its batches and
// stamps every account it changes with the batch's number; a command whose outcome
// depends on an account's state (an order's reserve, a debit, and their rejections, a
// duplicate client order id) first checks the account's stamps, and if another runner
// changed it in a batch not yet handed to the journal, the runner hands on what it has
// run so far, waits for that batch, and only then runs the command. So when a batch
// spends balance another runner's batch produced (a credit, trade proceeds, a release),
// the cause is journaled first, in the same group commit or an earlier one, and every
// prefix of the journal (what a crash leaves) replays to non-negative balances. A
// rejection that read another runner's change not yet durable is answered only once it
// is (its batch, even without events, is enqueued as a sync point). The batches of all
// runners still share one group commit (fsync, acks=all).
// An error from the journal fail-stops the engine: that batch, the batches behind it in
// its runner's pipeline and every later command get ErrUnavailable; restart from
// snapshot + journal. A snapshot barrier and Stop wait for the pipelines to empty.
// A batch too large for one journal record is written as numbered part records
// (AppendBatchPart); BatchReader applies such a batch whole or, if a crash kept only its
// first parts, not at all.
// Apply replays events without matching (balances by their deltas, books by order ids);
// Snapshot/Restore save and load books and accounts in a versioned binary form.
//
// Commands whose batch produced no events (rejections, depth queries) are answered
// without waiting for the journal, unless they read another runner's change that is not
// durable yet (above); a rejection by the same runner waits behind that runner's own
// batches in flight. The read views (Order, OrderByClientID, OpenOrders, Balances,
// Depth) show the in-memory state, which may run ahead of the journal by the batches in
// flight.
package engine
