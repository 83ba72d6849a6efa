package deposits

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/payments/rates"
)

// Errors.
var (
	// ErrNotFound: no such deposit for this merchant and environment (404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "deposit not found"}
	// ErrSandboxOnly: the sandbox operation was called with a live key (403).
	ErrSandboxOnly error = &payments.Error{Code: "SANDBOX_ONLY", Message: "this operation works only with a test (sandbox) key"}
	// ErrInvalidState: the deposit is not in a state the operation applies to (422).
	ErrInvalidState error = &payments.Error{Code: "INVALID_STATE", Message: "the deposit is not in a state this operation applies to"}
)

// Config is what the service is built with.
type Config struct {
	Onramps   *onramps.Service
	Rates     *rates.Service
	Providers providers.Environments // the chain custodian sends ONCHAIN settlements
	Events    onramps.Recorder
	Jobs      onramps.JobInserter
	// Settled are told of every deposit that settles, inside the settling transaction (a
	// checkout payment completes in it: payments/checkout.Completer). An error rolls the
	// settlement back.
	Settled []SettlementHook
	// SettleInConversion settles an INTERNAL_BALANCE deposit in its conversion's
	// transaction (svcd sets it; issue 27): the route step runs in a savepoint after the
	// conversion, and only when it fails (a settlement hook refusing) is it rolled back
	// alone and left to the PENDING_WITHDRAWAL job, as every deposit's settlement is without
	// it. One commit, one job, one ledger transaction and one row write fewer per deposit;
	// the deposit still passes through PENDING_WITHDRAWAL (the state machine and its event)
	// in the same transaction. Off, a rig can drive the two steps by hand.
	SettleInConversion bool
	// ConvertOnReceipt runs a received deposit's conversion step (and, with
	// SettleInConversion, its settlement) in a savepoint of the intake's transaction, in
	// Receive, instead of in the job Receive would enqueue (svcd sets it; issue 27): no job,
	// no commit of its own, no re-read of the deposit or its onramp, and one ledger
	// transaction for the receipt, the conversion and the settlement; the deposit still
	// walks PENDING_FX -> PENDING_WITHDRAWAL -> SETTLED with every event. A deposit it does
	// not apply to (flagged for review, a TEMPORARY onramp paid another amount), or whose
	// step fails or would end it FAILED (a refused conversion, no rate, a settlement hook
	// refusing, any error), is received as without it: the one savepoint is rolled back and
	// the PENDING_FX job enqueued, which does the rest as it always did (a settlement hook
	// refusing there too leaves the conversion standing and the PENDING_WITHDRAWAL job, as
	// SettleInConversion does). An ONCHAIN settlement is never run here (it calls the
	// custodian): the conversion enqueues its PENDING_WITHDRAWAL job, as the job's does.
	// Off, Receive leaves every step to the jobs (the batch tests' rigs).
	ConvertOnReceipt bool
	// Logger hears why a deposit ConvertOnReceipt applied to went to its job instead
	// (nil: discarded): Info for a conversion the step would not end converted (refused,
	// no rate), Warn for any other error, which would otherwise send every deposit through
	// the jobs unnoticed. It hears too, at Warn, of a batch of steps that failed (its
	// steps then run alone).
	Logger *slog.Logger
	Now    func() time.Time
}

// Service receives deposits and runs their lifecycle. Safe for concurrent use.
type Service struct {
	pool  *pgxpool.Pool
	cfg   Config
	steps [StepLanes]stepBatcher // the job workers' steps, combined into shared transactions
}

// New returns the service.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	cfg.Now = payments.OrNow(cfg.Now)
	cfg.Logger = payments.OrDiscard(cfg.Logger)
	return &Service{pool: pool, cfg: cfg}
}

func (s *Service) stamp() time.Time { return s.cfg.Now().UTC().Truncate(time.Millisecond) }

