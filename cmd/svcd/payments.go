package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/big"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth"
	gwbalance "svc/gateway/balance"
	gc "svc/gateway/checkout"
	gwcustomers "svc/gateway/customers"
	gwdeposits "svc/gateway/deposits"
	gwevents "svc/gateway/events"
	gwidem "svc/gateway/idempotency"
	gi "svc/gateway/invoices"
	gwofframps "svc/gateway/offramps"
	gwonramps "svc/gateway/onramps"
	gp "svc/gateway/products"
	gwrates "svc/gateway/rates"
	gwrecipients "svc/gateway/recipients"
	gwsandbox "svc/gateway/sandbox"
	gwtransfers "svc/gateway/transfers"
	gwva "svc/gateway/virtualaccounts"
	gwwebhooks "svc/gateway/webhooks"
	gwwithdrawals "svc/gateway/withdrawals"
	"svc/payments/balance"
	"svc/payments/checkout"
	"svc/payments/customers"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/invoices"
	"svc/payments/jobs"
	"svc/payments/moneyout"
	"svc/payments/offramps"
	"svc/payments/onramps"
	"svc/payments/operator"
	"svc/payments/products"
	"svc/payments/providers"
	"svc/payments/providers/mail"
	"svc/payments/rates"
	"svc/payments/recipients"
	"svc/payments/transfers"
	"svc/payments/virtualaccounts"
	"svc/payments/webhooks"
	"svc/payments/withdrawals"
)

// jobsFetchCooldown is both river clients' FetchCooldown: the shortest time between two
// fetches of a queue, which also spaces each client's insert notifications per queue.
const jobsFetchCooldown = 20 * time.Millisecond

// paymentsSubsystem is every payments domain over PostgreSQL: webhooks, customers and
// virtual accounts, money in (rates, onramps, deposits, merchant balance), commerce
// (products, invoices, checkout links), money out (withdrawals, offramps, recipients,
// transfers) and housekeeping, with their route sets and the river client that works
// every domain's jobs.
type paymentsSubsystem struct {
	routes []gateway.RouteSet
	jobs   *jobs.Client // works every domain's jobs, from start until stop
	// For /metrics: webhook deliveries and the hosted checkout page's rate limiter.
	webhookStats   func() webhooks.DeliveryStats
	payLimited     func() uint64
	partnerLimited func() uint64 // the partner-events route's per-address limiter
	custody        *custodyParts // live EVM custody (nil: none configured)
	treasury       *treasuryParts
}

// domainJobs collects what each domain registers on the working client.
type domainJobs struct {
	workers *river.Workers
	queues  map[string]int // queue -> jobs worked at once
}

