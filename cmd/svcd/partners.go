package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"svc/cmd/internal/cli"
	gwpartners "svc/gateway/partners"
	"svc/payments/customers"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/offramps"
	"svc/payments/onramps"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/transfers"
)

// partnersConfig is the live partners' settings and the partner-events route's (issue 19,
// docs/live.md). The Paystack secret key is read from the environment only
// (SVC_PAYSTACK_SECRET_KEY): there is no flag, so it never sits in a process listing.
type partnersConfig struct {
	PaystackSecretKey     string // from SVC_PAYSTACK_SECRET_KEY only
	PaystackBaseURL       string
	PaystackPhone         string
	PaystackEmailDomain   string
	PaystackPreferredBank string
	PaystackBankCodes     string // slug=code,... (the bank codes dedicated accounts are reported with)
	SandboxSecret         string // signs the sandbox bank's and custody's notifications
	RateLimit             int    // notifications per minute per client address
}

func (c *partnersConfig) flags(fs *flag.FlagSet, env *envDefaults) {
	c.PaystackSecretKey = env.getenv("SVC_PAYSTACK_SECRET_KEY")
	fs.StringVar(&c.PaystackBaseURL, "paystack-base-url", env.str("paystack-base-url", paystack.DefaultBaseURL), "Paystack API root (the live bank partner; used only when SVC_PAYSTACK_SECRET_KEY is set)")
	fs.StringVar(&c.PaystackPhone, "paystack-phone", env.str("paystack-phone", ""), "contact phone given to Paystack for the customers that hold dedicated accounts, e.g. +2348000000000 (required with a Paystack key)")
	fs.StringVar(&c.PaystackEmailDomain, "paystack-email-domain", env.str("paystack-email-domain", ""), "domain of the emails of the Paystack customers behind dedicated accounts, one the business controls, e.g. dva.example.com (required with a Paystack key)")
	fs.StringVar(&c.PaystackPreferredBank, "paystack-preferred-bank", env.str("paystack-preferred-bank", "wema-bank"), "slug of the bank that issues Paystack dedicated accounts")
	fs.StringVar(&c.PaystackBankCodes, "paystack-bank-codes", env.str("paystack-bank-codes", "wema-bank=035"), "bank codes of the dedicated-account banks (slug=code,...)")
	c.SandboxSecret = env.str("sandbox-partner-secret", "")
	fs.Var(cli.NewSecret(&c.SandboxSecret), "sandbox-partner-secret", "secret the sandbox bank and custody sign their notifications with (X-Svc-Partner-Signature); unset: derived from the database URL")
	fs.IntVar(&c.RateLimit, "partner-rate-limit", env.int("partner-rate-limit", 600), "partner notifications per minute per client address on /v1/partners/{provider}/events")
}

func (c partnersConfig) bankCodes() (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range splitList(c.PaystackBankCodes) {
		slug, code, ok := strings.Cut(kv, "=")
		if !ok || slug == "" || len(code) != 3 || strings.Trim(code, "0123456789") != "" {
			return nil, fmt.Errorf("-paystack-bank-codes %q: want slug=3-digit code pairs, e.g. wema-bank=035", c.PaystackBankCodes)
		}
		out[slug] = code
	}
	return out, nil
}

