package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"svc/cmd/internal/cli"
	"svc/identity"
	"svc/payments/customers"
	"svc/payments/jobs"
	"svc/payments/webhooks"
	"svc/persistence/lease"
)

// config is everything svcd can be told. Each flag has an environment variable (SVC_ + the
// flag's name in upper case with - as _), read when the flag is not given; flags win.
type config struct {
	Addr            string
	DatabaseURL     string
	DBMaxConns      int
	DBMinConns      int
	Migrate         bool
	LogLevel        string
	LogFormat       string
	AccessLog       bool
	BodyLimit       int
	RequestTimeout  time.Duration
	PayReadLimit    int
	PayWriteLimit   int
	ShutdownTimeout time.Duration
	PublicBaseURL   string
	Demo            bool
	ShowVersion     bool // --version: print the version and commit, then exit

	WebhookSecretKey     string        // AES-256-GCM key of endpoint secrets (hex or base64, 32 bytes)
	WebhookAllowInsecure bool          // http and loopback/private receivers (development, tests)
	WebhookRetryBase     time.Duration // first retry wait; the schedule scales from it
	WebhookCAFile        string        // extra trusted CAs for receivers (PEM)
	WebhookWorkers       int           // deliveries in flight at once

	HousekeepingInterval time.Duration // how often expired quotes, idempotency keys and outbox bodies are purged and due onramps stored EXPIRED
	BVNHMACKey           string        // HMAC-SHA256 key of stored BVN digests (hex or base64, >= 32 bytes)

	// Identity and access (gateway/auth).
	JWTSecret        string
	TrustedProxies   string
	RateLimitDefault int
	AuthRateLimit    int
	SMTPAddr         string
	SMTPFrom         string
	SMTPUsername     string
	SMTPPassword     string
	MailLogBody      bool

	// Exchange core: journal and snapshots.
	Journal       string
	JournalDir    string
	KafkaBrokers  []string
	KafkaTopic    string
	SnapshotDir   string
	SnapshotEvery time.Duration
	JournalRetain int // snapshots whose journal is kept; 0 keeps the whole file journal

	Kafka          kafkaConfig   // Kafka journal: topic settings, TLS, SASL (kafka.go)
	Cluster        clusterConfig // --roles, --engine-addr, --engine-listen (roles.go)
	EngineLeaseTTL time.Duration // how long one confirmation of the engine lease lasts (lease.go)

	// Payments providers (sandbox simulators; live adapters are not configured yet).
	SandboxBankCode string // 3-digit NUBAN bank code of sandbox virtual accounts
	SandboxBankName string

	MoneyIn  moneyInConfig  // rates, onramps, deposits, merchant balance (payments.go)
	Treasury treasuryConfig // treasuries and market makers (treasury.go)
	Partners partnersConfig // live partners (Paystack) and the partner-events route (partners.go)
	Custody  custodyConfig  // live EVM custody (custody.go)
}

