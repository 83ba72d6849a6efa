package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/persistence/postgres"
)

// Config of identity. Zero values take the defaults in brackets.
type Config struct {
	// JWTSecret signs access tokens (at least 32 bytes) and keys the one-time-code hashes.
	JWTSecret        []byte
	DefaultRateLimit int           // requests per minute per merchant and environment [100]
	OTPTTL           time.Duration // [10m]
	OTPCooldown      time.Duration // between two codes of one purpose [60s]
	OTPMaxAttempts   int           // wrong tries before a code dies [5]
	RefreshTTL       time.Duration // [30 days]
	LastUsedFlush    time.Duration // how often API-key last_used_at is written [5s]
	HashConcurrency  int           // argon2id hashes at once [2]
	HashQueue        int           // callers waiting for a hash slot before 429 [16 per slot]
	HashWait         time.Duration // longest wait for a hash slot before 429 [2s]
	// HashLimit, when set, is the hashing bound to share (HashConcurrency, HashQueue and
	// HashWait are then its own): e.g. one bound for every identity service of a process.
	HashLimit *HashLimit
	// OTPDailyFailures: wrong codes per account and purpose, across codes, in 24 hours
	// after which no code of that purpose is accepted until the day has passed [20].
	OTPDailyFailures int
	Now              func() time.Time
}

