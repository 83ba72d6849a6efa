package partners

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/payments"
	"svc/payments/balance"
	"svc/payments/customers"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/money"
	"svc/payments/offramps"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/persistence/postgres"
)

// JobInserter enqueues river jobs in the caller's transaction; the insert-only *jobs.Client
// is one.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Recorder records an event in the caller's transaction; *events.Recorder is one.
type Recorder interface {
	Record(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, environment string, typ events.Type, data any) (uuid.UUID, error)
}

// DepositReceiver records NGN arriving in an onramp; *deposits.Service is one.
type DepositReceiver interface {
	Receive(ctx context.Context, tx pgx.Tx, o onramps.Onramp, amount money.Amount, flag bool) (deposits.Deposit, error)
}

// OnrampReader reads and locks, in a transaction, the onramp behind a virtual account
// (onramps.ErrNotFound); *onramps.Service is one.
type OnrampReader interface {
	ByAccountTx(ctx context.Context, tx pgx.Tx, bankCode, account, env string) (onramps.Onramp, error)
}

// onrampTable is the OnrampReader of a service configured without one: onramps' own
// reader of its table.
type onrampTable struct{}

func (onrampTable) ByAccountTx(ctx context.Context, tx pgx.Tx, bankCode, account, env string) (onramps.Onramp, error) {
	return onramps.ByAccountTx(ctx, tx, bankCode, account, env)
}

// CryptoReceiver settles crypto confirmed at an offramp's deposit address (a conversion and
// NGN payout, or a credit); *offramps.Service is one.
type CryptoReceiver interface {
	ReceiveCrypto(ctx context.Context, tx pgx.Tx, t payments.Tenant, offrampID uuid.UUID, chain providers.Chain, address string,
		amount money.Amount, txHash string) (offramps.CryptoDeposit, error)
}

// PayoutAdvancer takes the next step of a payout by asking the bank for its state under our
// reference (offramps.Service.AdvancePayout, transfers.Service.Advance).
type PayoutAdvancer func(ctx context.Context, id uuid.UUID) (time.Duration, error)

