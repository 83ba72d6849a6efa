// Package trading serves the trading routes: orders (place, amend, cancel, the
// countdown-cancel-all dead-man switch), trades, trading balances and the sandbox funding
// route; and what gateway/ws's order entry needs beyond them (CancelOrders, Lease) and the
// engines' clock (RunClock). Handlers copy what they need out of the request, build an engine
// command and wait for its result; the order is acknowledged (201) only once the engine has
// made its events durable in the journal.
//
// Sandbox and live are separate engines (Exchanges), so they never trade with each other.
// Order history and trades are read from the PostgreSQL projection of the journal; a read
// waits until the projection has passed the last offset acknowledged to the caller, so a
// just-acknowledged order is always visible.
package trading