// Simulate is the sandbox deposit (POST /payments/sandbox/deposits): NGN arriving in the
// onramp now.
//
// Errors: ErrSandboxOnly (a live tenant), onramps.ErrNotFound, onramps.ErrNotActive,
// *payments.FieldError (amount), the database's.
func (s *Service) Simulate(ctx context.Context, t payments.Tenant, in SimulateInput) (Deposit, error) {
	if t.Environment != "sandbox" {
		return Deposit{}, ErrSandboxOnly
	}
	if in.Amount != nil && (in.Amount.Asset != money.NGN || !in.Amount.IsPositive()) {
		return Deposit{}, &payments.FieldError{Field: "amount", Message: "must be a positive NGN amount"}
	}
	var out Deposit
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		o, err := s.cfg.Onramps.GetTx(ctx, tx, t, in.OnrampID, true)
		if err != nil {
			return err
		}
		amount := SandboxDefaultAmount
		switch {
		case in.Amount != nil:
			amount = *in.Amount
		case o.Amount != nil:
			amount = *o.Amount
		}
		out, err = s.Receive(ctx, tx, o, amount, in.ShouldFlag)
		return err
	})
	return out, err
}

// Receive records NGN arriving in onramp o (read FOR UPDATE in tx): the deposit
// PENDING_FX, the NGN on system:incoming, deposit.received, and the conversion job. A
// TEMPORARY onramp receiving its exact amount becomes INACTIVE (it is paid). With
// Config.ConvertOnReceipt it first tries the conversion step itself (convertOnReceipt).
//
// Errors: onramps.ErrNotActive, the database's.
func (s *Service) Receive(ctx context.Context, tx pgx.Tx, o onramps.Onramp, amount money.Amount, flag bool) (Deposit, error) {
	now := s.stamp()
	if o.StatusAt(now) != onramps.Active {
		return Deposit{}, onramps.ErrNotActive
	}
	d := Deposit{ID: uuid.Must(uuid.NewV7()), Tenant: o.Tenant, Type: TypeNGN, Status: PendingFX, OnrampID: &o.ID,
		CustomerID: o.CustomerID, Amount: amount, Flag: flag, Settlement: o.Settlement,
		PaymentReference: o.PaymentReference(), CreatedAt: now, UpdatedAt: now,
		AccountNumber: o.AccountNumber, BankName: o.BankName}
	if o.Type == onramps.Temporary && o.Amount != nil && o.Amount.Cmp(amount) == 0 {
		if _, err := s.cfg.Onramps.MarkInactive(ctx, tx, o.ID); err != nil {
			return Deposit{}, err
		}
	}
	if err := s.event(ctx, tx, d, events.DepositReceived); err != nil {
		return Deposit{}, err
	}
	if s.convertsOnReceipt(d, o) {
		if out, done, err := s.convertOnReceipt(ctx, tx, d, o); done || err != nil {
			return out, err
		}
	}
	if err := insert(ctx, tx, d); err != nil {
		return Deposit{}, err
	}
	if _, err := s.post(ctx, tx, d, nil, "received", receivedDesc(o),
		ledger.Move(ledger.System(ledger.External), ledger.System(Incoming), amount)); err != nil {
		return Deposit{}, err
	}
	if err := s.next(ctx, tx, d); err != nil {
		return Deposit{}, err
	}
	return d, nil
}

// receipt is what Receive holds when it runs the deposit's conversion step itself
// (Config.ConvertOnReceipt), for convert to use instead of reading or posting it again.
type receipt struct {
	onramp onramps.Onramp // the deposit's onramp, read FOR UPDATE by the intake
	// postings are the receipt's (system:external -> system:incoming, with the "received"
	// memo): the conversion's ledger transaction carries them first.
	postings []ledger.Posting
	deposit  Deposit // the deposit as the step left it, once it went well
}

// errNotOnReceipt ends a conversion step run by Receive that would end the deposit
// otherwise than converted (FLAGGED, FAILED): those are the job's, as without
// ConvertOnReceipt.
var errNotOnReceipt = errors.New("deposits: the step is left to the deposit's job")

