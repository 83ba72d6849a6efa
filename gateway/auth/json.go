package auth

import (
	"time"

	"github.com/google/uuid"

	"svc/gateway/api"
	"svc/identity"
)

// Time is a timestamp field of this package's answers, written as the API writes every
// timestamp (api.TimeLayout: UTC, ISO 8601 with milliseconds and Z).
type Time time.Time

// MarshalJSON writes "2006-01-02T15:04:05.000Z".
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(api.TimeLayout)+2)
	b = append(b, '"')
	b = api.AppendTime(b, time.Time(t))
	return append(b, '"'), nil
}

func ptrTime(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	v := Time(*t)
	return &v
}

// tokensJSON is the answer of login and refresh.
type tokensJSON struct {
	AccessToken           string `json:"access_token"`
	TokenType             string `json:"token_type"`
	ExpiresIn             int    `json:"expires_in"`
	ExpiresAt             Time   `json:"expires_at"`
	RefreshToken          string `json:"refresh_token"`
	RefreshTokenExpiresAt Time   `json:"refresh_token_expires_at"`
}

func toTokensJSON(t identity.Tokens) tokensJSON {
	return tokensJSON{AccessToken: t.AccessToken, TokenType: t.TokenType, ExpiresIn: t.ExpiresIn, ExpiresAt: Time(t.ExpiresAt),
		RefreshToken: t.RefreshToken, RefreshTokenExpiresAt: Time(t.RefreshTokenExpiresAt)}
}

// profileJSON is the merchant profile (GET /auth/me, PATCH /merchant/profile).
type profileJSON struct {
	ID                 uuid.UUID       `json:"id"`
	Email              string          `json:"email"`
	EmailVerified      bool            `json:"email_verified"`
	BusinessName       string          `json:"business_name"`
	FirstName          string          `json:"first_name"`
	LastName           string          `json:"last_name"`
	Phone              string          `json:"phone"`
	Website            string          `json:"website"`
	Country            string          `json:"country"`
	Address            string          `json:"address"`
	Environment        api.Environment `json:"environment"`
	KYCStatus          string          `json:"kyc_status"`
	KYCSubmittedAt     *Time           `json:"kyc_submitted_at"`
	KYCReviewedAt      *Time           `json:"kyc_reviewed_at"`
	RateLimitPerMinute int             `json:"rate_limit_per_minute"`
	IPWhitelistEnabled bool            `json:"ip_whitelist_enabled"`
	CreatedAt          Time            `json:"created_at"`
	UpdatedAt          Time            `json:"updated_at"`
}

func toProfileJSON(p identity.Profile) profileJSON {
	return profileJSON{
		ID: p.ID, Email: p.Email, EmailVerified: p.EmailVerified, BusinessName: p.BusinessName, FirstName: p.FirstName,
		LastName: p.LastName, Phone: p.Phone, Website: p.Website, Country: p.Country, Address: p.Address,
		Environment: api.Environment(p.Environment), KYCStatus: p.KYCStatus, KYCSubmittedAt: ptrTime(p.KYCSubmittedAt),
		KYCReviewedAt: ptrTime(p.KYCReviewedAt), RateLimitPerMinute: p.RateLimitPerMinute, IPWhitelistEnabled: p.IPWhitelistEnabled,
		CreatedAt: Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt),
	}
}
