package main

import (
	"log/slog"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/jackc/pgx/v5/pgxpool"

	"svc/gateway/auth"
	gc "svc/gateway/checkout"
	gi "svc/gateway/invoices"
	gp "svc/gateway/products"
	"svc/payments/checkout"
	"svc/payments/invoices"
	"svc/payments/products"
	"svc/payments/providers/mail"
)

// commerce is products, invoices and checkout links with the hosted checkout page.
type commerce struct {
	products *gp.Routes
	invoices *gi.Routes
	checkout *gc.Routes
	// links completes checkout payments: the deposits service calls
	// links.OnDepositSettled in the transaction that settles a deposit.
	links *checkout.Service
}

// newCommerce builds the commerce services over the background's job client and event
// recorder. Paying a link needs the onramp machinery (payments/onramps, payments/deposits);
// until it is wired with links.UseOnramps, the hosted page answers "bank transfer payments
// are not available" (PROVIDER_UNAVAILABLE) and everything else works.
func newCommerce(cfg config, pool *pgxpool.Pool, bg *background) *commerce {
	inv := invoices.NewService(pool, bg.jobs, nil)
	links := checkout.NewService(pool, inv, bg.recorder, checkout.Config{BaseURL: cfg.PublicBaseURL})
	inv.UsePayLinks(links)
	return &commerce{
		products: gp.New(products.NewService(pool, nil)),
		invoices: gi.New(inv),
		checkout: gc.New(links).WithPayLimits(gc.PayLimits{ReadsPerMinute: cfg.PayReadLimit,
			WritesPerMinute: cfg.PayWriteLimit, ClientIP: clientIP(cfg)}),
		links: links,
	}
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