// convertsOnReceipt reports whether Receive runs d's conversion step itself: the option
// is on and nothing known before trying sends it to the job (a deposit flagged for review
// stops FLAGGED there; a TEMPORARY onramp paid another amount fails there).
func (s *Service) convertsOnReceipt(d Deposit, o onramps.Onramp) bool {
	if !s.cfg.ConvertOnReceipt || d.Flag {
		return false
	}
	return o.Type != onramps.Temporary || o.Amount == nil || o.Amount.Cmp(d.Amount) == 0
}

// convertOnReceipt is Receive's conversion step with Config.ConvertOnReceipt, after the
// onramp is paid (INACTIVE) and deposit.received recorded: convert, with the receipt, in a
// savepoint. The deposit's row is written once, by the step, inserted in the state it
// leaves, and the receipt is posted with the conversion; it answers that deposit and done.
// When the step does not go through, the savepoint is rolled back and it answers not done
// (the fallback logged): Receive then receives the deposit exactly as without the option,
// the row PENDING_FX, the receipt's own posting, and the PENDING_FX job, which converts
// (or flags, or fails) it.
func (s *Service) convertOnReceipt(ctx context.Context, tx pgx.Tx, d Deposit, o onramps.Onramp) (Deposit, bool, error) {
	received := ledger.Move(ledger.System(ledger.External), ledger.System(Incoming), d.Amount)
	rc := &receipt{onramp: o, postings: ledger.WithMemo(stepMemo(d, "received", receivedDesc(o)), received)}
	d.unsaved = true
	sp, err := tx.Begin(ctx)
	if err != nil {
		return Deposit{}, false, err
	}
	err = s.convert(ctx, sp, d, nil, rc)
	if err == nil {
		out := rc.deposit
		out.unsaved = false
		return out, true, sp.Commit(ctx) // releases the savepoint
	}
	level := slog.LevelWarn
	if errors.Is(err, errNotOnReceipt) {
		level = slog.LevelInfo
	}
	s.cfg.Logger.Log(ctx, level, "deposits: not converted on receipt; left to its job",
		"deposit_id", d.ID, "environment", d.Tenant.Environment, "error", err)
	return Deposit{}, false, sp.Rollback(ctx)
}

// receivedDesc describes a deposit's receipt into onramp o.
func receivedDesc(o onramps.Onramp) string { return "Deposit received into " + o.AccountNumber }

func (s *Service) next(ctx context.Context, tx pgx.Tx, d Deposit) error {
	if err := jobs.InsertTx(ctx, s.cfg.Jobs, tx, StepArgs{DepositID: d.ID, From: d.Status}, nil); err != nil {
		return fmt.Errorf("enqueue deposit step: %w", err)
	}
	return nil
}

// stepMemo is the reference, kind and description of deposit d's step: its own ledger
// transaction's, or its entries' in a batch's (ledger.Posting.Memo).
func stepMemo(d Deposit, step, desc string) ledger.Memo {
	return ledger.Memo{Reference: "deposit:" + d.ID.String() + ":" + step, Kind: "deposit." + step, Description: desc}
}

// settledDesc describes the settlement of deposit d in its owner's ledger.
func settledDesc(d Deposit) string { return "Deposit " + d.PaymentReference + " settled" }

// post records a step's posting; b is the step's batch item (nil outside a batch), whose
// shard key the posting takes. It answers the balances the posting left. In a batch the
// transaction is only checked (ledger.Transaction.Validate, so a bad one fails its step
// alone) and left in b for the batch's ledger.PostAll (postBatch), which locks every
// account of the batch at once: the answer is then empty.
func (s *Service) post(ctx context.Context, tx pgx.Tx, d Deposit, b *batchItem, step, desc string, postings ...[]ledger.Posting) (ledger.Posted, error) {
	var all []ledger.Posting
	for _, p := range postings {
		all = append(all, p...)
	}
	m := stepMemo(d, step, desc)
	t := ledger.Transaction{
		MerchantID: d.Tenant.MerchantID, Environment: d.Tenant.Environment,
		Reference: m.Reference, Kind: m.Kind, Description: m.Description,
		Postings: all, Metadata: map[string]string{"deposit_id": d.ID.String()}, ShardKey: b.key(),
	}
	if b != nil && b.batched {
		if err := t.Validate(); err != nil {
			return ledger.Posted{}, err
		}
		b.txs = append(b.txs, t)
		return ledger.Posted{}, nil
	}
	return ledger.Post(ctx, tx, t)
}

