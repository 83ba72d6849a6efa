package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/gateway"
	gwbalance "svc/gateway/balance"
	gwdeposits "svc/gateway/deposits"
	gwidem "svc/gateway/idempotency"
	gwonramps "svc/gateway/onramps"
	gwrates "svc/gateway/rates"
	gwsandbox "svc/gateway/sandbox"
	"svc/payments/balance"
	"svc/payments/checkout"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/operator"
	"svc/payments/providers"
	"svc/payments/rates"
)

// moneyInConfig is the flags of rates, onramps, deposits and the merchant balance.
type moneyInConfig struct {
	RateSpread    string        // relative spread, e.g. 0.005
	RateReference string        // USDT-NGN=1600,USDC-NGN=1600,USD-NGN=1600
	RateTTL       time.Duration // validity of a quote id
	RateBand      string        // relative band around the reference a book price may lie in, e.g. 0.02
	RateQuoteSize int64         // units of the asset a quote without an amount is priced for
	Workers       int           // money_in jobs at once
}

func (c *moneyInConfig) flags(fs *flag.FlagSet, env *envDefaults) {
	fs.StringVar(&c.RateSpread, "rate-spread", env.str("rate-spread", "0.005"), "relative spread of quotes: buy = the asks' VWAP for the size x (1 + spread), sell = the bids' VWAP x (1 - spread)")
	fs.StringVar(&c.RateReference, "rate-reference", env.str("rate-reference", "USDT-NGN=1600,USDC-NGN=1600,USD-NGN=1600"), "NGN price per unit used when a book side is empty, and the centre of the band quotes must lie in (SYMBOL=PRICE,...)")
	fs.StringVar(&c.RateBand, "rate-band", env.str("rate-band", "0.02"), "relative band around the reference: only book levels within it price a quote; too little depth inside it answers 503 RATE_UNAVAILABLE")
	fs.Int64Var(&c.RateQuoteSize, "rate-quote-size", int64(env.int("rate-quote-size", rates.DefaultQuoteSize)), "units of the asset a quote is priced for (volume-weighted over the book) when the request names no amount")
	fs.DurationVar(&c.RateTTL, "rate-ttl", env.duration("rate-ttl", rates.DefaultTTL), "how long a rate id can be locked")
	fs.IntVar(&c.Workers, "money-in-workers", env.int("money-in-workers", 20), "deposit steps, onramp expiries and balance transfers worked at once")
}

func (c moneyInConfig) spread() (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(c.RateSpread)
	if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(1, 2)) >= 0 {
		return nil, fmt.Errorf("-rate-spread %q: want a fraction in [0, 0.5), e.g. 0.005 for 0.5%%", c.RateSpread)
	}
	return r, nil
}

func (c moneyInConfig) band() (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(c.RateBand)
	if !ok || r.Sign() <= 0 || r.Cmp(big.NewRat(1, 2)) > 0 {
		return nil, fmt.Errorf("-rate-band %q: want a fraction in (0, 0.5], e.g. 0.02 for +-2%%", c.RateBand)
	}
	return r, nil
}

func (c moneyInConfig) validate() error {
	var errs []error
	if _, err := c.spread(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.band(); err != nil {
		errs = append(errs, err)
	}
	if c.RateQuoteSize < 1 || c.RateQuoteSize > 1e9 {
		errs = append(errs, errors.New("-rate-quote-size must be between 1 and 1e9 units"))
	}
	if _, err := rates.ParseReferences(c.RateReference); err != nil {
		errs = append(errs, fmt.Errorf("-rate-reference: %w", err))
	}
	if c.RateTTL < time.Second {
		errs = append(errs, errors.New("-rate-ttl must be at least 1s"))
	}
	if c.Workers < 1 {
		errs = append(errs, errors.New("-money-in-workers must be at least 1"))
	}
	return errors.Join(errs...)
}

// moneyInJobs forwards job inserts to the river client, which is built after the workers that
// the money-in services belong to (the services enqueue their next steps).
type moneyInJobs struct{ c *jobs.Client }

func (l *moneyInJobs) InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return l.c.InsertTx(ctx, tx, args, opts)
}

func (l *moneyInJobs) InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	return l.c.InsertManyTx(ctx, tx, params)
}

// moneyIn is rates, onramps, deposits and the merchant balance (issue 8, items 5-9).
type moneyIn struct {
	cfg      config
	jobs     *moneyInJobs
	engines  map[string]rates.Exchange   // filled by attach
	engines2 map[string]balance.Exchange // filled by attach
	rates    *rates.Service
	onramps  *onramps.Service
	deposits *deposits.Service
	balance  *balance.Service
	keys     *idempotency.Keys
}

