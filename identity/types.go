package identity

import (
	"context"
	"net/netip"
	"time"

	"github.com/google/uuid"
)

// Environment separates sandbox from live: API keys, merchant KYC and rate-limit buckets
// belong to one.
type Environment string

// The two environments.
const (
	Sandbox Environment = "sandbox"
	Live    Environment = "live"
)

// One-time code purposes.
const (
	PurposeVerifyEmail   = "verify_email"
	PurposeResetPassword = "reset_password"
)

// Merchant is a merchant account (the tenant).
type Merchant struct {
	ID                 uuid.UUID
	Email              string
	PasswordHash       string
	BusinessName       string
	FirstName          string
	LastName           string
	Phone              string
	Website            string
	Country            string
	Address            string
	EmailVerifiedAt    *time.Time
	RateLimitPerMinute *int
	Suspended          bool
	Whitelist          Whitelist
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Whitelist is a merchant's IP whitelist.
type Whitelist struct {
	Enabled  bool
	Required bool
	IPs      []netip.Prefix
}

// APIKey is a stored key: never the key itself.
type APIKey struct {
	ID          uuid.UUID
	MerchantID  uuid.UUID
	Environment Environment
	Name        string
	KeyPrefix   string
	IsActive    bool
	Scopes      Scope
	LastUsedAt  *time.Time
	CreatedAt   time.Time
}

// KYC is a merchant's own KYC record in one environment.
type KYC struct {
	Status      string // PENDING, APPROVED, REJECTED; NOT_SUBMITTED when there is no row
	SubmittedAt *time.Time
	ReviewedAt  *time.Time
}

// Profile is the merchant as the merchant sees it in one environment.
type Profile struct {
	ID                 uuid.UUID
	Email              string
	EmailVerified      bool
	BusinessName       string
	FirstName          string
	LastName           string
	Phone              string
	Website            string
	Country            string
	Address            string
	Environment        Environment
	KYCStatus          string
	KYCSubmittedAt     *time.Time
	KYCReviewedAt      *time.Time
	RateLimitPerMinute int // effective: the merchant's own or the default
	IPWhitelistEnabled bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Tokens are the answer of login and refresh: an access token and the next refresh token.
type Tokens struct {
	AccessToken           string
	TokenType             string // "Bearer"
	ExpiresIn             int    // seconds the access token lives
	ExpiresAt             time.Time
	RefreshToken          string
	RefreshTokenExpiresAt time.Time
}

// Caller is who asks for a key operation: a merchant in an environment, by API key (which
// sees only its own environment's keys) or by bearer token (both environments).
type Caller struct {
	MerchantID  uuid.UUID
	Environment Environment
	ByAPIKey    bool
}

// Page is one page of a list: at most Limit items after skipping Offset.
type Page struct {
	Limit, Offset int
}

// Authenticated is who a credential stands for.
type Authenticated struct {
	MerchantID  uuid.UUID
	Environment Environment
	APIKeyID    uuid.UUID // uuid.Nil for a bearer token
	Scopes      Scope     // AllScopes for a bearer token
}

// Message is one email identity sends (a one-time code). Its fields are those of
// payments/providers/mail.Message, so a sender there adapts with a conversion.
type Message struct {
	To      string
	Subject string
	Text    string
}

// Mailer delivers a message; Send returns once the message is accepted (by an SMTP server
// or an outbox). Declared here so identity does not import the payments tree.
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// MailerFunc is a function that is a Mailer.
type MailerFunc func(ctx context.Context, m Message) error

// Send calls f.
func (f MailerFunc) Send(ctx context.Context, m Message) error { return f(ctx, m) }