// EventData is the data of the deposit.* events.
func EventData(d Deposit) events.Deposit {
	e := events.Deposit{ID: d.ID.String(), Amount: d.Amount.String(), Currency: string(d.Amount.Asset),
		Status: d.Status, Asset: string(d.Settlement.Asset), PaymentReference: d.PaymentReference}
	if d.OnrampID != nil {
		e.OnrampID = d.OnrampID.String()
	}
	if d.SettledAmount != nil {
		a := d.SettledAmount.String()
		e.SettledAmount = &a
	}
	if d.Settlement.Chain != "" {
		c := d.Settlement.Chain
		e.Chain = &c
	}
	if d.TxHash != "" {
		h := d.TxHash
		e.TxHash = &h
	}
	return e
}

func (s *Service) event(ctx context.Context, tx pgx.Tx, d Deposit, typ events.Type) error {
	_, err := s.cfg.Events.Record(ctx, tx, d.Tenant.MerchantID, d.Tenant.Environment, typ, EventData(d))
	return err
}

// owner is the account INTERNAL_BALANCE settlement credits: the customer's, else the
// merchant's.
func owner(d Deposit, p ledger.Purpose) ledger.Account {
	if d.CustomerID != nil {
		return ledger.Customer(*d.CustomerID, p)
	}
	return ledger.Merchant(d.Tenant.MerchantID, p)
}

// Advance runs the deposit's next lifecycle step: the deposit's change, its ledger
// posting, events and next job commit together; a deposit not in state `from` (a step
// already done by an earlier run of the job) is left alone. It is what the StepArgs job
// calls. Steps that run at the same time share a transaction, each in its own savepoint
// (stepBatcher), so a merchant's balance rows are locked and committed once per batch.
func (s *Service) Advance(ctx context.Context, id uuid.UUID, from string) error {
	return s.steps[int(id[15])%StepLanes].do(ctx, id, from, s.runSteps)
}

// advanceTx is Advance's step in tx. In a batch (b set), the owner's side of the step's
// posting goes to b, and a step that calls out to a provider is not run: errOwnTx asks for
// a transaction of its own.
func (s *Service) advanceTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, from string, b *batchItem) error {
	d, err := getByID(ctx, tx, id)
	if due, err := payments.Due(err, ErrNotFound, d.Status, from); !due {
		return err
	}
	if b != nil && callsOut(d) {
		return errOwnTx
	}
	switch d.Status {
	case PendingFX:
		return s.convert(ctx, tx, d, b, nil)
	case PendingWithdrawal:
		return s.route(ctx, tx, d, b)
	}
	return nil
}

func (s *Service) move(ctx context.Context, tx pgx.Tx, d *Deposit, to string) error {
	if err := moveTo(d, to, s.stamp()); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	return write(ctx, tx, d)
}

// write stores d: inserted when its row is not written yet (a deposit converted by
// Receive: its first write is the state its step leaves), updated otherwise.
func write(ctx context.Context, tx pgx.Tx, d *Deposit) error {
	if !d.unsaved {
		return update(ctx, tx, *d)
	}
	if err := insert(ctx, tx, *d); err != nil {
		return err
	}
	d.unsaved = false
	return nil
}