func (c *Config) defaults() {
	if c.DefaultRateLimit <= 0 {
		c.DefaultRateLimit = 100
	}
	if c.OTPTTL <= 0 {
		c.OTPTTL = 10 * time.Minute
	}
	if c.OTPCooldown <= 0 {
		c.OTPCooldown = time.Minute
	}
	if c.OTPMaxAttempts <= 0 {
		c.OTPMaxAttempts = 5
	}
	if c.RefreshTTL <= 0 {
		c.RefreshTTL = 30 * 24 * time.Hour
	}
	if c.HashConcurrency <= 0 {
		c.HashConcurrency = 2
	}
	if c.OTPDailyFailures <= 0 {
		c.OTPDailyFailures = 20
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Service is identity: accounts, codes, tokens, API keys, the merchant's own settings, and
// (authn.go) what the authenticator of every protected route asks.
type Service struct {
	cfg    Config
	pool   *pgxpool.Pool
	log    *slog.Logger
	mailer Mailer
	hasher *Hasher
	signer *signer
	cache  *Cache
}

// New builds the service. Call Start before serving and Stop after.
func New(pool *pgxpool.Pool, cfg Config, mailer Mailer, log *slog.Logger) (*Service, error) {
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if mailer == nil {
		return nil, errors.New("identity: a mail sender is required")
	}
	sg, err := newSigner(cfg.JWTSecret, cfg.Now)
	if err != nil {
		return nil, err
	}
	return &Service{
		cfg: cfg, pool: pool, log: log, mailer: mailer,
		hasher: hasher(cfg),
		signer: sg,
		cache:  NewCache(pool, log, cfg.Now, cfg.LastUsedFlush),
	}, nil
}

// hasher is the service's bounded hasher: under cfg.HashLimit, or a limit of its own.
func hasher(cfg Config) *Hasher {
	if cfg.HashLimit != nil {
		return NewLimitedHasher(cfg.HashLimit)
	}
	return NewBoundedHasher(cfg.HashConcurrency, cfg.HashQueue, cfg.HashWait)
}

// Start runs the key cache's listener and last-used flusher.
func (s *Service) Start() { s.cache.Start() }

// Stop ends them and writes the last batch of last_used_at.
func (s *Service) Stop() { s.cache.Stop() }

// Cache is the key cache (tests wait for its listener).
func (s *Service) Cache() *Cache { return s.cache }

// Hasher is the service's bounded password hasher.
func (s *Service) Hasher() *Hasher { return s.hasher }

// HashPassword hashes with the service's argon2id hasher (demo seeding).
func (s *Service) HashPassword(ctx context.Context, pw string) (string, error) {
	return s.hasher.Hash(ctx, pw)
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// RegisterInput is a new merchant account.
type RegisterInput struct {
	Email, Password, BusinessName, FirstName, LastName string
}

// Register creates an unverified merchant and mails a verification code.
// Errors: ErrEmailInUse.
func (s *Service) Register(ctx context.Context, in RegisterInput) (Merchant, error) {
	ph, err := s.hasher.Hash(ctx, in.Password)
	if err != nil {
		return Merchant{}, err
	}
	now := s.now()
	m := Merchant{
		ID: uuid.Must(uuid.NewV7()), Email: in.Email, PasswordHash: ph, BusinessName: in.BusinessName,
		FirstName: in.FirstName, LastName: in.LastName, CreatedAt: now, UpdatedAt: now,
	}
	var code string
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := insertMerchant(ctx, tx, m); err != nil {
			return err
		}
		code, err = s.issueOTP(ctx, tx, m.ID, PurposeVerifyEmail, now)
		return err
	})
	if err != nil {
		return Merchant{}, err
	}
	s.sendCode(ctx, m.Email, PurposeVerifyEmail, code)
	return m, nil
}

func (s *Service) issueOTP(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, purpose string, now time.Time) (string, error) {
	code := newOTP()
	id := uuid.Must(uuid.NewV7())
	err := insertOTP(ctx, tx, id, merchantID, purpose, otpHash(s.cfg.JWTSecret, id, code), now, now.Add(s.cfg.OTPTTL))
	return code, err
}

// sendCode mails a code after the commit. A failed send is logged (never the code) and the
// user can ask again with resend-otp.
func (s *Service) sendCode(ctx context.Context, to, purpose, code string) {
	subject, what := "Verify your email", "verify your email address"
	if purpose == PurposeResetPassword {
		subject, what = "Reset your password", "reset your password"
	}
	text := fmt.Sprintf("Your one-time code to %s is: %s\n\nIt expires in %d minutes. If you did not ask for it, ignore this email.\n",
		what, code, int(s.cfg.OTPTTL.Minutes()))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := s.mailer.Send(ctx, Message{To: to, Subject: subject, Text: text}); err != nil {
		s.log.Error("mail not sent", "purpose", purpose, "to", to, "error", err)
	}
}

// checkOTP spends one try of the newest live code of a purpose. A wrong code counts a try;
// after OTPMaxAttempts the code is dead even if the right one comes next, and after
// OTPDailyFailures wrong tries across all the account's codes of the purpose in 24 hours no
// code is accepted (a new code does not buy new tries). A right code is consumed when
// consume is set; otherwise it stays usable (reset-password checks it before hashing).
func (s *Service) checkOTP(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, purpose, code string, now time.Time, consume bool) (bool, error) {
	if locked, err := s.otpLocked(ctx, tx, merchantID, purpose, now); err != nil || locked {
		return false, err
	}
	row, err := latestOTP(ctx, tx, merchantID, purpose)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !now.Before(row.ExpiresAt) || row.Attempts >= s.cfg.OTPMaxAttempts {
		return false, nil
	}
	if hmac.Equal(otpHash(s.cfg.JWTSecret, row.ID, code), row.Hash) {
		if !consume {
			return true, nil
		}
		_, err := tx.Exec(ctx, `update one_time_codes set consumed_at = $2 where id = $1`, row.ID, now)
		return err == nil, err
	}
	_, err = tx.Exec(ctx, `update one_time_codes set attempts = attempts + 1 where id = $1`, row.ID)
	return false, err
}

// EmailVerified reports whether email belongs to an account whose email is verified (false
// for an unknown email): the gateway answers ALREADY_VERIFIED before it checks the code's form.
func (s *Service) EmailVerified(ctx context.Context, email string) (bool, error) {
	m, err := merchantByEmail(ctx, s.pool, email, false)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.EmailVerifiedAt != nil, nil
}

// VerifyEmail marks the email verified with its code. An email already verified answers
// ErrAlreadyVerified whatever the code (the spec's 422 ALREADY_VERIFIED; registration already
// tells whether an email is in use, so the answer hides nothing), and spends no try.
// Errors: ErrInvalidOTP (also for an unknown email), ErrAlreadyVerified.
func (s *Service) VerifyEmail(ctx context.Context, email, code string) (Merchant, error) {
	now := s.now()
	var m Merchant
	var outcome error
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		outcome = nil
		var err error
		m, err = merchantByEmail(ctx, tx, email, true)
		if errors.Is(err, pgx.ErrNoRows) {
			outcome = ErrInvalidOTP
			return nil
		}
		if err != nil {
			return err
		}
		if m.EmailVerifiedAt != nil {
			outcome = ErrAlreadyVerified
			return nil
		}
		ok, err := s.checkOTP(ctx, tx, m.ID, PurposeVerifyEmail, code, now, true)
		if err != nil {
			return err
		}
		if !ok {
			outcome = ErrInvalidOTP // the spent try commits
			return nil
		}
		m.EmailVerifiedAt = &now
		_, err = tx.Exec(ctx, `update merchants set email_verified_at = $2, updated_at = $2 where id = $1`, m.ID, now)
		return err
	})
	if err != nil {
		return Merchant{}, err
	}
	return m, outcome
}

