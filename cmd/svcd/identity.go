package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/gateway/auth"
	"svc/gateway/ratelimit"
	"svc/identity"
	"svc/payments/providers/mail"
)

// newIdentity builds identity and access: the identity service (merchants, sessions, API
// keys: svc/identity), started (its key cache), and its HTTP side (gateway/auth) over it;
// with --demo it seeds the demo merchant and returns its id (else uuid.Nil). The caller
// stops the identity service it is given.
func newIdentity(ctx context.Context, cfg config, pool *pgxpool.Pool, log *slog.Logger, stdout io.Writer) (*identity.Service, *auth.Service, uuid.UUID, error) {
	ids, err := newIdentityService(cfg, pool, log)
	if err != nil {
		return nil, nil, uuid.Nil, err
	}
	svc, err := newAuth(cfg, pool, ids, log)
	if err != nil {
		return nil, nil, uuid.Nil, err
	}
	ids.Start()
	if !cfg.Demo {
		return ids, svc, uuid.Nil, nil
	}
	if err := seedDemo(ctx, cfg, ids, stdout); err != nil {
		ids.Stop()
		return nil, nil, uuid.Nil, err
	}
	m, err := identity.NewStore(pool).Merchant(ctx, demoEmail)
	if err != nil {
		ids.Stop()
		return nil, nil, uuid.Nil, fmt.Errorf("demo merchant: %w", err)
	}
	return ids, svc, m.ID, nil
}

// demoEmail is the merchant --demo seeds (and reuses on later starts).
const demoEmail = "demo@svc.local"

// demoRateLimit is the demo merchant's requests per minute: enough to try a load test.
const demoRateLimit = 100_000

// newIdentityService builds the identity service (svc/identity; the caller starts and stops
// it) with its mail sender (SMTP, or the outbox when no server is configured). An empty
// --jwt-secret gets a random one with a warning: fine on a laptop, wrong for live use, where
// tokens must survive restarts and be shared by every process.
func newIdentityService(cfg config, pool *pgxpool.Pool, log *slog.Logger) (*identity.Service, error) {
	var sender mail.Sender
	if cfg.SMTPAddr != "" {
		sender = &mail.SMTP{Addr: cfg.SMTPAddr, From: cfg.SMTPFrom, Username: cfg.SMTPUsername, Password: cfg.SMTPPassword}
		log.Info("mail: sending through SMTP", "addr", cfg.SMTPAddr, "from", cfg.SMTPFrom)
	} else {
		sender = &mail.Outbox{DB: pool, Log: log, LogBody: cfg.MailLogBody || cfg.Demo}
		log.Info("mail: no --smtp-addr; mail is kept in the mail_outbox table (read it with `svc mail outbox`)")
	}
	secret := []byte(cfg.JWTSecret)
	if len(secret) == 0 {
		secret = []byte(rand.Text() + rand.Text())
		log.Warn("no --jwt-secret (SVC_JWT_SECRET): using a random one; access tokens and one-time codes die on restart and are not shared between processes. Set one for live use.")
	}
	mailer := identity.MailerFunc(func(ctx context.Context, m identity.Message) error { return sender.Send(ctx, mail.Message(m)) })
	return identity.New(pool, identity.Config{JWTSecret: secret, DefaultRateLimit: cfg.RateLimitDefault}, mailer, log)
}

// newAuth builds the HTTP side of identity and access (gateway/auth) over id.
func newAuth(cfg config, pool *pgxpool.Pool, id *identity.Service, log *slog.Logger) (*auth.Service, error) {
	ac := auth.Config{AuthRateLimit: cfg.AuthRateLimit, TrustedProxies: splitList(cfg.TrustedProxies)}
	if cfg.Cluster.SharedRateLimit {
		ac.Shared = ratelimit.NewShared(pool, ratelimit.SharedOptions{Log: log})
	}
	return auth.New(id, ac, log)
}

// seedDemo makes (or reuses) the demo merchant and prints a fresh sandbox key.
func seedDemo(ctx context.Context, cfg config, ids *identity.Service, stdout io.Writer) error {
	password, key, err := ids.DemoMerchant(ctx, demoEmail, demoRateLimit)
	if err != nil {
		return fmt.Errorf("demo merchant: %w", err)
	}
	base := cfg.PublicBaseURL
	fmt.Fprintln(stdout, "")
	fmt.Fprintln(stdout, "=== demo sandbox merchant ===")
	fmt.Fprintf(stdout, "email:    %s\n", demoEmail)
	if password != "" {
		fmt.Fprintf(stdout, "password: %s   (shown once; reset it with /v1/auth/forgot-password)\n", password)
	}
	fmt.Fprintf(stdout, "API key:  %s   (sandbox, %d requests/minute)\n", key, demoRateLimit)
	fmt.Fprintf(stdout, "try:      curl -s %s/v1/auth/me -H 'X-Api-Key: %s'\n\n", base, key)
	return nil
}