// convert is the PENDING_FX step. In a batch (b set) the conversion credits
// system:settling, and the batch's posting moves it on to the owner's pending balance.
// Run by Receive (rc set: Config.ConvertOnReceipt), it takes the onramp the intake read,
// posts the receipt with the conversion, leaves the deposit as it ends in rc, and answers
// errNotOnReceipt instead of flagging or failing the deposit (the job does that).
func (s *Service) convert(ctx context.Context, tx pgx.Tx, d Deposit, b *batchItem, rc *receipt) error {
	fail := s.fail
	if rc != nil {
		fail = func(_ context.Context, _ pgx.Tx, _ Deposit, _ *batchItem, reason string) error {
			return fmt.Errorf("%w: %s", errNotOnReceipt, reason) // the reason for the fallback's log
		}
	}
	if d.Flag {
		if rc != nil {
			return errNotOnReceipt
		}
		if err := s.move(ctx, tx, &d, Flagged); err != nil {
			return err
		}
		return s.event(ctx, tx, d, events.DepositFlagged)
	}
	if reason, refused, err := s.conversionRefused(ctx, d); err != nil || refused {
		if err != nil {
			return err
		}
		return fail(ctx, tx, d, b, reason)
	}
	o := onramps.Onramp{}
	if rc != nil {
		o = rc.onramp // read FOR UPDATE by the intake, in this transaction
	} else if got, err := s.cfg.Onramps.GetTx(ctx, tx, d.Tenant, *d.OnrampID, false); err != nil {
		return err
	} else {
		o = got
	}
	price := o.Price
	if o.Type == onramps.Temporary && o.Amount != nil && o.Amount.Cmp(d.Amount) != 0 {
		return fail(ctx, tx, d, b, fmt.Sprintf("AMOUNT_MISMATCH: the onramp takes exactly %s NGN, %s NGN arrived; returned to the sender",
			o.Amount, d.Amount))
	}
	if o.Type == onramps.Permanent {
		p, err := s.cfg.Rates.MarketFor(d.Tenant.Environment, d.Settlement.Asset, rates.Buy, d.Amount) // priced for the NGN that arrived
		if err != nil {
			return fail(ctx, tx, d, b, "NO_RATE: no conversion rate was available; returned to the sender")
		}
		price = p.Price
	}
	got, err := rates.Convert(d.Amount, d.Settlement.Asset, price)
	if err != nil || !got.IsPositive() {
		return fail(ctx, tx, d, b, "CONVERSION_FAILED: the amount does not convert to a positive amount; returned to the sender")
	}
	desc := fmt.Sprintf("Conversion of %s NGN to %s %s at %s", d.Amount, got, got.Asset, rates.FormatPrice(price))
	dest := ledger.System(Outgoing)
	if d.Settlement.Mode == onramps.ModeInternal {
		dest = owner(d, ledger.Pending)
		if b != nil {
			b.add(d, stepMemo(d, "convert", desc), ledger.Move(ledger.System(Settling), dest, got))
			dest = ledger.System(Settling)
		}
	}
	d.Price, d.SettledAmount = price, &got
	settleNow := s.cfg.SettleInConversion && d.Settlement.Mode == onramps.ModeInternal
	if settleNow {
		// The row is written once, by the settlement (or by settleNow when that fails).
		if err := moveTo(&d, PendingWithdrawal, s.stamp()); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidState, err)
		}
	} else if err := s.move(ctx, tx, &d, PendingWithdrawal); err != nil {
		return err
	}
	if err := s.event(ctx, tx, d, events.DepositPendingWithdrawal); err != nil {
		return err
	}
	var settled *batchItem // the settlement's own postings, when it ran here
	if settleNow {
		var err error
		if settled, err = s.settleNow(ctx, tx, d, b, rc); err != nil {
			return err
		}
	} else if err := s.next(ctx, tx, d); err != nil {
		return err
	}
	var settle []ledger.Posting     // the settlement's entries (with its memo) in this posting
	if settled != nil && b != nil { // in a batch the owner's side goes with the batch's posting
		b.txs = append(b.txs, settled.txs...)
		b.postings = append(b.postings, settled.postings...)
		b.credited = append(b.credited, settled.credited...)
	} else if settled != nil {
		settle = settled.postings
	}
	var received []ledger.Posting // the receipt's entries (with its memo), when Receive runs the step
	if rc != nil {
		received, rc.deposit = rc.postings, d
		if settled != nil {
			rc.deposit = settled.settled
		}
	}
	// The posting goes last: it locks the owner's pending row, which every deposit of that
	// merchant (or customer) also needs, until the commit; the deposit's own writes before it
	// do not make the others wait (issue 22). Its entries in the order of the steps: the
	// receipt (Receive's), the conversion (the transaction's own reference and kind), the
	// settlement.
	p, err := s.post(ctx, tx, d, b, "convert", desc, received,
		ledger.Move(ledger.System(Incoming), ledger.System(ledger.FX), d.Amount),
		ledger.Move(ledger.System(ledger.FX), dest, got), settle)
	if err != nil || settled == nil || b != nil || len(settled.credited) == 0 {
		return err
	}
	credited, ok := p.Find(owner(d, ledger.Available), got.Asset)
	if !ok {
		return fmt.Errorf("deposits: conversion posting has no balance of %s", owner(d, ledger.Available))
	}
	return s.creditedEvent(ctx, tx, d, credited.Amount)
}

