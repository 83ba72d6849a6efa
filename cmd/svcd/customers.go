package main

import (
	"github.com/jackc/pgx/v5/pgxpool"

	gwcustomers "svc/gateway/customers"
	gwidem "svc/gateway/idempotency"
	gwva "svc/gateway/virtualaccounts"
	"svc/payments/customers"
	"svc/payments/idempotency"
	"svc/payments/providers"
	"svc/payments/virtualaccounts"
)

// customerRoutes are the customers and virtual accounts routes and what they share: the
// providers of each environment and the idempotency-key store (other payments domains use
// the same two).
type customerRoutes struct {
	providers       providers.Environments
	keys            *idempotency.Keys
	customers       *gwcustomers.Routes
	virtualAccounts *gwva.Routes
}

// newCustomers builds the customer and virtual-account services: sandbox simulators for
// every provider, and nothing configured in live (503 PROVIDER_UNAVAILABLE).
func newCustomers(cfg config, pool *pgxpool.Pool, bg *background) *customerRoutes {
	envs := providers.Default(providers.SandboxConfig{
		BankCode: cfg.SandboxBankCode, BankName: cfg.SandboxBankName,
		KYCURL: cfg.PublicBaseURL + "/sandbox/kyc/",
	})
	keys := idempotency.New(pool, idempotency.Config{})
	idem := gwidem.Middleware(keys)
	bvnKey := customers.DevBVNKey(cfg.DatabaseURL) // warned about in newBackground
	if cfg.BVNHMACKey != "" {
		bvnKey, _ = customers.ParseBVNKey(cfg.BVNHMACKey) // checked by config.validate
	}
	cs, _ := customers.NewService(pool, bg.recorder, envs, nil).WithBVNKey(bvnKey) // 32 bytes either way
	return &customerRoutes{
		providers:       envs,
		keys:            keys,
		customers:       gwcustomers.New(cs, idem),
		virtualAccounts: gwva.New(virtualaccounts.NewService(pool, bg.recorder, envs, nil), idem),
	}
}
