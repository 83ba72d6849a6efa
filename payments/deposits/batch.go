package deposits

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/persistence/postgres"
)

// MaxStepBatch is the most deposit steps one settlement transaction carries.
const MaxStepBatch = 64

// StepLanes is how many batches of deposit steps a service runs at once (a step's lane is
// picked by its deposit id). The batches' own steps run side by side; they meet only at
// their owners' posting at the end of each batch, held until that batch's commit.
const StepLanes = 4

// stepBatcher combines the deposit steps that the job workers run at the same time into
// one transaction (issue 22, third round). Each step still changes its deposit, posts its
// ledger transaction and records its events and next job together: they run in a
// savepoint of their own, so a step that fails rolls back alone and its job retries. What
// the batch shares is the commit, and with it the owner's pending and available rows that
// every deposit of a merchant posts to: locked once per batch and held over one WAL flush,
// instead of once per deposit, which made one merchant's settlements run one commit at a
// time.
//
// It is flat combining, with no goroutine of its own: a step that finds no batch running
// leads, running batches of what is queued until its own step is done, then hands the lead
// to the oldest step still queued (or stops when none is). Steps that arrive while a batch
// runs queue for the next one, so batches grow with the load and a lone step runs at once
// in a batch of one. The zero value is ready to use.
type stepBatcher struct {
	mu      sync.Mutex
	queue   []*stepReq
	running bool
}

// stepReq is one step in the batcher.
type stepReq struct {
	id   uuid.UUID
	from string
	err  error
	ran  bool          // set by the leader that ran it
	done chan error    // the outcome, buffered
	lead chan struct{} // the lead handed over, buffered
}

// do runs the step r through run, batched with the steps queued at the same time.
func (b *stepBatcher) do(ctx context.Context, id uuid.UUID, from string, run func(context.Context, []*stepReq)) error {
	r := &stepReq{id: id, from: from, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, r)
	leader := !b.running
	b.running = true
	b.mu.Unlock()
	if !leader {
		// Wait for the outcome or for the lead; not for ctx: the lead may be handed to this
		// step, and a step nobody takes it from would stop the batcher. A batch is bounded
		// by the leader's context and the database's timeouts.
		select {
		case err := <-r.done:
			return err
		case <-r.lead:
		}
	}
	for !r.ran {
		b.mu.Lock()
		n := min(len(b.queue), MaxStepBatch)
		batch := slices.Clone(b.queue[:n])
		b.queue = slices.Delete(b.queue, 0, n)
		b.mu.Unlock()
		run(ctx, batch)
		for _, q := range batch {
			q.ran = true
			q.done <- q.err
		}
	}
	b.mu.Lock()
	if len(b.queue) > 0 {
		b.queue[0].lead <- struct{}{}
	} else {
		b.running = false
	}
	b.mu.Unlock()
	return <-r.done
}

// errOwnTx marks a step that must run in a transaction of its own: the on-chain send of
// a PENDING_WITHDRAWAL deposit calls the custodian, which must not hold a batch.
var errOwnTx = errors.New("deposits: step runs in its own transaction")

// batchItem is what one step of a batch leaves for the batch's posting: its own ledger
// transactions, the owner's side of its posting, and the customer credits to announce once
// that is posted.
type batchItem struct {
	shardKey string // the batch's ledger shard key (ledger.Transaction.ShardKey) for every posting of its steps
	// batched: the step's own ledger transactions go to txs, posted with the batch's (the
	// batch's runSteps sets it; settleNow's collector outside a batch posts its own).
	batched  bool
	txs      []ledger.Transaction
	tenant   payments.Tenant
	deposit  uuid.UUID
	postings []ledger.Posting
	credited []Deposit
	settled  Deposit // the deposit as its settlement (route) left it: settleNow's answer
}

func (b *batchItem) add(d Deposit, memo ledger.Memo, p []ledger.Posting) {
	b.tenant, b.deposit = d.Tenant, d.ID
	b.postings = append(b.postings, ledger.WithMemo(memo, p)...)
}

// key is the ledger shard key of a step's postings: the batch's (every system posting of a
// batch goes to one shard), "" outside a batch (b nil: the reference picks the shard).
func (b *batchItem) key() string {
	if b == nil {
		return ""
	}
	return b.shardKey
}