// PayoutReverser applies, in the caller's transaction, the bank's reversal of a SETTLED
// payout: the payout ends FAILED and its funds are credited back, with its event
// (transfers.Service.ReverseTx). applied false: the payout had already FAILED (nothing to
// do). An error rolls the transaction back (the job retries), except ErrNotReversible.
type PayoutReverser func(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (applied bool, err error)

// ErrNotReversible: the payout is in no state a reversal applies to (still processing after
// the bank was asked): the notification is rejected for the operator.
var ErrNotReversible = errors.New("partners: the payout cannot be reversed in its state")

// Config is what the service is built with.
type Config struct {
	Partners []Partner
	Jobs     JobInserter
	Events   Recorder
	Deposits DepositReceiver
	Onramps  OnrampReader   // nil: onramps.ByAccountTx
	Offramps CryptoReceiver // nil: crypto at offramp addresses is rejected
	// Payouts maps the kind of a payout reference ("payout" for offramp payouts, "transfer"
	// for transfers: "<kind>:<uuid>") to what advances it.
	Payouts map[string]PayoutAdvancer
	// Reversals maps the same kinds to what credits back a settled payout the bank reversed;
	// a kind without one leaves such a reversal REJECTED for the operator.
	Reversals map[string]PayoutReverser
	Providers providers.Environments // the custodian confirms a deposit address's owner
	// Verifications completes hosted KYC verifications from identification outcomes
	// (*customers.Service); nil: they are rejected for the operator.
	Verifications HostedCompleter
	// RefundPollEvery is how long a refund the partner accepted but has not paid back waits
	// before the partner is asked again (default 5 min).
	RefundPollEvery time.Duration
	Logger          *slog.Logger
	Now             func() time.Time
}

// Service receives partners' notifications and processes them. Safe for concurrent use.
type Service struct {
	pool     *pgxpool.Pool
	cfg      Config
	partners map[string]Partner
	log      *slog.Logger
}

// New returns the service over the configured partners.
func New(pool *pgxpool.Pool, cfg Config) (*Service, error) {
	cfg.Now = payments.OrNow(cfg.Now)
	cfg.Logger = payments.OrDiscard(cfg.Logger)
	if cfg.Onramps == nil {
		cfg.Onramps = onrampTable{}
	}
	if cfg.RefundPollEvery <= 0 {
		cfg.RefundPollEvery = 5 * time.Minute
	}
	s := &Service{pool: pool, cfg: cfg, partners: map[string]Partner{}, log: cfg.Logger.With("component", "partners")}
	for _, p := range cfg.Partners {
		if p.Name == "" || p.Verifier == nil || (p.Environment != payments.Sandbox && p.Environment != payments.Live) {
			return nil, fmt.Errorf("partners: partner %q needs a name, a verifier and an environment", p.Name)
		}
		if _, dup := s.partners[p.Name]; dup {
			return nil, fmt.Errorf("partners: partner %q configured twice", p.Name)
		}
		s.partners[p.Name] = p
	}
	return s, nil
}

// Names lists the configured partners.
func (s *Service) Names() []string {
	out := make([]string, 0, len(s.partners))
	for n := range s.partners {
		out = append(out, n)
	}
	return out
}

func (s *Service) stamp() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// Incoming is one notification as it arrived.
type Incoming struct {
	Header     http.Header // the request's headers
	Body       []byte      // the raw body, exactly as received
	RemoteAddr string
}

// Receipt is what intake did.
type Receipt struct {
	ID        uuid.UUID // the stored row
	EventID   string
	Status    string // Received (a job will process it), Ignored or Malformed
	Duplicate bool   // the event id was already stored: nothing changed
}

// Receive is the intake of POST /v1/partners/{provider}/events: it checks the signature
// over the raw body, stores the notification (headers, body) keyed by the partner's event
// id and enqueues its processing job, in one transaction. A repeat of a stored event id
// changes nothing (Duplicate). A notification with nothing to do is stored Ignored; a
// correctly signed body that cannot be read is stored Malformed and logged as an error.
//
// Errors: ErrUnknownProvider (404), ErrBadSignature (401; nothing stored), the database's.
func (s *Service) Receive(ctx context.Context, provider string, in Incoming) (Receipt, error) {
	return s.receive(ctx, provider, in)
}

// receive is Receive: the notification verified, then stored (and its job enqueued) in
// one transaction.
func (s *Service) receive(ctx context.Context, provider string, in Incoming) (Receipt, error) {
	v, err := s.verify(provider, in)
	if err != nil {
		return Receipt{}, err
	}
	var r Receipt
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		r, _, err = s.storeTx(ctx, tx, v, nil)
		return err
	})
	if err != nil {
		return Receipt{}, err
	}
	return r, nil
}

// verified is a notification whose signature checked, ready to store.
type verified struct {
	p       Partner
	in      Incoming
	n       Notification
	status  string
	headers []byte
}

// verify checks a notification's signature over the raw body and reads it (receive's
// work before its transaction).
func (s *Service) verify(provider string, in Incoming) (verified, error) {
	p, ok := s.partners[provider]
	if !ok {
		return verified{}, ErrUnknownProvider
	}
	n, err := p.Verifier.Verify(in.Header.Get, in.Body)
	status := Received
	switch {
	case errors.Is(err, ErrBadSignature):
		s.log.Warn("partner notification refused: bad signature", "provider", provider, "remote_addr", in.RemoteAddr)
		return verified{}, ErrBadSignature
	case errors.Is(err, ErrMalformed):
		sum := sha256.Sum256(in.Body)
		n = Notification{EventID: "malformed:" + hex.EncodeToString(sum[:]), Type: "unknown"}
		status = Malformed
		s.log.Error("partner notification signed but unreadable: stored for the operator", "provider", provider, "error", err)
	case err != nil:
		return verified{}, err
	case n.Inbound == nil && n.Payout == nil && n.Crypto == nil && n.Identity == nil && n.Refund == nil:
		status = Ignored
	}
	if n.EventID == "" {
		return verified{}, fmt.Errorf("partners: %s notification without an id", provider)
	}
	headers, err := json.Marshal(kept(in.Header, p.Headers))
	if err != nil {
		return verified{}, err
	}
	return verified{p: p, in: in, n: n, status: status, headers: headers}, nil
}