// paystack builds the Paystack client, or nil when no key is set (live stays 503
// PROVIDER_UNAVAILABLE).
func (c partnersConfig) paystack(log *slog.Logger) (*paystack.Client, error) {
	if c.PaystackSecretKey == "" {
		return nil, nil
	}
	codes, err := c.bankCodes()
	if err != nil {
		return nil, err
	}
	cl, err := paystack.New(paystack.Config{SecretKey: c.PaystackSecretKey, BaseURL: c.PaystackBaseURL, PreferredBank: c.PaystackPreferredBank,
		BankCodes: codes, CustomerEmailDomain: c.PaystackEmailDomain, Phone: c.PaystackPhone, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("paystack (SVC_PAYSTACK_SECRET_KEY is set): %w", err)
	}
	return cl, nil
}

func (c partnersConfig) validate() error {
	var errs []error
	if c.RateLimit < 1 {
		errs = append(errs, errors.New("-partner-rate-limit must be at least 1"))
	}
	if _, err := c.bankCodes(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.paystack(slog.New(slog.DiscardHandler)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sandboxSecret is --sandbox-partner-secret, or one derived from the database URL (the
// sandbox moves no real money; a stable value lets local tools sign notifications).
func (c partnersConfig) sandboxSecret(databaseURL string) string {
	if c.SandboxSecret != "" {
		return c.SandboxSecret
	}
	sum := sha256.Sum256([]byte("svc sandbox partner secret\x00" + databaseURL))
	return hex.EncodeToString(sum[:])
}

// liveProviders are the live adapters, built in order: the bank (Paystack) when a key is
// set, and tier 1 KYC through the same Paystack client (customer identification,
// docs/kyc.md); custody, tier 2 KYC and FX have no live adapter yet (503
// PROVIDER_UNAVAILABLE).
func liveProviders(cfg config, log *slog.Logger) (providers.Set, *paystack.Client, error) {
	ps, err := cfg.Partners.paystack(log.With("component", "paystack"))
	if err != nil {
		return providers.Set{}, nil, err
	}
	set := providers.Unconfigured()
	if ps != nil {
		set.Bank = ps
		set.KYC = ps.KYC()
		log.Info("live bank and tier 1 KYC partner: Paystack", "base_url", cfg.Partners.PaystackBaseURL, "preferred_bank", cfg.Partners.PaystackPreferredBank)
	} else {
		log.Info("live bank and KYC partner: none (SVC_PAYSTACK_SECRET_KEY unset): live bank rails and KYC answer 503 PROVIDER_UNAVAILABLE")
	}
	return set, ps, nil
}

// partnerSet is every partner whose notifications the route takes: the sandbox bank and
// custody always, Paystack when configured.
func partnerSet(cfg config, ps *paystack.Client, cust *custodyParts) []partners.Partner {
	secret := cfg.Partners.sandboxSecret(cfg.DatabaseURL)
	out := []partners.Partner{partners.SandboxBankPartner(secret), partners.SandboxCustodyPartner(secret)}
	if ps != nil {
		out = append(out, partners.PaystackPartner(ps))
	}
	if cust != nil {
		out = append(out, cust.partner())
	}
	return out
}

// partnerRoutes is the partner-events route over svc.
func partnerRoutes(cfg config, svc *partners.Service) *gwpartners.Routes {
	return gwpartners.New(svc, gwpartners.Config{PerMinute: cfg.Partners.RateLimit, ClientIP: clientIP(cfg),
		Crypto: partners.CustodySimulator{Partners: svc, Secret: cfg.Partners.sandboxSecret(cfg.DatabaseURL)}})
}

// newInbound builds the one inbound path for money (payments/partners) over the domains that
// give value, and registers its job on dj.
func newInbound(cfg config, pool *pgxpool.Pool, ps *paystack.Client, cust *custodyParts, envs providers.Environments, rec *events.Recorder,
	inserter *jobs.Client, deps *deposits.Service, ons *onramps.Service, ofs *offramps.Service, tfs *transfers.Service, cs *customers.Service,
	dj domainJobs, log *slog.Logger) (*partners.Service, error) {
	svc, err := partners.New(pool, partners.Config{Partners: partnerSet(cfg, ps, cust), Jobs: inserter, Events: rec,
		Deposits: deps, Onramps: ons, Offramps: ofs, Providers: envs, Logger: log, Verifications: cs,
		Payouts:   map[string]partners.PayoutAdvancer{"payout": ofs.AdvancePayout, "transfer": tfs.Advance},
		Reversals: payoutReversals(tfs, ofs)})
	if err != nil {
		return nil, err
	}
	if err := partners.Register(dj.workers, svc); err != nil {
		return nil, err
	}
	dj.queues[partners.Queue] = 10
	return svc, nil
}

// sandboxOfframps is the sandbox custodian behind the offramp flavour of the sandbox
// deposit route: its deposit.confirmed notification through the partner path.
func sandboxOfframps(cfg config, ofs *offramps.Service, inbound *partners.Service) partners.SandboxOfframps {
	return partners.SandboxOfframps{Offramps: ofs, Partners: inbound, Secret: cfg.Partners.sandboxSecret(cfg.DatabaseURL)}
}

// sandboxDeposits is the deposits service whose sandbox simulation is the sandbox bank's
// notification through the partner path.
func sandboxDeposits(cfg config, deps *deposits.Service, ons *onramps.Service, inbound *partners.Service) partners.SandboxDeposits {
	return partners.SandboxDeposits{Service: deps, Onramps: ons, Partners: inbound, Secret: cfg.Partners.sandboxSecret(cfg.DatabaseURL)}
}
