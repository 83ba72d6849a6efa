package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	gwwebhooks "svc/gateway/webhooks"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/invoices"
	"svc/payments/jobs"
	"svc/payments/providers/mail"
	"svc/payments/webhooks"
)

// background is the one river client of the process (every domain's workers) and what the
// handlers need from it.
type background struct {
	jobs     *jobs.Client
	recorder *events.Recorder // other domains record their events through this
	webhooks *gwwebhooks.Routes
	// webhookWorker delivers webhooks; its counters feed /metrics.
	webhookWorker *webhooks.Worker
	moneyOut      *moneyOut // withdrawals, offramps, transfers: their workers are on jobs
	moneyIn       *moneyIn  // rates, onramps, deposits, merchant balance: their workers are on jobs
}

// newBackground registers every domain's workers on one river client. A domain adds its
// workers to `workers` and its queue to `queues` here.
func newBackground(cfg config, pool *pgxpool.Pool, log *slog.Logger) (*background, error) {
	cipher, err := webhookCipher(cfg, log)
	if err != nil {
		return nil, err
	}
	var roots *x509.CertPool
	if cfg.WebhookCAFile != "" {
		if roots, err = webhooks.LoadCAFile(cfg.WebhookCAFile); err != nil {
			return nil, err
		}
	}
	if cfg.BVNHMACKey == "" {
		log.Warn("customers: NO --bvn-hmac-key (SVC_BVN_HMAC_KEY) SET: BVN digests are keyed with a development key derived " +
			"from the database URL. Generate a key with `openssl rand -hex 32` for any real deployment.")
	}
	if cfg.WebhookAllowInsecure {
		log.Warn("webhooks: --webhook-allow-insecure is on: http endpoints and loopback/private addresses are allowed (local development only)")
	}
	sender := webhooks.NewSender(webhooks.SenderConfig{
		AllowInsecure: cfg.WebhookAllowInsecure, RootCAs: roots, UserAgent: "svc-webhooks/" + version,
	})

	workers := river.NewWorkers()
	queues := map[string]int{}
	worker := webhooks.NewWorker(pool, cipher, sender, webhooks.WorkerConfig{
		RetryBase: cfg.WebhookRetryBase, Logger: log.With("component", "webhooks"),
	})
	if err := webhooks.Register(workers, worker); err != nil {
		return nil, err
	}
	queues[events.Queue] = cfg.WebhookWorkers
	if err := invoices.Register(workers, pool, commerceMail(cfg, pool, log), log.With("component", "invoices"), nil); err != nil {
		return nil, err
	}
	queues[invoices.Queue] = 5

	mo, err := registerMoneyOut(cfg, pool, workers, queues)
	if err != nil {
		return nil, err
	}

	mi, err := registerMoneyIn(cfg, pool, workers, queues)
	if err != nil {
		return nil, err
	}

	// Housekeeping (issue 15): expired quotes and idempotency keys, outbox bodies.
	keys := idempotency.New(pool, idempotency.Config{})
	periodic, err := jobs.RegisterHousekeeping(workers, queues, jobs.HousekeepingConfig{
		Interval: cfg.HousekeepingInterval, Logger: log.With("component", "housekeeping"),
		Purgers: []jobs.Purger{
			{Name: "rate_quotes", Purge: mi.rates.Purge},
			{Name: "idempotency_keys", Purge: func(ctx context.Context, _ time.Time) (int64, error) { return keys.Purge(ctx) }},
			{Name: "mail_outbox", Purge: func(ctx context.Context, now time.Time) (int64, error) { return mail.PurgeOutbox(ctx, pool, now) }},
		},
	})
	if err != nil {
		return nil, err
	}

	client, err := jobs.New(pool, jobs.Config{
		Workers: workers, Queues: queues, Logger: log.With("component", "jobs"),
		FetchCooldown: 20 * time.Millisecond, PeriodicJobs: periodic,
	})
	if err != nil {
		return nil, err
	}
	recorder := events.NewRecorder(client)
	mo.bind(client, recorder)
	mi.bind(client)
	return &background{
		jobs:     client,
		recorder: recorder,
		webhooks: gwwebhooks.New(webhooks.NewService(pool, cipher, sender)),
		moneyOut: mo,
		moneyIn:  mi,

		webhookWorker: worker,
	}, nil
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

// start runs the job workers until stop.
func (b *background) start(ctx context.Context) error {
	return b.jobs.Start(context.WithoutCancel(ctx))
}

// stop lets running jobs finish within timeout, then cancels them (they are retried later).
func (b *background) stop(timeout time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := b.jobs.Stop(ctx); err != nil {
		log.Warn("jobs: soft stop timed out; cancelling running jobs", "error", err)
		hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer hcancel()
		_ = b.jobs.StopAndCancel(hctx)
	}
}