// runSteps runs the batch's steps in one transaction, each in a savepoint; each step's
// outcome goes to its err. The steps' ledger transactions and the owners' side of their
// postings (one ledger transaction per merchant and environment) are posted together at
// the end (postBatch). A batch of one is Advance's transaction as it always was; a batch
// that fails (after postgres.InTx's retries) runs its steps alone, so that what fails one
// step's posting fails that step only, as a step's savepoint does.
func (s *Service) runSteps(ctx context.Context, batch []*stepReq) {
	if len(batch) == 1 {
		r := batch[0]
		r.err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error { return s.advanceTx(ctx, tx, r.id, r.from, nil) })
		return
	}
	// Deposit rows locked in id order: two batches (two workers' processes) cannot wait for
	// each other on them. Every system posting of the batch goes to one shard.
	slices.SortFunc(batch, func(a, b *stepReq) int { return slices.Compare(a.id[:], b.id[:]) })
	batchID := uuid.Must(uuid.NewV7())
	shardKey := "deposits:batch:" + batchID.String()
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var items []*batchItem
		for _, r := range batch {
			sp, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			item := &batchItem{shardKey: shardKey, batched: true}
			r.err = s.advanceTx(ctx, sp, r.id, r.from, item)
			if r.err != nil {
				if err := sp.Rollback(ctx); err != nil {
					return err
				}
				continue
			}
			// A savepoint that went well is released by the commit.
			if len(item.postings) > 0 || len(item.txs) > 0 {
				items = append(items, item)
			}
		}
		return s.postBatch(ctx, tx, batchID, items)
	})
	// Steps that call out run alone, after the batch; every step when the batch failed.
	if err != nil {
		// Logged: the steps' own outcomes hide it, and a batch that always fails (one bad
		// step in each, a fault in the batch posting) would show only as a slower service.
		s.cfg.Logger.WarnContext(ctx, "deposits: batch failed; its steps run alone", "steps", len(batch), "error", err)
	}
	for _, r := range batch {
		if err != nil || errors.Is(r.err, errOwnTx) {
			r.err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error { return s.advanceTx(ctx, tx, r.id, r.from, nil) })
		}
	}
}

// postBatch posts the batch's ledger transactions, all in one ledger.PostAll: the steps'
// own (each deposit step's reference, on the batch's shard), then the owners' side of the
// steps: one ledger transaction per merchant and environment (system:settling -> owner
// pending for conversions, owner pending -> available for settlements), every step's
// postings kept as entries of their own, in the steps' order. Every account the batch
// touches is locked here, once, in the order every posting takes them, for the rest of
// the batch's transaction: a batch's steps posting one by one and its owners' side after
// them took them in rounds, and crossed another batch's or a posting alone (issue 27:
// deadlocks). Then customer.balance.credited for each settled customer deposit, with the
// balance the posting left.
func (s *Service) postBatch(ctx context.Context, tx pgx.Tx, batchID uuid.UUID, items []*batchItem) error {
	type group struct {
		postings []ledger.Posting
		ids      []string
		credited []Deposit
	}
	groups := map[payments.Tenant]*group{}
	var order []payments.Tenant
	var txs []ledger.Transaction
	for _, it := range items {
		txs = append(txs, it.txs...)
		if len(it.postings) == 0 {
			continue
		}
		g := groups[it.tenant]
		if g == nil {
			g = &group{}
			groups[it.tenant] = g
			order = append(order, it.tenant)
		}
		g.postings = append(g.postings, it.postings...)
		g.ids = append(g.ids, it.deposit.String())
		g.credited = append(g.credited, it.credited...)
	}
	steps := len(txs)
	for _, t := range order {
		g := groups[t]
		txs = append(txs, ledger.Transaction{
			MerchantID: t.MerchantID, Environment: t.Environment,
			Reference: "deposits:batch:" + batchID.String(), Kind: "deposit.batch",
			Description: fmt.Sprintf("Deposits converted or settled (%d)", len(g.ids)),
			Postings:    g.postings, Metadata: map[string]string{"deposit_ids": strings.Join(g.ids, ",")},
			ShardKey: "deposits:batch:" + batchID.String(), // the steps' shard key
		})
	}
	posted, err := ledger.PostAll(ctx, tx, txs...)
	if err != nil {
		return fmt.Errorf("deposits: batch posting: %w", err)
	}
	for i, t := range order {
		g, p := groups[t], posted[steps+i]
		// Each credit's balance is the one its own entry left: the posting's final balance
		// less the credits to the same account after it (the batch moves nothing else into
		// an owner's available balance).
		after := make([]money.Amount, len(g.credited))
		type slot struct {
			account ledger.Account
			asset   money.Asset
		}
		left := map[slot]money.Amount{}
		for i := len(g.credited) - 1; i >= 0; i-- {
			d := g.credited[i]
			to := owner(d, ledger.Available)
			k := slot{to, d.SettledAmount.Asset}
			bal, ok := left[k]
			if !ok {
				b, found := p.Find(to, d.SettledAmount.Asset)
				if !found {
					return fmt.Errorf("deposits: batch posting has no balance of %s", to)
				}
				bal = b.Amount
			}
			after[i] = bal
			prev, err := bal.Sub(*d.SettledAmount)
			if err != nil {
				return err
			}
			left[k] = prev
		}
		for i, d := range g.credited {
			id := d.ID.String()
			if _, err := s.cfg.Events.Record(ctx, tx, t.MerchantID, t.Environment, events.CustomerBalanceCredited,
				events.CustomerBalance{CustomerID: d.CustomerID.String(), Asset: string(d.SettledAmount.Asset), Amount: d.SettledAmount.String(),
					Balance: after[i].String(), DepositID: &id}); err != nil {
				return err
			}
		}
	}
	return nil
}

// callsOut reports whether d's next step calls a provider that must not hold a batch.
func callsOut(d Deposit) bool {
	return d.Status == PendingWithdrawal && d.Settlement.Mode != onramps.ModeInternal
}