// ResendOTP mails a new code for purpose, retiring the previous one. It answers the same
// whatever the account: unknown, already verified (verify_email), within the cooldown, or
// locked after too many wrong codes, nothing is sent and the answer is still nil, so the
// route tells nobody whether an account exists or what state it is in.
func (s *Service) ResendOTP(ctx context.Context, email, purpose string) error {
	now := s.now()
	var code string
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		code = ""
		m, err := merchantByEmail(ctx, tx, email, true)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if purpose == PurposeVerifyEmail && m.EmailVerifiedAt != nil {
			return nil
		}
		last, err := lastOTPIssued(ctx, tx, m.ID, purpose)
		if err != nil {
			return err
		}
		if !last.IsZero() && last.Add(s.cfg.OTPCooldown).After(now) {
			return nil
		}
		if locked, err := s.otpLocked(ctx, tx, m.ID, purpose, now); err != nil || locked {
			return err
		}
		code, err = s.issueOTP(ctx, tx, m.ID, purpose, now)
		return err
	})
	if err != nil {
		return err
	}
	if code != "" {
		s.sendCode(ctx, email, purpose, code)
	}
	return nil
}

// otpLocked reports whether the account has had OTPDailyFailures wrong codes of purpose in
// the last 24 hours (tries are counted on the codes, so retiring a code keeps its count).
func (s *Service) otpLocked(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, purpose string, now time.Time) (bool, error) {
	n, err := otpFailuresSince(ctx, tx, merchantID, purpose, now.Add(-24*time.Hour))
	return n >= s.cfg.OTPDailyFailures, err
}

// ForgotPassword mails a reset code. It answers the same for unknown emails and during
// the cooldown, so it tells nobody whether an account exists.
func (s *Service) ForgotPassword(ctx context.Context, email string) error {
	return s.ResendOTP(ctx, email, PurposeResetPassword)
}

// ResetPassword sets a new password with a reset code and revokes every refresh token.
// The code is checked before the (costly, bounded) hash: a wrong code costs one query and
// one try, never a hash. Errors: ErrInvalidOTP, ErrHashBusy.
func (s *Service) ResetPassword(ctx context.Context, email, code, newPassword string) error {
	if err := s.resetWithCode(ctx, email, code, "", false); err != nil {
		return err
	}
	ph, err := s.hasher.Hash(ctx, newPassword)
	if err != nil {
		return err
	}
	return s.resetWithCode(ctx, email, code, ph, true)
}