// newPayments builds the payments domains in dependency order. Every service enqueues its
// jobs, in its own transactions, through one insert-only river client built first; each
// domain registers its workers as it is built; the working client is built last, with all
// of them, and runs from start until stop.
func newPayments(cfg config, pool *pgxpool.Pool, xs map[api.Environment]engineAPI, log *slog.Logger) (*paymentsSubsystem, error) {
	inserter, err := jobs.New(pool, jobs.Config{FetchCooldown: jobsFetchCooldown, Logger: log.With("component", "jobs")})
	if err != nil {
		return nil, err
	}
	rec := events.NewRecorder(inserter)
	// The deterministic simulators in the sandbox; in live, the adapters configured (the
	// Paystack bank with SVC_PAYSTACK_SECRET_KEY), else 503 PROVIDER_UNAVAILABLE.
	live, ps, err := liveProviders(cfg, log)
	if err != nil {
		return nil, err
	}
	// Live crypto through the EVM custody, a custodian per configured chain (issue 31).
	cust, err := newCustody(cfg, pool, log)
	if err != nil {
		return nil, err
	}
	if cust != nil {
		live.Custody = cust.custody()
	}
	envs := providers.Environments{Live: live, Sandbox: providers.NewSandbox(providers.SandboxConfig{BankCode: cfg.SandboxBankCode,
		BankName: cfg.SandboxBankName, KYCURL: cfg.PublicBaseURL + "/sandbox/kyc/"})}
	keys := idempotency.New(pool, idempotency.Config{})
	idem := gwidem.Middleware(keys)
	dj := domainJobs{workers: river.NewWorkers(), queues: map[string]int{}}
	p := &paymentsSubsystem{custody: cust}

	// Webhooks: endpoints and the delivery worker of every recorded event.
	hooks, worker, err := newWebhooks(cfg, pool, log, dj)
	if err != nil {
		return nil, err
	}
	p.webhookStats = worker.Stats

	// Customers (KYC) and virtual accounts.
	cs, err := newCustomerService(cfg, pool, rec, envs, log)
	if err != nil {
		return nil, err
	}

	// Money in: rates over the exchanges' books, onramps, then commerce's pay links and the
	// completer of checkout payments, deposits (which complete those payments in the
	// settling transaction), the checkout paid through onramps and deposits, the balance.
	late := &lateTreasury{}
	rs, err := newRates(cfg, pool, xs, late)
	if err != nil {
		return nil, err
	}
	// The treasury executes the conversions on the books (issue 27): its desk quotes what
	// the band cannot price, hedges, and the market makers keep the sandbox books two-sided.
	if p.treasury, err = newTreasury(cfg, pool, xs, rs, late, log); err != nil {
		return nil, err
	}
	ons := onramps.New(pool, onramps.Config{Rates: rs, Providers: envs, Customers: onramps.Directory, Events: rec})
	inv := invoices.NewService(pool, inserter, checkout.NewInvoiceLinks(cfg.PublicBaseURL, nil), nil)
	deps := deposits.New(pool, deposits.Config{Onramps: ons, Rates: rs, Providers: envs, Events: rec, Jobs: inserter,
		Settled: []deposits.SettlementHook{checkout.NewCompleter(rec, nil)}, SettleInConversion: true, ConvertOnReceipt: true,
		Logger: log.With("component", "deposits")})
	links := checkout.NewService(pool, inv, checkout.Config{BaseURL: cfg.PublicBaseURL,
		Onramps: checkout.MoneyIn{Onramps: ons, Deposits: deps}})
	bal := balance.New(pool, balance.Config{Exchanges: balanceExchanges(xs), Providers: envs, Jobs: inserter})
	for _, err := range []error{onramps.Register(dj.workers, ons), deposits.Register(dj.workers, deps), balance.Register(dj.workers, bal),
		invoices.Register(dj.workers, pool, commerceMail(cfg, pool, log), log.With("component", "invoices"), nil)} {
		if err != nil {
			return nil, err
		}
	}
	dj.queues[onramps.Queue] = cfg.MoneyIn.Workers
	dj.queues[invoices.Queue] = 5

	// Money out: withdrawals, transfers priced by the rates, offramps (rates locked, the
	// payer found or created among the customers), recipients.
	out := moneyout.Deps{Providers: envs, Events: rec, Jobs: inserter}
	wds := withdrawals.New(pool, withdrawals.Config{Deps: out})
	tfs := transfers.New(pool, transfers.Config{Deps: out, Prices: rs})
	ofs := offramps.New(pool, offramps.Config{Deps: out, Rates: rs, Customers: offramps.Directory{Svc: cs}})
	for _, err := range []error{withdrawals.Register(dj.workers, wds), transfers.Register(dj.workers, tfs), offramps.Register(dj.workers, ofs)} {
		if err != nil {
			return nil, err
		}
	}
	dj.queues[moneyout.Queue] = 20

	// Money arriving: partners' notifications (issue 19), processed through deposits,
	// offramp payouts and transfers; the sandbox's simulations post through it too.
	inbound, err := newInbound(cfg, pool, ps, cust, envs, rec, inserter, deps, ons, ofs, tfs, cs, dj, log)
	if err != nil {
		return nil, err
	}
	cust.setInbound(inbound)

	// Housekeeping (issue 15): expired quotes and idempotency keys, outbox bodies, and since
	// issue 27 the TEMPORARY onramps past their expiry.
	periodic, err := jobs.RegisterHousekeeping(dj.workers, dj.queues, jobs.HousekeepingConfig{
		Interval: cfg.HousekeepingInterval, Logger: log.With("component", "housekeeping"),
		Purgers: housekeepingPurgers(pool, rs, keys, ons),
	})
	if err != nil {
		return nil, err
	}

	// The working client: every domain's workers.
	p.jobs, err = jobs.New(pool, jobs.Config{Workers: dj.workers, Queues: dj.queues, Logger: log.With("component", "jobs"),
		FetchCooldown: jobsFetchCooldown, PeriodicJobs: periodic})
	if err != nil {
		return nil, err
	}

	pay := gc.New(links).WithPayLimits(gc.PayLimits{ReadsPerMinute: cfg.PayReadLimit, WritesPerMinute: cfg.PayWriteLimit,
		ClientIP: clientIP(cfg)})
	p.payLimited = pay.RateLimited
	offrampRoutes := gwofframps.New(ofs, keys, sandboxOfframps(cfg, ofs, inbound))
	partnerEvents := partnerRoutes(cfg, inbound) // issue 19: POST /v1/partners/{provider}/events
	p.partnerLimited = partnerEvents.RateLimited
	p.routes = []gateway.RouteSet{hooks.Idempotent(idem), gwevents.New(events.NewService(pool, rec), gwevents.Options{Idempotency: idem}),
		gp.New(products.NewService(pool, nil)).Idempotent(idem), gi.New(inv).Idempotent(idem), pay.Idempotent(idem),
		gwcustomers.New(cs, idem), gwcustomers.NewKYC(cs, clientIP(cfg)), gwva.New(virtualaccounts.NewService(pool, rec, envs, nil), idem),
		gwwithdrawals.New(wds, keys), offrampRoutes, gwrecipients.New(recipients.New(pool, nil), keys), gwtransfers.New(tfs, keys),
		gwrates.New(rs), gwonramps.New(ons, idem), gwdeposits.New(sandboxDeposits(cfg, deps, ons, inbound), offrampRoutes.Dispatch), gwbalance.New(bal, idem),
		gwsandbox.New(operator.NewDeposits(deps)), // issue 11: sandbox reverse/clear/reject
		partnerEvents,
	}
	return p, nil
}

