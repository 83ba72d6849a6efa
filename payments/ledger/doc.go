// Package ledger is the double-entry book of the payments side, kept in PostgreSQL and
// written inside the caller's transaction, so a state change, its postings and its events
// commit together (DESIGN.md section 4).
//
// # Accounts
//
// An account is one balance: (merchant, environment, owner, owner id, asset, purpose). The
// owner is the merchant itself (OwnerMerchant, owner id = merchant id), one of its customers
// (OwnerCustomer, owner id = customer id) or the system side of that merchant's books
// (OwnerSystem, owner id = uuid.Nil): the outside world (External), the conversion desk (FX),
// fees. Accounts are created on first use. Account values carry no asset: a Posting's amount
// supplies it. A system account is stored as up to SystemShards rows (its shards, picked by
// each transaction's reference) so that a merchant's concurrent postings do not queue on one
// row lock; its balance is the sum of its shards.
//
// Merchant and customer accounts never go negative; Post refuses with
// *InsufficientBalanceError (errors.Is ErrInsufficientBalance; API code INSUFFICIENT_BALANCE)
// and a CHECK constraint on the balance row refuses it even to raw SQL. Exceptions, flagged
// on the row at creation: system accounts, and accounts whose purpose starts with
// "receivable" (a debt owed to the service, e.g. the shortfall of a reversal).
//
// # Posting
//
//	err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
//		// ... the domain's own writes ...
//		_, err := ledger.Post(ctx, tx, ledger.Transaction{
//			MerchantID: m, Environment: "sandbox",
//			Reference:  "withdrawal:" + id.String() + ":hold", // idempotency of the post
//			Kind:       "withdrawal.hold", Description: "Withdrawal to 0xabc...",
//			Postings:   ledger.Move(ledger.Merchant(m, ledger.Available), ledger.Merchant(m, ledger.Pending), amount),
//		})
//		return err // *InsufficientBalanceError -> 422, nothing written
//	})
//
// A Transaction is checked before any SQL (Validate: at least two postings, known assets, no
// zero amounts, zero sum per asset). Post then creates the missing accounts and locks every
// account it touches in id order, in one statement (concurrent posts on overlapping
// accounts serialise and cannot deadlock each other), checks the new balances, and writes
// the transaction row, one entry per posting (with the account's next sequence number and
// the running balance) and the new balances. The reference is unique per merchant and
// environment: posting it again is a no-op returning Posted{Replayed: true}, so a retried
// job cannot move money twice. A database transaction that posts several ledger
// transactions posts them with one PostAll, which locks all their accounts at once: posted
// one by one, they take their locks in rounds, and two such transactions can deadlock.
//
// Typical movements: a deposit credited to a customer is Move(System(External),
// Customer(c, Available), x); a conversion is two moves through System(FX), one per asset
// (FX bears the rounding); a withdrawal holds funds with Move(Merchant(m, Available),
// Merchant(m, Pending), x), settles with Move(Merchant(m, Pending), System(External), x) and
// fails with the reverse of the hold; a reversal the balance no longer covers debits what is
// left and records the rest on Merchant(m, Receivable): it posts the whole debit first, and
// on *InsufficientBalanceError posts what the balance it reports covers.
//
// # Reading and checking
//
// GetBalance, OwnerBalances and ListEntries read; Verify checks every invariant
// (zero sum, balance = sum of entries, entry sequences and running balances, no forbidden
// negative balance) in one snapshot and returns the violations; `svc ledger verify` runs it.
package ledger