// storeTx is receive's transaction: the notification stored (a repeat of its event id
// changes nothing: Duplicate) and its job enqueued. With onramp set (the sandbox deposit
// simulation's path: the onramp the notification's virtual account names, already read
// and locked FOR UPDATE in tx), an inbound transfer from a partner with no API to confirm
// it with (the sandbox bank) is instead processed here, in tx, taking that onramp rather
// than reading it again by account, and no job is enqueued: its result is returned (nil
// when it was not processed here: a duplicate, or a notification of another kind). An
// error of the processing rolls the intake back with it, so the simulation answers the
// error with nothing stored (the job path would retry it instead).
//
// The row is inserted before processing, then marked done: inserting first is what makes
// a concurrent delivery of the same event id wait on the unique key (provider, event_id)
// and then find the row, before it processes anything.
func (s *Service) storeTx(ctx context.Context, tx pgx.Tx, v verified, onramp *onramps.Onramp) (Receipt, *Result, error) {
	p, n, provider := v.p, v.n, v.p.Name
	r := Receipt{ID: uuid.Must(uuid.NewV7()), EventID: n.EventID, Status: v.status}
	now := s.stamp()
	var processed *time.Time
	if v.status != Received {
		processed = &now
	}
	tag, err := tx.Exec(ctx, `insert into partner_events (id, provider, event_id, environment, event_type, headers, body,
			remote_addr, status, received_at, processed_at)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		on conflict (provider, event_id) do nothing`,
		r.ID, provider, n.EventID, p.Environment, n.Type, v.headers, v.in.Body, v.in.RemoteAddr, v.status, now, processed)
	if err != nil {
		return Receipt{}, nil, fmt.Errorf("partners: store notification: %w", err)
	}
	if tag.RowsAffected() == 0 {
		r.Duplicate = true
		err := tx.QueryRow(ctx, `select id, status from partner_events where provider = $1 and event_id = $2`,
			provider, n.EventID).Scan(&r.ID, &r.Status)
		return r, nil, err
	}
	if v.status != Received {
		return r, nil, nil
	}
	if onramp != nil && n.Inbound != nil && p.Confirmer == nil {
		res, err := s.inboundTx(ctx, tx, r.ID, p, n, onramp)
		if err != nil {
			return Receipt{}, nil, err
		}
		return r, &res, s.finish(ctx, tx, r.ID, res)
	}
	if _, err := s.cfg.Jobs.InsertTx(ctx, tx, ProcessArgs{ID: r.ID}, nil); err != nil {
		return Receipt{}, nil, fmt.Errorf("partners: enqueue processing: %w", err)
	}
	return r, nil, nil
}

// kept is the headers stored for audit: content type, user agent, request id and the
// partner's own (its signature); never credentials or cookies.
func kept(h http.Header, extra []string) map[string]string {
	out := map[string]string{}
	for _, name := range append([]string{"Content-Type", "User-Agent", "X-Request-Id"}, extra...) {
		if v := h.Get(name); v != "" {
			out[http.CanonicalHeaderKey(name)] = v
		}
	}
	return out
}

// Result is what processing a notification did.
type Result struct {
	Status    string     // Processed, Ignored, Rejected or Malformed (Received: not done yet)
	Outcome   string     // for people
	DepositID *uuid.UUID // the deposit an inbound transfer, or crypto at an offramp, created
	// Deposit is the deposit an inbound transfer created, as written, when this call
	// processed it (nil for a stored result).
	Deposit *deposits.Deposit
	// Refusal is the domain's refusal behind a Rejected inbound transfer (e.g.
	// onramps.ErrNotActive), for the sandbox simulation's answer.
	Refusal error
}

type row struct {
	id        uuid.UUID
	provider  string
	env       string
	status    string
	outcome   string
	deposit   *uuid.UUID
	headers   map[string]string
	body      []byte
	eventType string
}

func loadRow(ctx context.Context, q postgres.Querier, id uuid.UUID, lock bool) (row, error) {
	sql := `select id, provider, environment, status, coalesce(outcome, ''), deposit_id, headers, body, event_type
		from partner_events where id = $1`
	if lock {
		sql += ` for update`
	}
	var r row
	err := q.QueryRow(ctx, sql, id).Scan(&r.id, &r.provider, &r.env, &r.status, &r.outcome, &r.deposit, &r.headers, &r.body, &r.eventType)
	if err != nil {
		return row{}, fmt.Errorf("partners: load notification %s: %w", id, err)
	}
	return r, nil
}

