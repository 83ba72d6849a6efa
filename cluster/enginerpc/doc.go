// Package enginerpc carries one environment's engine across a process boundary: Server
// wraps an *engine.Engine behind a gRPC service, and Client satisfies what the gateway's
// trading handlers and the payments services need from an engine (Submit, Order,
// OrderByClientID, Balances, Pair, Pairs, Offset, Depth, Err) by calling it.
//
// The semantics are the engine's own. Submit answers only after the engine answered, which
// is only after the command's batch is durable in the journal; engine.ErrBusy,
// engine.ErrUnavailable and engine.ErrStopped come back as themselves. A transport failure
// is an error that matches engine.ErrUnavailable (the gateway answers 503
// ENGINE_UNAVAILABLE with Retry-After): ErrNotConnected when the engine could not be reached
// at all (nothing was sent), ErrOutcomeUnknown when the command may have run (a retry with
// the same client order id or transfer id is safe: the engine finds the first one).
// ErrTimeout, an ErrOutcomeUnknown that also matches context.DeadlineExceeded, is a call
// whose deadline passed first: the gateway answers it 503 SERVICE_UNAVAILABLE (with
// Retry-After and whether a retry is safe), not "not accepting commands".
//
// Every call has a deadline (Options), and the caller's context bounds it too
// (SubmitContext, BalancesContext, ErrContext, OrderContext,
// OrderByClientIDContext, OffsetContext, DepthContext). The client reconnects by itself (gRPC's connection
// management with a short backoff); a dead engine answers promptly with an error instead of
// a hang. The wire format is a small fixed binary encoding of the engine's flat value types
// (wire.go), carried by gRPC with a hand-written service description, so no code generator
// is needed. This package imports only engine: never gateway or payments.
package enginerpc
