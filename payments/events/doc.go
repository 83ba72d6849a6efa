// Package events records what happened to a merchant's data and queues its webhook
// deliveries, in the caller's own PostgreSQL transaction.
//
// Every payments domain reports a state change the same way, inside the transaction that
// makes the change:
//
//	err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
//		// ... the domain's own writes ...
//		_, err := recorder.Record(ctx, tx, merchantID, "sandbox", events.DepositSettled, events.Deposit{...})
//		return err
//	})
//
// Record inserts one row in the events table and one delivery job (a river job, kind
// "webhook_delivery", queue "webhooks") per active endpoint of that merchant and environment
// subscribed to the event or to every event. A rolled-back transaction leaves no event and
// no job; a committed one always has its deliveries, which payments/webhooks works after
// the commit. Nothing leaves the process before the commit.
//
// The catalogue (catalogue.go) has a constant for every event name of the spec and the data
// shape each carries (data.go, documented in docs/events.md). Record refuses names outside
// the catalogue and data that is not a JSON object.
//
// A Recorder needs something that inserts river jobs in a transaction: the process's
// insert-only *river.Client[pgx.Tx], built before every service (see payments/jobs).
package events