// resetWithCode checks the reset code in one transaction; with set it consumes the code and
// stores the password hash ph (the code is checked again: it may have been used meanwhile).
func (s *Service) resetWithCode(ctx context.Context, email, code, ph string, set bool) error {
	now := s.now()
	var outcome error
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		outcome = nil
		m, err := merchantByEmail(ctx, tx, email, true)
		if errors.Is(err, pgx.ErrNoRows) {
			outcome = ErrInvalidOTP
			return nil
		}
		if err != nil {
			return err
		}
		ok, err := s.checkOTP(ctx, tx, m.ID, PurposeResetPassword, code, now, set)
		if err != nil {
			return err
		}
		if !ok {
			outcome = ErrInvalidOTP // the spent try commits
			return nil
		}
		if !set {
			return nil
		}
		// The code reached the mailbox, so the email is proven too.
		if _, err := tx.Exec(ctx, `update merchants set password_hash = $2, email_verified_at = coalesce(email_verified_at, $3),
			updated_at = $3 where id = $1`, m.ID, ph, now); err != nil {
			return err
		}
		return revokeAllRefresh(ctx, tx, m.ID, now)
	})
	if err != nil {
		return err
	}
	return outcome
}

// Login checks email and password and starts a new refresh-token family. An unknown
// email costs a dummy hash verification, so both failures take as long.
// Errors: ErrInvalidCredentials, ErrEmailNotVerified, ErrSuspended.
func (s *Service) Login(ctx context.Context, email, password string) (Tokens, Merchant, error) {
	m, err := merchantByEmail(ctx, s.pool, email, false)
	if errors.Is(err, pgx.ErrNoRows) {
		if err := s.hasher.VerifyDummy(ctx, password); err != nil {
			return Tokens{}, Merchant{}, err // busy like a known email would be
		}
		return Tokens{}, Merchant{}, ErrInvalidCredentials
	}
	if err != nil {
		return Tokens{}, Merchant{}, err
	}
	ok, err := s.hasher.Verify(ctx, m.PasswordHash, password)
	if err != nil {
		return Tokens{}, Merchant{}, err
	}
	if !ok {
		return Tokens{}, Merchant{}, ErrInvalidCredentials
	}
	if m.EmailVerifiedAt == nil {
		return Tokens{}, Merchant{}, ErrEmailNotVerified
	}
	if m.Suspended {
		return Tokens{}, Merchant{}, ErrSuspended
	}
	now := s.now()
	var t Tokens
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		t, err = s.tokens(ctx, tx, m.ID, uuid.Must(uuid.NewV7()), now)
		return err
	})
	return t, m, err
}

func (s *Service) tokens(ctx context.Context, tx pgx.Tx, merchantID, family uuid.UUID, now time.Time) (Tokens, error) {
	access, exp, err := s.signer.issue(merchantID)
	if err != nil {
		return Tokens{}, err
	}
	rt, hash := newRefreshToken()
	rexp := now.Add(s.cfg.RefreshTTL)
	if err := insertRefresh(ctx, tx, family, merchantID, hash, now, rexp); err != nil {
		return Tokens{}, err
	}
	return Tokens{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(AccessTTL.Seconds()), ExpiresAt: exp,
		RefreshToken: rt, RefreshTokenExpiresAt: rexp}, nil
}