// registerMoneyIn builds the services and registers their workers (before the river client
// is built; the client is bound with bind, the engines with attach, both before start).
func registerMoneyIn(cfg config, pool *pgxpool.Pool, workers *river.Workers, queues map[string]int) (*moneyIn, error) {
	spread, err := cfg.MoneyIn.spread()
	if err != nil {
		return nil, err
	}
	refs, err := rates.ParseReferences(cfg.MoneyIn.RateReference)
	if err != nil {
		return nil, err
	}
	band, err := cfg.MoneyIn.band()
	if err != nil {
		return nil, err
	}
	m := &moneyIn{cfg: cfg, jobs: &moneyInJobs{}, engines: map[string]rates.Exchange{}, engines2: map[string]balance.Exchange{},
		keys: idempotency.New(pool, idempotency.Config{})}
	if m.rates, err = rates.New(pool, rates.Config{Exchanges: m.engines, Spread: spread, References: refs, TTL: cfg.MoneyIn.RateTTL,
		Band: band, QuoteSize: cfg.MoneyIn.RateQuoteSize}); err != nil {
		return nil, err
	}
	// The same deterministic simulators as the customers' and money-out's; live unconfigured.
	envs := providers.Default(providers.SandboxConfig{BankCode: cfg.SandboxBankCode, BankName: cfg.SandboxBankName,
		KYCURL: cfg.PublicBaseURL + "/sandbox/kyc/"})
	rec := events.NewRecorder(m.jobs)
	m.onramps = onramps.New(pool, onramps.Config{Rates: m.rates, Providers: envs, Customers: onramps.Directory, Events: rec, Jobs: m.jobs})
	m.deposits = deposits.New(pool, deposits.Config{Onramps: m.onramps, Rates: m.rates, Providers: envs, Events: rec, Jobs: m.jobs})
	m.balance = balance.New(pool, balance.Config{Exchanges: m.engines2, Providers: envs, Jobs: m.jobs})
	if err := onramps.Register(workers, m.onramps); err != nil {
		return nil, err
	}
	if err := deposits.Register(workers, m.deposits); err != nil {
		return nil, err
	}
	if err := balance.Register(workers, m.balance); err != nil {
		return nil, err
	}
	queues[onramps.Queue] = cfg.MoneyIn.Workers
	return m, nil
}

// bind gives the services the river client.
func (m *moneyIn) bind(c *jobs.Client) { m.jobs.c = c }

// attach gives the services the engines and the checkout (whose payments complete in the
// transaction that settles their deposit), and returns the routes.
func (m *moneyIn) attach(xs exchanges, links *checkout.Service) []gateway.RouteSet {
	for env, x := range xs {
		m.engines[string(env)] = x.engine
		m.engines2[string(env)] = x.engine
	}
	if links != nil {
		links.UseOnramps(checkoutOnramps{m})
		m.deposits.OnSettled(deposits.HookFunc(func(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error {
			if d.OnrampID == nil {
				return nil
			}
			at := time.Now()
			if d.SettledAt != nil {
				at = *d.SettledAt
			}
			return links.OnDepositSettled(ctx, tx, checkout.SettledDeposit{ID: d.ID.String(), OnrampID: d.OnrampID.String(),
				Tenant:    checkout.Tenant{MerchantID: d.Tenant.MerchantID, Environment: d.Tenant.Environment},
				AmountNGN: d.Amount.Minor, SettledAt: at})
		}))
	}
	idem := gwidem.Middleware(m.keys)
	return []gateway.RouteSet{gwrates.New(m.rates), gwonramps.New(m.onramps, idem), gwdeposits.New(m.deposits), gwbalance.New(m.balance, idem),
		gwsandbox.New(operator.NewDeposits(m.deposits))} // issue 11: sandbox reverse/clear/reject
}

// checkoutOnramps is the onramp machinery a checkout link is paid through.
type checkoutOnramps struct{ m *moneyIn }

func (c checkoutOnramps) CreateTemporary(ctx context.Context, tx pgx.Tx, req checkout.OnrampRequest) (checkout.Onramp, error) {
	asset, err := money.ParseAsset(req.Currency)
	if err != nil {
		return checkout.Onramp{}, err
	}
	o, price, err := c.m.onramps.CreateForAmount(ctx, tx, onramps.Tenant{MerchantID: req.Tenant.MerchantID, Environment: req.Tenant.Environment},
		money.New(asset, req.Amount), req.Reference)
	if err != nil {
		return checkout.Onramp{}, err
	}
	out := checkout.Onramp{ID: o.ID.String(), AccountNumber: o.AccountNumber, BankName: o.BankName, AccountName: o.AccountName,
		AmountNGN: o.Amount.Minor, ExpiresAt: *o.ExpiresAt}
	if price > 0 {
		out.Rate = rates.FormatPrice(price)
	}
	return out, nil
}

func (c checkoutOnramps) SimulateDeposit(ctx context.Context, t checkout.Tenant, onrampID string) error {
	id, err := uuid.Parse(onrampID)
	if err != nil {
		return onramps.ErrNotFound
	}
	_, err = c.m.deposits.Simulate(ctx, onramps.Tenant{MerchantID: t.MerchantID, Environment: t.Environment}, deposits.SimulateInput{OnrampID: id})
	return err
}