// housekeepingPurgers is what the housekeeping job runs each period. onramps_expired stores
// EXPIRED on the TEMPORARY onramps past their expiry (issue 27: one sweep, not a job per
// onramp); every read derives EXPIRED from expires_at, so the interval's lag is not seen.
func housekeepingPurgers(pool *pgxpool.Pool, rs *rates.Service, keys *idempotency.Keys, ons *onramps.Service) []jobs.Purger {
	return []jobs.Purger{
		{Name: "rate_quotes", Purge: rs.Purge},
		{Name: "idempotency_keys", Purge: func(ctx context.Context, _ time.Time) (int64, error) { return keys.Purge(ctx) }},
		{Name: "mail_outbox", Purge: func(ctx context.Context, now time.Time) (int64, error) { return mail.PurgeOutbox(ctx, pool, now) }},
		{Name: "onramps_expired", Purge: ons.ExpireDue},
	}
}

// start runs the job workers until stop.
func (p *paymentsSubsystem) start(ctx context.Context) error {
	p.treasury.start(ctx)
	p.custody.start(ctx)
	return p.jobs.Start(context.WithoutCancel(ctx))
}

// stop lets running jobs finish within timeout, then cancels them (they are retried later).
// The treasury's and the custody's loops are waited for within the same timeout (one
// shutdown deadline).
func (p *paymentsSubsystem) stop(timeout time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	p.treasury.stop(ctx, log)
	p.custody.stop(ctx, log)
	if err := p.jobs.Stop(ctx); err != nil {
		log.Warn("jobs: soft stop timed out; cancelling running jobs", "error", err)
		hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer hcancel()
		_ = p.jobs.StopAndCancel(hctx)
	}
}