// Refresh rotates a refresh token: a new access and refresh token, the old one dead at
// once. Presenting a rotated or revoked token revokes its whole family.
// Errors: ErrInvalidRefreshToken, ErrTokenRevoked, ErrSuspended.
func (s *Service) Refresh(ctx context.Context, token string) (Tokens, error) {
	if !wellFormedRefresh(token) {
		return Tokens{}, ErrInvalidRefreshToken
	}
	now := s.now()
	var t Tokens
	var outcome error
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		outcome = nil
		r, err := refreshByHash(ctx, tx, HashSecret(token))
		if errors.Is(err, pgx.ErrNoRows) {
			outcome = ErrInvalidRefreshToken
			return nil
		}
		if err != nil {
			return err
		}
		if r.RotatedAt != nil || r.RevokedAt != nil {
			outcome = ErrTokenRevoked
			s.log.Warn("refresh token reused: family revoked", "merchant_id", r.MerchantID.String(), "family_id", r.FamilyID.String())
			return revokeFamily(ctx, tx, r.FamilyID, now)
		}
		if !now.Before(r.ExpiresAt) {
			outcome = ErrInvalidRefreshToken
			return nil
		}
		st, err := settingsByID(ctx, tx, r.MerchantID)
		if err != nil {
			return err
		}
		if st.Suspended {
			outcome = ErrSuspended
			return nil
		}
		if _, err := tx.Exec(ctx, `update refresh_tokens set rotated_at = $2 where id = $1`, r.ID, now); err != nil {
			return err
		}
		t, err = s.tokens(ctx, tx, r.MerchantID, r.FamilyID, now)
		return err
	})
	if err != nil {
		return Tokens{}, err
	}
	return t, outcome
}

// Logout revokes the refresh token's family. Errors: ErrInvalidRefreshToken.
func (s *Service) Logout(ctx context.Context, token string) error {
	if !wellFormedRefresh(token) {
		return ErrInvalidRefreshToken
	}
	now := s.now()
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		r, err := refreshByHash(ctx, tx, HashSecret(token))
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrInvalidRefreshToken
		}
		if err != nil {
			return err
		}
		return revokeFamily(ctx, tx, r.FamilyID, now)
	})
}

// ChangePassword needs the current password and revokes every refresh token.
// Errors: ErrWrongPassword, ErrNotFound.
func (s *Service) ChangePassword(ctx context.Context, merchantID uuid.UUID, current, next string) error {
	m, err := merchantByID(ctx, s.pool, merchantID)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	ok, err := s.hasher.Verify(ctx, m.PasswordHash, current)
	if err != nil {
		return err
	}
	if !ok {
		return ErrWrongPassword
	}
	ph, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return err
	}
	now := s.now()
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `update merchants set password_hash = $2, updated_at = $3 where id = $1`, m.ID, ph, now); err != nil {
			return err
		}
		return revokeAllRefresh(ctx, tx, m.ID, now)
	})
}

// Profile returns the merchant's profile with its KYC status in env. Errors: ErrNotFound.
func (s *Service) Profile(ctx context.Context, merchantID uuid.UUID, env Environment) (Profile, error) {
	m, err := merchantByID(ctx, s.pool, merchantID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Profile{}, ErrNotFound
	}
	if err != nil {
		return Profile{}, err
	}
	k, err := kycOf(ctx, s.pool, merchantID, env)
	if err != nil {
		return Profile{}, err
	}
	rl := s.cfg.DefaultRateLimit
	if m.RateLimitPerMinute != nil {
		rl = *m.RateLimitPerMinute
	}
	return Profile{
		ID: m.ID, Email: m.Email, EmailVerified: m.EmailVerifiedAt != nil, BusinessName: m.BusinessName,
		FirstName: m.FirstName, LastName: m.LastName, Phone: m.Phone, Website: m.Website, Country: m.Country,
		Address: m.Address, Environment: env, KYCStatus: k.Status, KYCSubmittedAt: k.SubmittedAt, KYCReviewedAt: k.ReviewedAt,
		RateLimitPerMinute: rl, IPWhitelistEnabled: m.Whitelist.Enabled || m.Whitelist.Required,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}, nil
}

// ProfilePatch holds the fields to change; nil leaves a field as it is.
type ProfilePatch struct {
	BusinessName, FirstName, LastName, Phone, Website, Country, Address *string
}