// flagSet declares the flags on fs with defaults taken from the environment.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("svcd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := envDefaults{getenv: getenv}

	fs.StringVar(&c.Addr, "addr", env.str("addr", ":8080"), "HTTP listen address")
	c.DatabaseURL = env.str("database-url", getenv("DATABASE_URL"))
	fs.Var(cli.NewDSN(&c.DatabaseURL), "database-url", "PostgreSQL URL (also DATABASE_URL); shown with its password redacted")
	fs.IntVar(&c.DBMaxConns, "db-max-conns", env.int("db-max-conns", 32), "largest number of PostgreSQL connections")
	fs.IntVar(&c.DBMinConns, "db-min-conns", env.int("db-min-conns", 8), "PostgreSQL connections opened at start and kept open through idle spells (at most --db-max-conns): a connection opened during a burst delays its request")
	fs.BoolVar(&c.Migrate, "migrate", env.bool("migrate", true), "apply database migrations at start")
	fs.StringVar(&c.LogLevel, "log-level", env.str("log-level", "info"), "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", env.str("log-format", "json"), "json or text")
	fs.BoolVar(&c.AccessLog, "access-log", env.bool("access-log", true), "log every request")
	fs.IntVar(&c.BodyLimit, "body-limit", env.int("body-limit", 1<<20), "largest request body in bytes")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", env.duration("request-timeout", 10*time.Second), "deadline of every request: database, job queue and provider work still running then is cancelled and the request answers 503")
	fs.IntVar(&c.PayReadLimit, "pay-read-limit", env.int("pay-read-limit", 120), "hosted checkout page views and status polls per minute per client address")
	fs.IntVar(&c.PayWriteLimit, "pay-write-limit", env.int("pay-write-limit", 20), "hosted checkout payment attempts per minute per client address")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", env.duration("shutdown-timeout", 20*time.Second), "time in-flight requests get to finish on SIGTERM; then the job workers, the treasury's loops and the custody's chain loops get as long again (a loop still blocked in the engine is abandoned and logged)")
	fs.StringVar(&c.PublicBaseURL, "public-base-url", env.str("public-base-url", "http://localhost:8080"), "address users reach the service at (hosted pages, links in mail)")
	fs.BoolVar(&c.Demo, "demo", env.bool("demo", false), "seed a sandbox merchant with an API key and print the key")

	c.BVNHMACKey = env.str("bvn-hmac-key", "")
	fs.Var(cli.NewSecret(&c.BVNHMACKey), "bvn-hmac-key", "key (hex or base64, at least 32 bytes) of the HMAC-SHA256 digests BVNs are stored as; unset: a development key derived from the database URL")
	c.WebhookSecretKey = env.str("webhook-secret-key", "")
	fs.Var(cli.NewSecret(&c.WebhookSecretKey), "webhook-secret-key", "32-byte key (64 hex chars or base64) encrypting webhook endpoint secrets; unset: a development key, and live endpoints are refused")
	fs.BoolVar(&c.WebhookAllowInsecure, "webhook-allow-insecure", env.bool("webhook-allow-insecure", false), "allow http webhook URLs and loopback/private receivers (local development and tests only)")
	fs.DurationVar(&c.HousekeepingInterval, "housekeeping-interval", env.duration("housekeeping-interval", jobs.DefaultHousekeepingInterval), "how often a periodic job purges expired rate quotes and idempotency keys, blanks outbox mail bodies older than 24h and stores EXPIRED on TEMPORARY onramps past their expiry")
	fs.DurationVar(&c.WebhookRetryBase, "webhook-retry-base", env.duration("webhook-retry-base", 5*time.Second), "first webhook retry wait; later waits scale from it (5s gives 5s, 5m, 30m, 2h, 5h, 10h, 10h, 14h, 20h, 24h)")
	fs.StringVar(&c.WebhookCAFile, "webhook-ca-file", env.str("webhook-ca-file", ""), "PEM file of extra certificate authorities trusted for webhook receivers")
	fs.IntVar(&c.WebhookWorkers, "webhook-workers", env.int("webhook-workers", 50), "webhook deliveries in flight at once")

	c.JWTSecret = env.str("jwt-secret", "")
	fs.Var(cli.NewSecret(&c.JWTSecret), "jwt-secret", "secret (32+ bytes) signing access tokens; empty: a random one per start (tokens die on restart; not for live use)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", env.str("trusted-proxies", ""), "comma-separated CIDRs whose X-Forwarded-For is believed")
	fs.IntVar(&c.RateLimitDefault, "rate-limit-default", env.int("rate-limit-default", 100), "requests per minute per merchant unless the merchant has its own")
	fs.IntVar(&c.AuthRateLimit, "auth-rate-limit", env.int("auth-rate-limit", 10), "requests per minute per client address on /v1/auth")
	fs.StringVar(&c.SMTPAddr, "smtp-addr", env.str("smtp-addr", ""), "SMTP server host:port; empty: mail goes to the mail_outbox table (svc mail outbox)")
	fs.StringVar(&c.SMTPFrom, "smtp-from", env.str("smtp-from", "no-reply@localhost"), "sender address of the service's mail")
	fs.StringVar(&c.SMTPUsername, "smtp-username", env.str("smtp-username", ""), "SMTP PLAIN auth user (optional)")
	c.SMTPPassword = env.str("smtp-password", "")
	fs.Var(cli.NewSecret(&c.SMTPPassword), "smtp-password", "SMTP PLAIN auth password (prefer SVC_SMTP_PASSWORD)")
	fs.BoolVar(&c.MailLogBody, "mail-log-body", env.bool("mail-log-body", false), "without SMTP, also write mail bodies (one-time codes) to the log; on with --demo")

	fs.StringVar(&c.Journal, "journal", env.str("journal", "file"), "where the engine's events are made durable: file or kafka")
	fs.StringVar(&c.JournalDir, "journal-dir", env.str("journal-dir", ".data/journal"), "file journal folder (one sub-folder per environment)")
	brokers := fs.String("kafka-brokers", env.str("kafka-brokers", ""), "comma-separated Kafka bootstrap addresses (with --journal=kafka)")
	fs.StringVar(&c.KafkaTopic, "kafka-topic", env.str("kafka-topic", "svc-journal"), "Kafka topic prefix; the environment is appended (svc-journal-sandbox)")
	fs.StringVar(&c.SnapshotDir, "snapshot-dir", env.str("snapshot-dir", ".data/snapshots"), "engine snapshot folder (one sub-folder per environment)")
	fs.DurationVar(&c.SnapshotEvery, "snapshot-every", env.duration("snapshot-every", time.Minute), "how often to snapshot the engine when it changed (0: only at shutdown)")
	fs.IntVar(&c.JournalRetain, "journal-retain", env.int("journal-retain", 0), "file journal retention: after each snapshot, delete the journal segments older than the N-th newest snapshot and than the order-history projection (0: keep the whole journal)")
	fs.StringVar(&c.SandboxBankCode, "sandbox-bank-code", env.str("sandbox-bank-code", "999"), "3-digit bank code of sandbox NGN virtual accounts (their NUBAN check digit uses it)")
	fs.StringVar(&c.SandboxBankName, "sandbox-bank-name", env.str("sandbox-bank-name", "Svc Sandbox Bank"), "bank name shown on sandbox NGN virtual accounts")
	c.MoneyIn.flags(fs, &env)
	c.Treasury.flags(fs, &env)
	c.Partners.flags(fs, &env)
	c.Custody.flags(fs, &env)
	c.Kafka.flags(fs, &env)
	c.Cluster.flags(fs, &env)
	fs.DurationVar(&c.EngineLeaseTTL, "engine-lease-ttl", env.duration("engine-lease-ttl", lease.DefaultTTL), "how long one renewal keeps the engine lease on PostgreSQL's clock (renewed every third of it); the engine stops acknowledging a tenth of it earlier on its own clock, and a standby takes over once it has expired")
	fs.BoolVar(&c.ShowVersion, "version", false, "print the version and commit of this build, then exit")

	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.ShowVersion {
		return c, nil
	}
	if env.err != nil {
		return c, env.err
	}
	for _, b := range strings.Split(*brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.KafkaBrokers = append(c.KafkaBrokers, b)
		}
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return c, c.validate()
}