func (r row) result() Result {
	return Result{Status: r.status, Outcome: r.outcome, DepositID: r.deposit}
}

// finish records the outcome of a notification still Received (in tx, row locked).
func (s *Service) finish(ctx context.Context, tx pgx.Tx, id uuid.UUID, res Result) error {
	_, err := tx.Exec(ctx, `update partner_events set status = $2, outcome = nullif($3, ''), deposit_id = $4, processed_at = $5
		where id = $1 and status = 'RECEIVED'`, id, res.Status, res.Outcome, res.DepositID, s.stamp())
	if err != nil {
		return fmt.Errorf("partners: record outcome: %w", err)
	}
	if res.Status == Rejected {
		s.log.Error("partner notification could not be applied: needs the operator", "notification", id, "outcome", res.Outcome)
	}
	return nil
}

// Process applies a stored notification once (the job's work; the sandbox deposit
// simulation, which processes its own in the intake's transaction, calls it only for one
// it finds already stored). A notification already processed answers its stored result.
// A Go error means "not done now" (a partner's API or the database unavailable): the job
// retries.
func (s *Service) Process(ctx context.Context, id uuid.UUID) (Result, error) {
	r, err := loadRow(ctx, s.pool, id, false)
	if err != nil {
		return Result{}, err
	}
	if r.status != Received {
		return r.result(), nil
	}
	p, ok := s.partners[r.provider]
	if !ok {
		return Result{}, fmt.Errorf("partners: %q is not configured in this process: will retry", r.provider)
	}
	h := http.Header{}
	for k, v := range r.headers {
		h.Set(k, v)
	}
	n, err := p.Verifier.Verify(h.Get, r.body)
	if err != nil { // the key was rotated since intake, or the row was altered
		return s.reject(ctx, id, "the stored notification no longer verifies: "+err.Error(), nil)
	}
	switch {
	case n.Inbound != nil:
		return s.inbound(ctx, id, p, n)
	case n.Payout != nil:
		return s.payout(ctx, id, p, *n.Payout)
	case n.Crypto != nil:
		return s.crypto(ctx, id, p, *n.Crypto)
	case n.Identity != nil:
		return s.identity(ctx, id, p, *n.Identity)
	case n.Refund != nil:
		return s.refundNotice(ctx, id, p, *n.Refund)
	}
	return s.settle(ctx, id, Result{Status: Ignored, Outcome: "nothing to do for " + r.eventType})
}

// apply runs a notification's effect and records its result in one transaction, with the
// notification's row loaded and locked once: a row no longer RECEIVED (another run finished
// it) answers its stored result and the effect is not run. Every notification's effect is
// one call into the owner of what it changes (deposits, offramps, customers' funding and
// KYC, the payout reversers, refunds), made here with the transaction (issue 32); an effect's
// error rolls everything back and the job retries.
func (s *Service) apply(ctx context.Context, id uuid.UUID, effect func(tx pgx.Tx) (Result, error)) (Result, error) {
	var out Result
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		r, err := loadRow(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if r.status != Received {
			out = r.result()
			return nil
		}
		if out, err = effect(tx); err != nil {
			return err
		}
		return s.finish(ctx, tx, id, out)
	})
	if err != nil {
		return Result{}, err
	}
	return out, nil
}

// settle records res unless another run already did; it answers the stored result.
func (s *Service) settle(ctx context.Context, id uuid.UUID, res Result) (Result, error) {
	return s.apply(ctx, id, func(pgx.Tx) (Result, error) { return res, nil })
}

func (s *Service) reject(ctx context.Context, id uuid.UUID, why string, refusal error) (Result, error) {
	res, err := s.settle(ctx, id, Result{Status: Rejected, Outcome: why})
	res.Refusal = refusal
	return res, err
}

