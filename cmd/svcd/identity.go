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

// newIdentity builds identity and access (merchants, sessions, API keys: svc/identity, and
// its HTTP side gateway/auth) and starts the identity service's key cache; with --demo it
// seeds the demo merchant and returns its id (else uuid.Nil). The caller stops the identity
// service (svc.Identity().Stop()).
func newIdentity(ctx context.Context, cfg config, pool *pgxpool.Pool, log *slog.Logger, stdout io.Writer) (*auth.Service, uuid.UUID, error) {
	svc, err := newAuth(cfg, pool, log)
	if err != nil {
		return nil, uuid.Nil, err
	}
	svc.Identity().Start()
	if !cfg.Demo {
		return svc, uuid.Nil, nil
	}
	if err := seedDemo(ctx, cfg, svc, stdout); err != nil {
		svc.Identity().Stop()
		return nil, uuid.Nil, err
	}
	m, err := identity.NewStore(pool).Merchant(ctx, demoEmail)
	if err != nil {
		svc.Identity().Stop()
		return nil, uuid.Nil, fmt.Errorf("demo merchant: %w", err)
	}
	return svc, m.ID, nil
}

// demoEmail is the merchant --demo seeds (and reuses on later starts).
const demoEmail = "demo@svc.local"

// demoRateLimit is the demo merchant's requests per minute: enough to try a load test.
const demoRateLimit = 100_000

// newAuth builds identity and access: the mail sender (SMTP, or the outbox when no server
// is configured), the identity service (svc/identity; the caller starts and stops it:
// svc.Identity()) and its HTTP side. An empty --jwt-secret gets a random one with a warning:
// fine on a laptop, wrong for live use, where tokens must survive restarts and be shared
// by every process.
func newAuth(cfg config, pool *pgxpool.Pool, log *slog.Logger) (*auth.Service, error) {
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
	id, err := identity.New(pool, identity.Config{JWTSecret: secret, DefaultRateLimit: cfg.RateLimitDefault}, mailer, log)
	if err != nil {
		return nil, err
	}
	ac := auth.Config{AuthRateLimit: cfg.AuthRateLimit, TrustedProxies: splitList(cfg.TrustedProxies)}
	if cfg.Cluster.SharedRateLimit {
		ac.Shared = ratelimit.NewShared(pool, ratelimit.SharedOptions{Log: log})
	}
	return auth.New(id, ac, log)
}

// seedDemo makes (or reuses) the demo merchant and prints a fresh sandbox key.
func seedDemo(ctx context.Context, cfg config, svc *auth.Service, stdout io.Writer) error {
	password, key, err := svc.Identity().DemoMerchant(ctx, demoEmail, demoRateLimit)
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