func (c config) validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("-addr %q: want host:port, e.g. :8080", c.Addr))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("-database-url (or DATABASE_URL) is required; `make run` starts a local PostgreSQL and sets it"))
	}
	if c.DBMaxConns < 2 {
		errs = append(errs, errors.New("-db-max-conns must be at least 2"))
	}
	if c.DBMinConns < 0 {
		errs = append(errs, errors.New("-db-min-conns must not be negative"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("-log-level %q: want debug, info, warn or error", c.LogLevel))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("-log-format %q: want json or text", c.LogFormat))
	}
	if len(c.SandboxBankCode) != 3 || strings.Trim(c.SandboxBankCode, "0123456789") != "" {
		errs = append(errs, fmt.Errorf("-sandbox-bank-code %q: want 3 digits", c.SandboxBankCode))
	}
	if err := c.MoneyIn.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Treasury.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Partners.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Custody.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.BodyLimit < 1024 {
		errs = append(errs, errors.New("-body-limit must be at least 1024 bytes"))
	}
	if c.RequestTimeout < 100*time.Millisecond {
		errs = append(errs, errors.New("-request-timeout must be at least 100ms"))
	}
	if c.PayReadLimit < 1 || c.PayWriteLimit < 1 {
		errs = append(errs, errors.New("-pay-read-limit and -pay-write-limit must be at least 1"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("-shutdown-timeout must be positive"))
	}
	if !strings.HasPrefix(c.PublicBaseURL, "http://") && !strings.HasPrefix(c.PublicBaseURL, "https://") {
		errs = append(errs, fmt.Errorf("-public-base-url %q: want an http(s) URL", c.PublicBaseURL))
	}
	if c.BVNHMACKey != "" {
		if _, err := customers.ParseBVNKey(c.BVNHMACKey); err != nil {
			errs = append(errs, fmt.Errorf("-bvn-hmac-key: %w", err))
		}
	}
	if c.WebhookSecretKey != "" {
		if _, err := webhooks.ParseKey(c.WebhookSecretKey); err != nil {
			errs = append(errs, fmt.Errorf("-webhook-secret-key: %w", err))
		}
	}
	if c.WebhookRetryBase <= 0 {
		errs = append(errs, errors.New("-webhook-retry-base must be positive"))
	}
	if c.HousekeepingInterval < time.Second {
		errs = append(errs, errors.New("-housekeeping-interval must be at least 1s"))
	}
	if c.WebhookWorkers < 1 {
		errs = append(errs, errors.New("-webhook-workers must be at least 1"))
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		errs = append(errs, errors.New("-jwt-secret must be at least 32 bytes (e.g. `openssl rand -base64 48`)"))
	}
	if _, err := identity.ParsePrefixes(splitList(c.TrustedProxies)); err != nil {
		errs = append(errs, fmt.Errorf("-trusted-proxies: %w", err))
	}
	if c.RateLimitDefault < 1 || c.AuthRateLimit < 1 {
		errs = append(errs, errors.New("-rate-limit-default and -auth-rate-limit must be at least 1"))
	}
	if c.SMTPAddr != "" {
		if _, _, err := net.SplitHostPort(c.SMTPAddr); err != nil {
			errs = append(errs, fmt.Errorf("-smtp-addr %q: want host:port", c.SMTPAddr))
		}
	}
	switch c.Journal {
	case "file":
		if c.JournalDir == "" {
			errs = append(errs, errors.New("-journal-dir is required with -journal=file"))
		}
	case "kafka":
		if len(c.KafkaBrokers) == 0 {
			errs = append(errs, errors.New("-kafka-brokers is required with -journal=kafka"))
		}
		if c.KafkaTopic == "" {
			errs = append(errs, errors.New("-kafka-topic is required with -journal=kafka"))
		}
		if err := c.Kafka.validate(); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("-journal %q: want file or kafka", c.Journal))
	}
	if err := c.Cluster.validate(c.Journal); err != nil {
		errs = append(errs, err)
	}
	if c.EngineLeaseTTL < 300*time.Millisecond {
		errs = append(errs, errors.New("-engine-lease-ttl must be at least 300ms"))
	}
	if c.JournalRetain < 0 {
		errs = append(errs, errors.New("-journal-retain must not be negative"))
	}
	if c.SnapshotEvery < 0 {
		errs = append(errs, errors.New("-snapshot-every must not be negative"))
	}
	return errors.Join(errs...)
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// envDefaults reads SVC_* variables as flag defaults and remembers the first bad value.
type envDefaults struct {
	getenv func(string) string
	err    error
}

func envName(flagName string) string {
	return "SVC_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (e *envDefaults) str(name, def string) string {
	if v := e.getenv(envName(name)); v != "" {
		return v
	}
	return def
}

func (e *envDefaults) int(name string, def int) int {
	v := e.getenv(envName(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s=%q: want an integer", envName(name), v)
	}
	return n
}

func (e *envDefaults) bool(name string, def bool) bool {
	v := e.getenv(envName(name))
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s=%q: want true or false", envName(name), v)
	}
	return b
}

func (e *envDefaults) duration(name string, def time.Duration) time.Duration {
	v := e.getenv(envName(name))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s=%q: want a duration such as 20s", envName(name), v)
	}
	return d
}