// inbound credits money into an NGN virtual account: confirmed with the partner's API when
// it offers one, then deposits.Receive in the transaction that records the outcome.
func (s *Service) inbound(ctx context.Context, id uuid.UUID, p Partner, n Notification) (Result, error) {
	in := *n.Inbound
	if p.Confirmer != nil {
		got, err := p.Confirmer.VerifyInbound(ctx, in.ProviderReference)
		switch {
		case errors.Is(err, paystack.ErrChargeNotFound), errors.Is(err, paystack.ErrChargeNotPaid), errors.Is(err, paystack.ErrMalformedEvent):
			return s.reject(ctx, id, "the partner's API does not confirm the transfer: "+err.Error(), nil)
		case err != nil:
			return Result{}, err // unavailable: retry
		}
		if got.Amount != in.Amount || got.AccountNumber != in.AccountNumber || (got.BankCode != "" && in.BankCode != "" && got.BankCode != in.BankCode) {
			return s.reject(ctx, id, fmt.Sprintf("the partner's API holds another transfer (%s %s into %s/%s) than notified (%s %s into %s/%s)",
				got.Amount, got.Amount.Asset, got.BankCode, got.AccountNumber, in.Amount, in.Amount.Asset, in.BankCode, in.AccountNumber), nil)
		}
	}
	return s.apply(ctx, id, func(tx pgx.Tx) (Result, error) { return s.inboundTx(ctx, tx, id, p, n, nil) })
}

// inboundTx is an inbound transfer's effect in tx: deposits.Receive into the onramp behind
// the virtual account, or the money given back when there is none or it is not active.
// locked, when not nil, is that onramp as the caller read it FOR UPDATE in tx (the sandbox
// deposit simulation); it is taken only if it is the account's (bank code and account
// number are unique) in the partner's environment, else the account is read as for a bank's
// webhook.
func (s *Service) inboundTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, p Partner, n Notification, locked *onramps.Onramp) (Result, error) {
	in := *n.Inbound
	var o onramps.Onramp
	var err error
	if locked != nil && locked.BankCode == in.BankCode && locked.AccountNumber == in.AccountNumber &&
		locked.Tenant.Environment == p.Environment {
		o = *locked
	} else {
		o, err = s.cfg.Onramps.ByAccountTx(ctx, tx, in.BankCode, in.AccountNumber, p.Environment)
	}
	if errors.Is(err, onramps.ErrNotFound) {
		why := fmt.Sprintf("no virtual account %s at bank %s in %s", in.AccountNumber, in.BankCode, p.Environment)
		back, err := s.giveBack(ctx, tx, id, p, in, nil, nil, why)
		if err != nil {
			return Result{}, err
		}
		return Result{Status: Rejected, Outcome: why + ": " + back, Refusal: onramps.ErrNotFound}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("partners: find the virtual account: %w", err)
	}
	merchant := o.Tenant.MerchantID
	d, err := s.cfg.Deposits.Receive(ctx, tx, o, in.Amount, n.Flag)
	if errors.Is(err, onramps.ErrNotActive) {
		why := fmt.Sprintf("%s NGN arrived in onramp %s, which is %s", in.Amount, o.ID, o.StatusAt(s.cfg.Now().UTC()))
		back, err := s.giveBack(ctx, tx, id, p, in, &merchant, &o.ID, why)
		if err != nil {
			return Result{}, err
		}
		return Result{Status: Rejected, Outcome: why + ": " + back, Refusal: onramps.ErrNotActive}, nil
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Status: Processed, Outcome: "deposit " + d.ID.String() + " received", DepositID: &d.ID, Deposit: &d}, nil
}

// payout applies a payout's outcome: the payout or transfer behind our reference is advanced,
// which asks the bank for its state under that reference and settles or fails it.
func (s *Service) payout(ctx context.Context, id uuid.UUID, p Partner, o providers.PayoutOutcome) (Result, error) {
	kind, rest, _ := strings.Cut(o.Reference, ":")
	advance := s.cfg.Payouts[kind]
	pid, err := uuid.Parse(rest)
	if o.Reference == "" || advance == nil || err != nil {
		return s.settle(ctx, id, Result{Status: Ignored, Outcome: fmt.Sprintf("not a payout of ours (reference %q)", o.Reference)})
	}
	if _, err := advance(ctx, pid); err != nil {
		return Result{}, err
	}
	if o.Status == providers.PayoutReversed {
		return s.reversal(ctx, id, p, kind, pid, o)
	}
	return s.settle(ctx, id, Result{Status: Processed, Outcome: fmt.Sprintf("%s %s: asked the bank and advanced it", o.Reference, strings.ToLower(o.Status))})
}

