package transfers

import (
	"context"

	"github.com/jackc/pgx/v5"

	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/moneyout"
)

// An NGN transfer is a conversion: the merchant's USDT pays NGN at the transfer's price.
// It goes through the conversion desk like a deposit's or an offramp's (issue 27): at
// settlement the held USDT is sold to system:fx and the NGN is paid out of it, so
// ledger.Post writes the treasury's hedge intent (sell the USDT on the book) in the same
// transaction, and `svc ledger verify` reconciles it with the treasury's trades. The
// conversion is posted when the bank settles the payout, not when the transfer is created:
// a transfer the bank refuses never converted anything (its USDT is released), so a hedge
// is placed only for money that left. A USD transfer pays USDT out 1:1 (no NGN risk) and
// keeps the plain settlement.

// converts reports whether tr's settlement is a conversion through system:fx.
func converts(tr Transfer) bool { return tr.Amount.Asset == money.NGN }

// settleTx posts tr's settlement: the held USDT out (merchant pending), through
// system:fx for an NGN payout.
func settleTx(ctx context.Context, tx pgx.Tx, tr Transfer, desc string) error {
	f := funds(tr)
	if !converts(tr) {
		_, err := f.Settle(ctx, tx, desc)
		return err
	}
	return throughFX(ctx, tx, tr, f, "settle", desc, f.Account(ledger.Pending), tr.SourceAmount, ledger.System(ledger.External), tr.Amount)
}

// reverseTx posts the bank's reversal of tr's settlement with f (tr's funds and the
// reversal's metadata): the USDT back to the merchant's available balance at the
// transfer's own price; for an NGN payout the returned NGN is sold back through system:fx
// (the treasury buys the USDT back on the book).
func reverseTx(ctx context.Context, tx pgx.Tx, tr Transfer, f moneyout.Funds, desc string) error {
	if !converts(tr) {
		_, err := f.Reverse(ctx, tx, desc)
		return err
	}
	return throughFX(ctx, tx, tr, f, "reversal", desc, ledger.System(ledger.External), tr.Amount, f.Account(ledger.Available), tr.SourceAmount)
}

// throughFX posts f's step (settle, reversal) of tr as a conversion: from pays in to
// system:fx, and system:fx pays out to to.
func throughFX(ctx context.Context, tx pgx.Tx, tr Transfer, f moneyout.Funds, step, desc string,
	from ledger.Account, in money.Amount, to ledger.Account, out money.Amount) error {
	fx := ledger.System(ledger.FX)
	_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: tr.Tenant.MerchantID, Environment: tr.Tenant.Environment,
		Reference: f.Ref + ":" + step, Kind: f.Kind + "." + step, Description: desc, Metadata: f.Metadata,
		Postings: append(ledger.Move(from, fx, in), ledger.Move(fx, to, out)...)})
	return err
}