// UpdateProfile changes the given fields.
func (s *Service) UpdateProfile(ctx context.Context, merchantID uuid.UUID, env Environment, p ProfilePatch) (Profile, error) {
	_, err := s.pool.Exec(ctx, `update merchants set
		business_name = coalesce($2, business_name), first_name = coalesce($3, first_name), last_name = coalesce($4, last_name),
		phone = coalesce($5, phone), website = coalesce($6, website), country = coalesce($7, country),
		address = coalesce($8, address), updated_at = $9 where id = $1`,
		merchantID, p.BusinessName, p.FirstName, p.LastName, p.Phone, p.Website, p.Country, p.Address, s.now())
	if err != nil {
		return Profile{}, err
	}
	return s.Profile(ctx, merchantID, env)
}

// SubmitKYC records the merchant's KYC in env: approved at once in sandbox, PENDING review
// in live. A live record already APPROVED is not reset.
func (s *Service) SubmitKYC(ctx context.Context, merchantID uuid.UUID, env Environment, details map[string]any) (KYC, error) {
	status := "PENDING"
	var reviewed *time.Time
	now := s.now()
	if env == Sandbox {
		status, reviewed = "APPROVED", &now
	}
	b, err := json.Marshal(details)
	if err != nil {
		return KYC{}, err
	}
	_, err = s.pool.Exec(ctx, `insert into merchant_kyc (merchant_id, environment, status, details, submitted_at, reviewed_at)
		values ($1, $2, $3, $4, $5, $6)
		on conflict (merchant_id, environment) do update set details = excluded.details, submitted_at = excluded.submitted_at,
			status = case when merchant_kyc.status = 'APPROVED' then 'APPROVED' else excluded.status end,
			reviewed_at = case when merchant_kyc.status = 'APPROVED' then merchant_kyc.reviewed_at else excluded.reviewed_at end`,
		merchantID, env, status, b, now, reviewed)
	if err != nil {
		return KYC{}, err
	}
	return kycOf(ctx, s.pool, merchantID, env)
}

// keyScope is what a caller may see of the keys: an API key its own environment only, a
// bearer token both (filtered by the environment asked for, if any).
func keyScope(p Caller, asked Environment) (keyFilter, error) {
	f := keyFilter{MerchantID: p.MerchantID, Environment: asked}
	if p.ByAPIKey {
		if asked != "" && asked != p.Environment {
			return f, ErrForbiddenEnv
		}
		f.Environment = p.Environment
	}
	return f, nil
}

// CreatedKey is the create answer: the only time the full key is shown.
type CreatedKey struct {
	APIKey
	Key string
}

// CreateAPIKey makes a key in env with scopes (zero: all). Errors: ErrForbiddenEnv (an
// API key creating a key of the other environment), ErrKYCRequired (a live key before the
// merchant's live KYC is approved).
func (s *Service) CreateAPIKey(ctx context.Context, p Caller, name string, env Environment, scopes Scope) (CreatedKey, error) {
	if _, err := keyScope(p, env); err != nil {
		return CreatedKey{}, err
	}
	if env == Live {
		if err := s.AdmitLive(ctx, p.MerchantID); err != nil {
			return CreatedKey{}, err
		}
	}
	// In the request's idempotency scope when it has one (postgres.InScope): the key and the
	// stored answer commit together, so a retry after a crash finds either both or neither.
	var k APIKey
	var key string
	err := postgres.InScope(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		k, key, err = CreateScopedKey(ctx, tx, p.MerchantID, env, name, scopes)
		return err
	})
	if err != nil {
		return CreatedKey{}, err
	}
	s.log.Info("api key created", "merchant_id", p.MerchantID.String(), "key_id", k.ID.String(), "key_prefix", k.KeyPrefix,
		"environment", string(env), "scopes", k.Scopes.String())
	return CreatedKey{APIKey: k, Key: key}, nil
}

// ListAPIKeys lists the keys the caller may see, newest first.
func (s *Service) ListAPIKeys(ctx context.Context, p Caller, env Environment, page Page) ([]APIKey, int64, error) {
	f, err := keyScope(p, env)
	if err != nil {
		return nil, 0, err
	}
	return listKeys(ctx, s.pool, f, page)
}