// newWebhooks builds the endpoints' routes and the delivery worker, registered on dj.
func newWebhooks(cfg config, pool *pgxpool.Pool, log *slog.Logger, dj domainJobs) (*gwwebhooks.Routes, *webhooks.Worker, error) {
	cipher, err := webhookCipher(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	var roots *x509.CertPool
	if cfg.WebhookCAFile != "" {
		if roots, err = webhooks.LoadCAFile(cfg.WebhookCAFile); err != nil {
			return nil, nil, err
		}
	}
	if cfg.WebhookAllowInsecure {
		log.Warn("webhooks: --webhook-allow-insecure is on: http endpoints and loopback/private addresses are allowed (local development only)")
	}
	sender := webhooks.NewSender(webhooks.SenderConfig{
		AllowInsecure: cfg.WebhookAllowInsecure, RootCAs: roots, UserAgent: "svc-webhooks/" + version,
	})
	worker := webhooks.NewWorker(pool, cipher, sender, webhooks.WorkerConfig{
		RetryBase: cfg.WebhookRetryBase, Logger: log.With("component", "webhooks"),
	})
	if err := webhooks.Register(dj.workers, worker); err != nil {
		return nil, nil, err
	}
	dj.queues[events.Queue] = cfg.WebhookWorkers
	return gwwebhooks.New(webhooks.NewService(pool, cipher, sender)), worker, nil
}

// webhookCipher uses --webhook-secret-key; without it, a development key derived from the
// database URL, loudly, and live endpoints are refused.
func webhookCipher(cfg config, log *slog.Logger) (*webhooks.Cipher, error) {
	if cfg.WebhookSecretKey == "" {
		log.Warn("webhooks: NO --webhook-secret-key (SVC_WEBHOOK_SECRET_KEY) SET: endpoint secrets are encrypted with a " +
			"development key derived from the database URL, and live endpoints cannot be created. " +
			"Generate a key with `openssl rand -hex 32` for any real deployment.")
		return webhooks.DevCipher(cfg.DatabaseURL), nil
	}
	key, err := webhooks.ParseKey(cfg.WebhookSecretKey)
	if err != nil {
		return nil, fmt.Errorf("--webhook-secret-key: %w", err)
	}
	return webhooks.NewCipher(key)
}

// newCustomerService builds the customers service with the BVN digest key: --bvn-hmac-key,
// or (loudly) a development key derived from the database URL.
func newCustomerService(cfg config, pool *pgxpool.Pool, rec *events.Recorder, envs providers.Environments, log *slog.Logger) (*customers.Service, error) {
	bvnKey := customers.DevBVNKey(cfg.DatabaseURL)
	if cfg.BVNHMACKey == "" {
		log.Warn("customers: NO --bvn-hmac-key (SVC_BVN_HMAC_KEY) SET: BVN digests are keyed with a development key derived " +
			"from the database URL. Generate a key with `openssl rand -hex 32` for any real deployment.")
	} else {
		k, err := customers.ParseBVNKey(cfg.BVNHMACKey)
		if err != nil {
			return nil, fmt.Errorf("--bvn-hmac-key: %w", err)
		}
		bvnKey = k
	}
	return customers.NewService(pool, rec, envs, nil).WithBVNKey(bvnKey)
}

// newRates builds the rates service over each environment's book.
func newRates(cfg config, pool *pgxpool.Pool, xs map[api.Environment]engineAPI, t rates.Treasury) (*rates.Service, error) {
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
	books := make(map[string]rates.Exchange, len(xs))
	for env, x := range xs {
		books[string(env)] = x
	}
	return rates.New(pool, rates.Config{Exchanges: books, Spread: spread, References: refs, TTL: cfg.MoneyIn.RateTTL,
		Band: band, QuoteSize: cfg.MoneyIn.RateQuoteSize, Treasury: t})
}

// balanceExchanges are the engines merchant balance transfers credit and debit.
func balanceExchanges(xs map[api.Environment]engineAPI) map[string]balance.Exchange {
	out := make(map[string]balance.Exchange, len(xs))
	for env, x := range xs {
		out[string(env)] = x
	}
	return out
}

// clientIP finds a request's client address as identity and access does (behind the
// trusted proxies, from X-Forwarded-For); the configuration was validated at start.
func clientIP(cfg config) func(*fasthttp.RequestCtx) netip.Addr {
	c, err := auth.NewClientIP(splitList(cfg.TrustedProxies))
	if err != nil {
		return nil // the peer address
	}
	return c.Of
}

// commerceMail is where invoices are emailed from: SMTP when configured, else the outbox.
func commerceMail(cfg config, pool *pgxpool.Pool, log *slog.Logger) mail.Sender {
	if cfg.SMTPAddr != "" {
		return &mail.SMTP{Addr: cfg.SMTPAddr, From: cfg.SMTPFrom, Username: cfg.SMTPUsername, Password: cfg.SMTPPassword}
	}
	return &mail.Outbox{DB: pool, Log: log.With("component", "invoices"), LogBody: cfg.MailLogBody || cfg.Demo}
}

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
	fs.StringVar(&c.RateReference, "rate-reference", env.str("rate-reference", "USDT-NGN=1600,USDC-NGN=1600,USD-NGN=1600"), "the operator's NGN price per unit (SYMBOL=PRICE,...): the band's centre until the book gives samples (the reference then follows the book's depth-weighted mid), and again when no sample came for 15 min")
	fs.StringVar(&c.RateBand, "rate-band", env.str("rate-band", "0.02"), "relative band around the reference: only book levels within it price a quote (others are ignored as if absent); too little depth inside it is quoted by the treasury within its limits, else 503 RATE_UNAVAILABLE")
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
