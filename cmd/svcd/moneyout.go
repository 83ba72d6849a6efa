package main

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/gateway"
	gwdeposits "svc/gateway/deposits"
	gwofframps "svc/gateway/offramps"
	gwrecipients "svc/gateway/recipients"
	gwtransfers "svc/gateway/transfers"
	gwwithdrawals "svc/gateway/withdrawals"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/money"
	"svc/payments/offramps"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/payments/recipients"
	"svc/payments/transfers"
	"svc/payments/withdrawals"
	"svc/persistence/postgres"
)

// moneyOut is withdrawals, offramps (with their NGN payouts), recipients and transfers. Its
// services are built before the one river client (their workers go on it), so the client,
// the event recorder and the customer directory are bound afterwards (bind), and the rates
// service of money-in, which prices NGN and locks quotes, once it exists (useRates).
type moneyOut struct {
	pool        *pgxpool.Pool
	envs        providers.Environments
	jobs        lateJobs
	events      lateRecorder
	customers   lateCustomers
	rates       lateRates
	withdrawals *withdrawals.Service
	offramps    *offramps.Service
	transfers   *transfers.Service
	recipients  *recipients.Service
}

// registerMoneyOut builds the money-out services and adds their workers (queue money_out).
func registerMoneyOut(cfg config, pool *pgxpool.Pool, workers *river.Workers, queues map[string]int) (*moneyOut, error) {
	m := &moneyOut{pool: pool}
	// The same deterministic simulators as the customers' and money-in's; live unconfigured.
	m.envs = providers.Default(providers.SandboxConfig{BankCode: cfg.SandboxBankCode, BankName: cfg.SandboxBankName,
		KYCURL: cfg.PublicBaseURL + "/sandbox/kyc/"})
	m.withdrawals = withdrawals.New(pool, withdrawals.Config{Providers: m.envs, Events: &m.events, Jobs: &m.jobs})
	m.transfers = transfers.New(pool, transfers.Config{Providers: m.envs, Prices: &m.rates, Events: &m.events, Jobs: &m.jobs})
	m.offramps = offramps.New(pool, offramps.Config{Providers: m.envs, Rates: &m.rates, Customers: &m.customers, Events: &m.events, Jobs: &m.jobs})
	m.recipients = recipients.New(pool, nil)
	if err := withdrawals.Register(workers, m.withdrawals); err != nil {
		return nil, err
	}
	if err := transfers.Register(workers, m.transfers); err != nil {
		return nil, err
	}
	if err := offramps.Register(workers, m.offramps); err != nil {
		return nil, err
	}
	queues[withdrawals.Queue] = 20
	return m, nil
}

// bind gives the services the process's river client and event recorder.
func (m *moneyOut) bind(client *jobs.Client, recorder *events.Recorder) {
	m.jobs.c, m.events.r = client, recorder
	m.customers.d = offramps.Directory{Svc: customers.NewService(m.pool, recorder, m.envs, nil)}
}

// useRates prices transfers and locks offramp rates through money-in's rates service.
func (m *moneyOut) useRates(r *rates.Service) { m.rates.r = r }

// moneyOutRoutes are the money-out route sets.
type moneyOutRoutes struct {
	withdrawals *gwwithdrawals.Routes
	offramps    *gwofframps.Routes
	recipients  *gwrecipients.Routes
	transfers   *gwtransfers.Routes
}

// routes builds the route sets over keys (the process's idempotency-key store).
func (m *moneyOut) routes(keys *idempotency.Keys) moneyOutRoutes {
	return moneyOutRoutes{
		withdrawals: gwwithdrawals.New(m.withdrawals, keys),
		offramps:    gwofframps.New(m.offramps, keys),
		recipients:  gwrecipients.New(m.recipients, keys),
		transfers:   gwtransfers.New(m.transfers, keys),
	}
}

// dispatchDeposits routes offramp deposits of POST /payments/sandbox/deposits (a body with
// offramp_id) to the offramps edge, through the deposits edge's UseOfframps.
func (r moneyOutRoutes) dispatchDeposits(sets []gateway.RouteSet) {
	for _, s := range sets {
		if d, ok := s.(*gwdeposits.Routes); ok {
			d.UseOfframps(r.offramps.Dispatch)
		}
	}
}

type lateRates struct{ r *rates.Service }

func (l *lateRates) Lock(ctx context.Context, tx pgx.Tx, t rates.Tenant, id uuid.UUID, asset money.Asset, side, by string) (rates.Quote, error) {
	return l.r.Lock(ctx, tx, t, id, asset, side, by)
}

func (l *lateRates) MarketFor(env string, asset money.Asset, side string, size money.Amount) (rates.Price, error) {
	return l.r.MarketFor(env, asset, side, size)
}

type lateJobs struct{ c *jobs.Client }

func (l *lateJobs) InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return l.c.InsertTx(ctx, tx, args, opts)
}

type lateRecorder struct{ r *events.Recorder }

func (l *lateRecorder) Record(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, environment string, typ events.Type, data any) (uuid.UUID, error) {
	return l.r.Record(ctx, tx, merchantID, environment, typ, data)
}

type lateCustomers struct{ d offramps.Directory }

func (l *lateCustomers) Lookup(ctx context.Context, q postgres.Querier, t offramps.Tenant, id uuid.UUID) error {
	return l.d.Lookup(ctx, q, t, id)
}

func (l *lateCustomers) FindOrCreate(ctx context.Context, t offramps.Tenant, email, first, last string) (uuid.UUID, error) {
	return l.d.FindOrCreate(ctx, t, email, first, last)
}