// settleNow runs the route step of d, just converted to PENDING_WITHDRAWAL (in memory: its
// row is written by the route, SETTLED, or here when the route fails), in a savepoint of
// tx (Config.SettleInConversion). The owner's side of the settlement (pending
// -> available, with its own memo) is not posted: it is returned, for the conversion's
// posting to carry (one ledger transaction instead of two), with the customer credit to
// announce once it is posted. When the route fails (a settlement hook refusing, or the
// database), its writes are rolled back alone and the PENDING_WITHDRAWAL job is enqueued
// instead (nil returned): the conversion commits, and the settlement is retried by its job
// exactly as without SettleInConversion. Run by Receive (rc set), the route runs in tx
// itself, already Receive's savepoint: a failure rolls the whole step back to the
// PENDING_FX job (two statements fewer per deposit than a savepoint of its own).
func (s *Service) settleNow(ctx context.Context, tx pgx.Tx, d Deposit, b *batchItem, rc *receipt) (*batchItem, error) {
	col := &batchItem{shardKey: b.key(), batched: b != nil && b.batched}
	if rc != nil {
		if err := s.route(ctx, tx, d, col); err != nil {
			return nil, err
		}
		return col, nil
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.route(ctx, sp, d, col); err == nil {
		return col, sp.Commit(ctx) // releases the savepoint
	}
	if err := sp.Rollback(ctx); err != nil {
		return nil, err
	}
	if err := write(ctx, tx, &d); err != nil {
		return nil, err
	}
	return nil, s.next(ctx, tx, d)
}

// creditedEvent records customer.balance.credited for customer deposit d, settled, with
// the balance its credit left.
func (s *Service) creditedEvent(ctx context.Context, tx pgx.Tx, d Deposit, balance money.Amount) error {
	id := d.ID.String()
	_, err := s.cfg.Events.Record(ctx, tx, d.Tenant.MerchantID, d.Tenant.Environment, events.CustomerBalanceCredited,
		events.CustomerBalance{CustomerID: d.CustomerID.String(), Asset: string(d.SettledAmount.Asset), Amount: d.SettledAmount.String(),
			Balance: balance.String(), DepositID: &id})
	return err
}

// fail ends a PENDING_FX deposit FAILED, its NGN returned to the sender.
func (s *Service) fail(ctx context.Context, tx pgx.Tx, d Deposit, b *batchItem, reason string) error {
	if _, err := s.post(ctx, tx, d, b, "return", "Deposit returned to the sender",
		ledger.Move(ledger.System(Incoming), ledger.System(ledger.External), d.Amount)); err != nil {
		return err
	}
	return s.end(ctx, tx, &d, Failed, reason)
}

// end moves d to `to` (FAILED, or REVERSED after a settlement) with the reason, and records
// deposit.failed (the reversal's too; see docs/decisions.md).
func (s *Service) end(ctx context.Context, tx pgx.Tx, d *Deposit, to, reason string) error {
	d.FailureReason = reason
	if err := s.move(ctx, tx, d, to); err != nil {
		return err
	}
	return s.event(ctx, tx, *d, events.DepositFailed)
}

// route is the PENDING_WITHDRAWAL step. In a batch (b set) the owner's pending ->
// available move goes with the batch's posting, and customer.balance.credited is recorded
// after it (with the balance it left).
func (s *Service) route(ctx context.Context, tx pgx.Tx, d Deposit, b *batchItem) error {
	got := *d.SettledAmount
	if d.Settlement.Mode != onramps.ModeInternal {
		res, err := s.cfg.Providers.For(d.Tenant.Environment).Custody.Send(ctx, providers.SendRequest{
			Reference: "deposit:" + d.ID.String(), Chain: providers.Chain(d.Settlement.Chain), Asset: got.Asset,
			To: d.Settlement.DestinationAddress, Amount: got,
		})
		if err != nil {
			return err // outcome unknown: the job retries with the same reference
		}
		if res.Status == providers.SendFailed {
			if _, err := s.post(ctx, tx, d, b, "unwind", "On-chain send refused; converted back and returned to the sender",
				ledger.Move(ledger.System(Outgoing), ledger.System(ledger.FX), got),
				ledger.Move(ledger.System(ledger.FX), ledger.System(ledger.External), d.Amount)); err != nil {
				return err
			}
			return s.end(ctx, tx, &d, Failed, "SEND_FAILED: "+res.FailureReason)
		}
		if _, err := s.post(ctx, tx, d, b, "settle", "Sent on "+d.Settlement.Chain+" to "+d.Settlement.DestinationAddress,
			ledger.Move(ledger.System(Outgoing), ledger.System(ledger.External), got)); err != nil {
			return err
		}
		d.TxHash = res.TxHash
	}
	if err := s.move(ctx, tx, &d, Settled); err != nil {
		return err
	}
	if err := s.event(ctx, tx, d, events.DepositSettled); err != nil {
		return err
	}
	var credited *ledger.Balance
	if d.Settlement.Mode == onramps.ModeInternal && b != nil {
		b.add(d, stepMemo(d, "settle", settledDesc(d)), ledger.Move(owner(d, ledger.Pending), owner(d, ledger.Available), got))
		if d.CustomerID != nil {
			b.credited = append(b.credited, d)
		}
	} else if d.Settlement.Mode == onramps.ModeInternal {
		// After the deposit's own writes: the posting locks the owner's pending and available
		// rows, shared by all its deposits, until the commit (issue 22).
		from, to := owner(d, ledger.Pending), owner(d, ledger.Available)
		p, err := s.post(ctx, tx, d, nil, "settle", settledDesc(d), ledger.Move(from, to, got))
		if err != nil {
			return err
		}
		if b, ok := p.Find(to, got.Asset); ok {
			credited = &b
		}
	}
	if d.CustomerID != nil && credited != nil {
		if err := s.creditedEvent(ctx, tx, d, credited.Amount); err != nil {
			return err
		}
	}
	for _, h := range s.cfg.Settled {
		if err := h.DepositSettled(ctx, tx, d); err != nil {
			return fmt.Errorf("settlement hook: %w", err)
		}
	}
	if b != nil {
		b.settled = d
	}
	return nil
}

// Get returns the tenant's deposit with its onramp's account. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Deposit, error) {
	return get(ctx, s.pool, t, id)
}

// List returns a page of the tenant's deposits, newest first, and the total.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Deposit, int64, error) {
	return list(ctx, s.pool, t, f)
}

// Customer returns the deposit's customer, for the detail view (nil when none or when no
// customer directory is wired).
func (s *Service) Customer(ctx context.Context, d Deposit) (*onramps.Customer, error) {
	c := s.cfg.Onramps.Customers()
	if d.CustomerID == nil || c == nil {
		return nil, nil
	}
	out, err := c.Lookup(ctx, s.pool, d.Tenant, *d.CustomerID)
	if errors.Is(err, onramps.ErrCustomerNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}