// RevokeAPIKey deactivates a key; it is refused from the next request on, in every
// process. Errors: ErrNotFound (absent, another merchant's, or another environment's for
// an API-key caller).
func (s *Service) RevokeAPIKey(ctx context.Context, p Caller, id uuid.UUID) (APIKey, error) {
	f, _ := keyScope(p, "")
	var k APIKey
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		k, err = revokeKey(ctx, tx, f, id, s.now())
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return notify(ctx, tx, "key:"+id.String())
	})
	if err != nil {
		return APIKey{}, err
	}
	s.cache.InvalidateKey(id)
	s.log.Info("api key revoked", "merchant_id", p.MerchantID.String(), "key_id", id.String())
	return k, nil
}

// DeleteAPIKey removes a key for good. Errors: ErrNotFound.
func (s *Service) DeleteAPIKey(ctx context.Context, p Caller, id uuid.UUID) error {
	f, _ := keyScope(p, "")
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		ok, err := deleteKey(ctx, tx, f, id)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotFound
		}
		return notify(ctx, tx, "key:"+id.String())
	})
	if err != nil {
		return err
	}
	s.cache.InvalidateKey(id)
	s.log.Info("api key deleted", "merchant_id", p.MerchantID.String(), "key_id", id.String())
	return nil
}

// Whitelist returns the merchant's IP whitelist.
func (s *Service) Whitelist(ctx context.Context, merchantID uuid.UUID) (Whitelist, error) {
	st, err := settingsByID(ctx, s.pool, merchantID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Whitelist{}, ErrNotFound
	}
	return st.Whitelist, err
}

// SetWhitelist replaces the merchant's IP whitelist; every process applies it from the
// next request.
func (s *Service) SetWhitelist(ctx context.Context, merchantID uuid.UUID, w Whitelist) (Whitelist, error) {
	if w.IPs == nil {
		w.IPs = []netip.Prefix{}
	}
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `update merchants set ip_whitelist_enabled = $2, ip_whitelist_required = $3, ip_whitelist = $4,
			updated_at = $5 where id = $1`, merchantID, w.Enabled, w.Required, w.IPs, s.now()); err != nil {
			return err
		}
		return notify(ctx, tx, "merchant:"+merchantID.String())
	})
	if err != nil {
		return Whitelist{}, err
	}
	s.cache.InvalidateMerchant(merchantID)
	return w, nil
}

// DemoMerchant seeds a verified merchant (KYC approved in sandbox and live, a raised rate
// limit) with a fresh sandbox key; an existing demo merchant gets a new key (and a live KYC
// approval if it never had a review: an operator's decision is kept). It returns the email, the
// password (empty when the merchant already existed) and the key.
func (s *Service) DemoMerchant(ctx context.Context, email string, rateLimit int) (string, string, error) {
	password := ""
	m, err := merchantByEmail(ctx, s.pool, email, false)
	if errors.Is(err, pgx.ErrNoRows) {
		password = rand.Text()[:16]
		ph, herr := s.hasher.Hash(ctx, password)
		if herr != nil {
			return "", "", herr
		}
		m, err = SeedMerchant(ctx, s.pool, SeedOptions{Email: email, PasswordHash: ph, BusinessName: "Demo Business", RateLimit: &rateLimit,
			KYCApproved: true, LiveKYCApproved: true})
	}
	if err != nil {
		return "", "", err
	}
	if _, err := s.pool.Exec(ctx, `insert into merchant_kyc (merchant_id, environment, status, reviewed_at) values ($1, 'live', 'APPROVED', now())
		on conflict (merchant_id, environment) do nothing`, m.ID); err != nil {
		return "", "", err
	}
	s.cache.InvalidateMerchant(m.ID)
	_, key, err := CreateKey(ctx, s.pool, m.ID, Sandbox, "demo key")
	return password, key, err
}
