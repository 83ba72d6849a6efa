package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/netip"

	"github.com/google/uuid"
)

// ErrThrottled: the key is not in memory and the caller may not cost a query (its
// failure budget is spent).
var ErrThrottled = errors.New("identity: client throttled after failed authentications")

// IdentifyKey finds the API key key (the X-Api-Key value) stands for. A key in memory (or a
// hash recently looked up and not found) costs no query; otherwise mayQuery is asked first
// and, when it says no, the answer is ErrThrottled without a lookup. A use is recorded for
// last_used_at (in memory; the flusher writes it). Errors: ErrUnauthorized (malformed,
// unknown, revoked, or of another environment than its prefix says), ErrThrottled.
func (s *Service) IdentifyKey(ctx context.Context, key []byte, mayQuery func() bool) (Authenticated, error) {
	env, ok := keyEnvironment(key)
	if !ok {
		return Authenticated{}, ErrUnauthorized
	}
	h := sha256.Sum256(key)
	e, known := s.cache.cached(h)
	if !known {
		if !mayQuery() {
			return Authenticated{}, ErrThrottled
		}
		var found bool
		var err error
		e, found, err = s.cache.key(ctx, h[:])
		if err != nil {
			return Authenticated{}, err
		}
		if !found {
			return Authenticated{}, ErrUnauthorized
		}
	}
	if e == nil || !e.rec.Active || e.rec.Environment != env {
		return Authenticated{}, ErrUnauthorized
	}
	s.cache.touch(e, s.cfg.Now())
	return Authenticated{MerchantID: e.rec.MerchantID, Environment: env, APIKeyID: e.rec.ID, Scopes: e.rec.Scopes}, nil
}

// IdentifyToken checks an access token and returns its merchant. Errors: ErrUnauthorized.
func (s *Service) IdentifyToken(token string) (uuid.UUID, error) {
	id, err := s.signer.parse(token)
	if err != nil {
		return uuid.Nil, ErrUnauthorized
	}
	return id, nil
}

// Admit applies the merchant's standing to a request from client: the merchant exists, is
// not suspended, and its IP whitelist admits client (whitelistRoute: see Whitelist.Check).
// It answers the merchant's requests per minute (its own or the default). Settings come
// from the cache. Errors: ErrUnauthorized, ErrSuspended, ErrIPNotWhitelisted,
// ErrWhitelistRequired.
func (s *Service) Admit(ctx context.Context, merchantID uuid.UUID, client netip.Addr, whitelistRoute bool) (int, error) {
	st, ok, err := s.cache.settings(ctx, merchantID)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrUnauthorized
	}
	if st.Suspended {
		return 0, ErrSuspended
	}
	if err := st.Whitelist.Check(client, whitelistRoute); err != nil {
		return 0, err
	}
	if st.RateLimit == 0 {
		return s.cfg.DefaultRateLimit, nil
	}
	return st.RateLimit, nil
}

// Recheck re-checks a stream a merchant opened in env with the API key whose SHA-256 is
// keyHash: the key is still active (a revoked or deleted key leaves the cache through
// LISTEN/NOTIFY) and the merchant may still be served from client (Admit) and, in live,
// its live KYC is still approved (AdmitLive). Errors: those of Admit and AdmitLive.
func (s *Service) Recheck(ctx context.Context, keyHash [sha256.Size]byte, merchantID uuid.UUID, env Environment, client netip.Addr, whitelistRoute bool) error {
	e, found, err := s.cache.key(ctx, keyHash[:])
	if err != nil {
		return err
	}
	if !found || !e.rec.Active || e.rec.MerchantID != merchantID || e.rec.Environment != env {
		return ErrUnauthorized
	}
	if _, err = s.Admit(ctx, merchantID, client, whitelistRoute); err != nil {
		return err
	}
	if env == Live {
		return s.AdmitLive(ctx, merchantID)
	}
	return nil
}