// reversal credits back a settled payout the bank reversed (Paystack documents
// transfer.reversed arriving after transfer.success): confirmed with the partner's API when it
// offers one, then the payout's reverser in the transaction that records the outcome. The
// partner's event id makes it once; the payout's state (only SETTLED is reversed) and the
// ledger reference make it once again.
func (s *Service) reversal(ctx context.Context, id uuid.UUID, p Partner, kind string, pid uuid.UUID, o providers.PayoutOutcome) (Result, error) {
	reverse := s.cfg.Reversals[kind]
	if reverse == nil {
		return s.reject(ctx, id, fmt.Sprintf("%s was reversed by the bank (%s): the funds are back in the partner balance; "+
			"reversals of %s payouts are not applied automatically", o.Reference, o.FailureReason, kind), nil)
	}
	if p.PayoutConfirmer != nil {
		got, err := p.PayoutConfirmer.VerifyPayout(ctx, o.Reference)
		switch {
		case errors.Is(err, paystack.ErrTransferNotFound), errors.Is(err, paystack.ErrMalformedEvent):
			return s.reject(ctx, id, "the partner's API does not confirm the reversal: "+err.Error(), nil)
		case err != nil:
			return Result{}, err // unavailable: retry
		case got.Amount != o.Amount:
			return s.reject(ctx, id, fmt.Sprintf("the partner's API holds %s for %s %s, the reversal says %s: nothing credited back",
				o.Reference, got.Amount, got.Amount.Asset, o.Amount), nil)
		case got.Status != providers.PayoutReversed:
			// The API may lag its notification: retried (about three days), then left
			// RECEIVED for the operator; nothing is credited until the API says reversed.
			return Result{}, fmt.Errorf("partners: the partner's API holds %s as %s, not reversed yet: will retry", o.Reference, got.Status)
		}
		if got.FailureReason != "" {
			o.FailureReason = got.FailureReason
		}
	}
	return s.apply(ctx, id, func(tx pgx.Tx) (Result, error) {
		applied, err := reverse(ctx, tx, pid, o.FailureReason)
		switch {
		case errors.Is(err, ErrNotReversible):
			return Result{Status: Rejected, Outcome: fmt.Sprintf("%s was reversed by the bank but is not settled here: %v", o.Reference, err)}, nil
		case err != nil:
			return Result{}, err
		case applied:
			return Result{Status: Processed, Outcome: fmt.Sprintf("%s reversed by the bank after settlement (%s): FAILED, funds credited back", o.Reference, o.FailureReason)}, nil
		}
		return Result{Status: Processed, Outcome: fmt.Sprintf("%s reversed by the bank: already FAILED with its funds returned", o.Reference)}, nil
	})
}

// crypto credits an asset confirmed at one of our deposit addresses, once the custodian
// confirms the address belongs to the reference.
func (s *Service) crypto(ctx context.Context, id uuid.UUID, p Partner, c CryptoDeposit) (Result, error) {
	addr, err := s.cfg.Providers.For(p.Environment).Custody.DepositAddress(ctx,
		providers.AddressRequest{Reference: c.Reference, Chain: c.Chain, Asset: c.Amount.Asset})
	if err != nil {
		return Result{}, err
	}
	if !strings.EqualFold(addr.Address, c.Address) {
		return s.reject(ctx, id, fmt.Sprintf("address %s is not the %s address of %s", c.Address, c.Chain, c.Reference), nil)
	}
	kind, rest, _ := strings.Cut(c.Reference, ":")
	owner, _, _ := strings.Cut(rest, ":")
	oid, err := uuid.Parse(owner)
	if err != nil {
		return s.reject(ctx, id, "deposit address reference "+c.Reference+" is not one of ours", nil)
	}
	desc := fmt.Sprintf("%s %s confirmed on %s (%s)", c.Amount, c.Amount.Asset, c.Chain, c.TxHash)
	return s.apply(ctx, id, func(tx pgx.Tx) (Result, error) {
		switch kind {
		case "merchant":
			_, err := balance.CreditFundingTx(ctx, tx, s.cfg.Events, balance.Funding{MerchantID: oid, Environment: p.Environment,
				Chain: string(c.Chain), Address: c.Address, TxHash: c.TxHash, Amount: c.Amount, Reference: "custody:" + id.String(),
				Description: desc, Metadata: map[string]string{"tx_hash": c.TxHash, "partner_event": id.String()}})
			if err != nil {
				return Result{}, err
			}
			return Result{Status: Processed, Outcome: "credited the merchant balance: " + desc}, nil
		case "customer":
			return s.creditCustomer(ctx, tx, id, p.Environment, oid, c, desc)
		case "offramp":
			return s.offramp(ctx, tx, p.Environment, oid, c, desc)
		}
		return Result{Status: Rejected, Outcome: "crypto at " + c.Reference + " addresses is not credited through custody notifications: " + desc}, nil
	})
}

// creditCustomer credits the customer's balance and completes the oldest open funding
// request for that address and asset, through their owner (customers.CreditFundingTx).
func (s *Service) creditCustomer(ctx context.Context, tx pgx.Tx, id uuid.UUID, env string, customer uuid.UUID, c CryptoDeposit, desc string) (Result, error) {
	got, err := customers.CreditFundingTx(ctx, tx, s.cfg.Events, customers.FundingArrival{CustomerID: customer, Environment: env,
		Chain: string(c.Chain), Address: c.Address, Amount: c.Amount, Reference: "custody:" + id.String(),
		Description: desc, Metadata: map[string]string{"tx_hash": c.TxHash, "partner_event": id.String(), "customer_id": customer.String()}})
	if errors.Is(err, customers.ErrNotFound) {
		return Result{Status: Rejected, Outcome: "no customer " + customer.String() + " in " + env + ": " + desc}, nil
	}
	if err != nil {
		return Result{}, err
	}
	out := "credited customer " + customer.String() + ": " + desc
	if got.Request != nil {
		out += "; funding request " + got.Request.String() + " completed"
	} else {
		out += "; no open funding request matched"
	}
	return Result{Status: Processed, Outcome: out}, nil
}

// offramp settles crypto at an offramp's address: converted and paid out in NGN, or credited
// to the customer, as the offramp says (offramps.Service.ReceiveCrypto). Refusals (the
// offramp not ACTIVE, another chain, asset or address) are Rejected for the operator; a
// missing price or an unavailable bank is retried.
func (s *Service) offramp(ctx context.Context, tx pgx.Tx, env string, id uuid.UUID, c CryptoDeposit, desc string) (Result, error) {
	if s.cfg.Offramps == nil {
		return Result{Status: Rejected, Outcome: "no offramp service: " + desc}, nil
	}
	var merchant uuid.UUID
	err := tx.QueryRow(ctx, `select merchant_id from offramps where id = $1 and environment = $2`, id, env).Scan(&merchant)
	if errors.Is(err, pgx.ErrNoRows) {
		return Result{Status: Rejected, Outcome: "no offramp " + id.String() + " in " + env + ": " + desc}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("partners: offramp: %w", err)
	}
	// A savepoint: a refusal rolls back the offramp's own writes, not the outcome recorded.
	sp, err := tx.Begin(ctx)
	if err != nil {
		return Result{}, err
	}
	d, err := s.cfg.Offramps.ReceiveCrypto(ctx, sp, payments.Tenant{MerchantID: merchant, Environment: env}, id, c.Chain, c.Address, c.Amount, c.TxHash)
	var coded interface{ APICode() string }
	var field interface{ APIField() string }
	var down *providers.UnavailableError
	switch {
	case err == nil:
		if err := sp.Commit(ctx); err != nil {
			return Result{}, err
		}
		return Result{Status: Processed, Outcome: "offramp " + id.String() + " deposit " + d.ID.String() + " (" + d.Status + "): " + desc,
			DepositID: &d.ID}, nil
	case errors.As(err, &down), errors.Is(err, offramps.ErrNoPrice), errors.Is(err, offramps.ErrCustomersUnavailable):
		_ = sp.Rollback(ctx)
		return Result{}, err // not now (the bank down or not configured, no price): the job retries
	case errors.As(err, &field), errors.As(err, &coded):
		_ = sp.Rollback(ctx)
		return Result{Status: Rejected, Outcome: "offramp " + id.String() + " refused the deposit (" + err.Error() + "): " + desc, Refusal: err}, nil
	default:
		_ = sp.Rollback(ctx)
		return Result{}, err
	}
}
