package identity

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	auditlog "svc/persistence/audit"
	"svc/persistence/postgres"
)

// notifyChannel carries cache invalidations between processes: "key:<id>" when an API key
// is revoked or deleted, "merchant:<id>" when a merchant's suspension, whitelist or rate
// limit changes. pg_notify is transactional: listeners hear it only after the commit.
const notifyChannel = "svc_auth"

var errNoRows = pgx.ErrNoRows

const merchantCols = `id, email, password_hash, business_name, first_name, last_name, phone, website, country,
	address, email_verified_at, rate_limit_per_minute, suspended, ip_whitelist_enabled, ip_whitelist_required,
	ip_whitelist, created_at, updated_at`

func scanMerchant(row pgx.Row) (Merchant, error) {
	var m Merchant
	err := row.Scan(&m.ID, &m.Email, &m.PasswordHash, &m.BusinessName, &m.FirstName, &m.LastName, &m.Phone,
		&m.Website, &m.Country, &m.Address, &m.EmailVerifiedAt, &m.RateLimitPerMinute, &m.Suspended,
		&m.Whitelist.Enabled, &m.Whitelist.Required, &m.Whitelist.IPs, &m.CreatedAt, &m.UpdatedAt)
	return m, err
}

func insertMerchant(ctx context.Context, q postgres.Querier, m Merchant) error {
	_, err := q.Exec(ctx, `insert into merchants (id, email, password_hash, business_name, first_name, last_name,
		email_verified_at, rate_limit_per_minute) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
		m.ID, m.Email, m.PasswordHash, m.BusinessName, m.FirstName, m.LastName, m.EmailVerifiedAt, m.RateLimitPerMinute)
	if postgres.IsUniqueViolation(err, "merchants_email_key") {
		return ErrEmailInUse
	}
	return err
}

func merchantByEmail(ctx context.Context, q postgres.Querier, email string, lock bool) (Merchant, error) {
	sql := `select ` + merchantCols + ` from merchants where lower(email) = lower($1)`
	if lock {
		sql += ` for update`
	}
	return scanMerchant(q.QueryRow(ctx, sql, email))
}

func merchantByID(ctx context.Context, q postgres.Querier, id uuid.UUID) (Merchant, error) {
	return scanMerchant(q.QueryRow(ctx, `select `+merchantCols+` from merchants where id = $1`, id))
}

func notify(ctx context.Context, q postgres.Querier, payload string) error {
	_, err := q.Exec(ctx, `select pg_notify($1, $2)`, notifyChannel, payload)
	return err
}

// --- one-time codes ---

type otpRow struct {
	ID        uuid.UUID
	Hash      []byte
	Attempts  int
	ExpiresAt time.Time
	CreatedAt time.Time
}

// latestOTP returns the newest unconsumed code of a purpose, locked for the update.
func latestOTP(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, purpose string) (otpRow, error) {
	var r otpRow
	err := q.QueryRow(ctx, `select id, code_hash, attempts, expires_at, created_at from one_time_codes
		where merchant_id = $1 and purpose = $2 and consumed_at is null
		order by created_at desc limit 1 for update`, merchantID, purpose).
		Scan(&r.ID, &r.Hash, &r.Attempts, &r.ExpiresAt, &r.CreatedAt)
	return r, err
}

// otpFailuresSince counts wrong tries on the account's codes of purpose issued since.
func otpFailuresSince(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, purpose string, since time.Time) (int, error) {
	var n int
	err := q.QueryRow(ctx, `select coalesce(sum(attempts), 0) from one_time_codes
		where merchant_id = $1 and purpose = $2 and created_at >= $3`, merchantID, purpose, since).Scan(&n)
	return n, err
}

func lastOTPIssued(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, purpose string) (time.Time, error) {
	var t *time.Time
	err := q.QueryRow(ctx, `select max(created_at) from one_time_codes where merchant_id = $1 and purpose = $2`,
		merchantID, purpose).Scan(&t)
	if err != nil || t == nil {
		return time.Time{}, err
	}
	return *t, nil
}

// insertOTP retires every earlier code of the purpose and stores the new one.
func insertOTP(ctx context.Context, q postgres.Querier, id, merchantID uuid.UUID, purpose string, hash []byte, now, expires time.Time) error {
	if _, err := q.Exec(ctx, `update one_time_codes set consumed_at = $3 where merchant_id = $1 and purpose = $2 and consumed_at is null`,
		merchantID, purpose, now); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `insert into one_time_codes (id, merchant_id, purpose, code_hash, expires_at, created_at)
		values ($1, $2, $3, $4, $5, $6)`, id, merchantID, purpose, hash, expires, now)
	return err
}

// --- refresh tokens ---

type refreshRow struct {
	ID         uuid.UUID
	FamilyID   uuid.UUID
	MerchantID uuid.UUID
	ExpiresAt  time.Time
	RotatedAt  *time.Time
	RevokedAt  *time.Time
}

func refreshByHash(ctx context.Context, q postgres.Querier, hash []byte) (refreshRow, error) {
	var r refreshRow
	err := q.QueryRow(ctx, `select id, family_id, merchant_id, expires_at, rotated_at, revoked_at
		from refresh_tokens where token_hash = $1 for update`, hash).
		Scan(&r.ID, &r.FamilyID, &r.MerchantID, &r.ExpiresAt, &r.RotatedAt, &r.RevokedAt)
	return r, err
}

func insertRefresh(ctx context.Context, q postgres.Querier, family, merchantID uuid.UUID, hash []byte, now, expires time.Time) error {
	_, err := q.Exec(ctx, `insert into refresh_tokens (id, family_id, merchant_id, token_hash, expires_at, created_at)
		values ($1, $2, $3, $4, $5, $6)`, uuid.Must(uuid.NewV7()), family, merchantID, hash, expires, now)
	return err
}

func revokeFamily(ctx context.Context, q postgres.Querier, family uuid.UUID, now time.Time) error {
	_, err := q.Exec(ctx, `update refresh_tokens set revoked_at = $2 where family_id = $1 and revoked_at is null`, family, now)
	return err
}

func revokeAllRefresh(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, now time.Time) error {
	_, err := q.Exec(ctx, `update refresh_tokens set revoked_at = $2 where merchant_id = $1 and revoked_at is null`, merchantID, now)
	return err
}

// --- API keys ---

const keyCols = `id, merchant_id, environment, name, key_prefix, is_active, scopes, last_used_at, created_at`

func scanKey(row pgx.Row) (APIKey, error) {
	var k APIKey
	var scopes []string
	err := row.Scan(&k.ID, &k.MerchantID, &k.Environment, &k.Name, &k.KeyPrefix, &k.IsActive, &scopes, &k.LastUsedAt, &k.CreatedAt)
	k.Scopes, _, _ = ParseScopes(scopes)
	return k, err
}

// InsertAPIKey stores a key made by NewAPIKey. Zero Scopes means all of them.
func InsertAPIKey(ctx context.Context, q postgres.Querier, k APIKey, hash []byte) error {
	if k.Scopes == 0 {
		k.Scopes = AllScopes
	}
	_, err := q.Exec(ctx, `insert into api_keys (id, merchant_id, environment, name, key_prefix, key_hash, scopes, created_at)
		values ($1, $2, $3, $4, $5, $6, $7, $8)`, k.ID, k.MerchantID, k.Environment, k.Name, k.KeyPrefix, hash, k.Scopes.Names(), k.CreatedAt)
	return err
}

// keyRecord is what the authenticator needs of a key.
type keyRecord struct {
	ID          uuid.UUID
	MerchantID  uuid.UUID
	Environment Environment
	Active      bool
	Scopes      Scope
	LastUsed    *time.Time
}

func keyByHash(ctx context.Context, q postgres.Querier, hash []byte) (keyRecord, error) {
	var r keyRecord
	var scopes []string
	err := q.QueryRow(ctx, `select id, merchant_id, environment, is_active, scopes, last_used_at from api_keys where key_hash = $1`, hash).
		Scan(&r.ID, &r.MerchantID, &r.Environment, &r.Active, &scopes, &r.LastUsed)
	r.Scopes, _, _ = ParseScopes(scopes)
	return r, err
}

// keyFilter scopes key queries to a merchant and, when set, one environment.
type keyFilter struct {
	MerchantID  uuid.UUID
	Environment Environment // "" for both (bearer callers)
}

func listKeys(ctx context.Context, q postgres.Querier, f keyFilter, p Page) ([]APIKey, int64, error) {
	var total int64
	if err := q.QueryRow(ctx, `select count(*) from api_keys where merchant_id = $1 and ($2 = '' or environment = $2)`,
		f.MerchantID, string(f.Environment)).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := q.Query(ctx, `select `+keyCols+` from api_keys where merchant_id = $1 and ($2 = '' or environment = $2)
		order by created_at desc, id desc limit $3 offset $4`, f.MerchantID, string(f.Environment), p.Limit, p.Offset)
	if err != nil {
		return nil, 0, err
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIKey, error) { return scanKey(r) })
	return keys, total, err
}

func revokeKey(ctx context.Context, q postgres.Querier, f keyFilter, id uuid.UUID, now time.Time) (APIKey, error) {
	return scanKey(q.QueryRow(ctx, `update api_keys set is_active = false, revoked_at = coalesce(revoked_at, $4)
		where id = $1 and merchant_id = $2 and ($3 = '' or environment = $3) returning `+keyCols,
		id, f.MerchantID, string(f.Environment), now))
}

func deleteKey(ctx context.Context, q postgres.Querier, f keyFilter, id uuid.UUID) (bool, error) {
	tag, err := q.Exec(ctx, `delete from api_keys where id = $1 and merchant_id = $2 and ($3 = '' or environment = $3)`,
		id, f.MerchantID, string(f.Environment))
	return tag.RowsAffected() == 1, err
}

// flushLastUsed writes a batch of last-use times; a time never moves backwards.
func flushLastUsed(ctx context.Context, q postgres.Querier, ids []uuid.UUID, at []time.Time) error {
	_, err := q.Exec(ctx, `update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
		from unnest($1::uuid[], $2::timestamptz[]) as u(id, at) where k.id = u.id`, ids, at)
	return err
}

// --- merchant settings the authenticator needs ---

type merchantSettings struct {
	Suspended bool
	RateLimit int // 0: the default
	Whitelist Whitelist
	// LiveApproved: the merchant's live KYC is APPROVED (live keys and live rails need it).
	LiveApproved bool
}

func settingsByID(ctx context.Context, q postgres.Querier, id uuid.UUID) (merchantSettings, error) {
	var s merchantSettings
	var rl *int
	err := q.QueryRow(ctx, `select suspended, rate_limit_per_minute, ip_whitelist_enabled, ip_whitelist_required, ip_whitelist,
			exists (select 1 from merchant_kyc k where k.merchant_id = m.id and k.environment = 'live' and k.status = 'APPROVED')
		from merchants m where id = $1`, id).Scan(&s.Suspended, &rl, &s.Whitelist.Enabled, &s.Whitelist.Required, &s.Whitelist.IPs, &s.LiveApproved)
	if rl != nil {
		s.RateLimit = *rl
	}
	return s, err
}

// --- KYC ---

func kycOf(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, env Environment) (KYC, error) {
	k := KYC{Status: "NOT_SUBMITTED"}
	err := q.QueryRow(ctx, `select status, submitted_at, reviewed_at from merchant_kyc where merchant_id = $1 and environment = $2`,
		merchantID, env).Scan(&k.Status, &k.SubmittedAt, &k.ReviewedAt)
	if errors.Is(err, errNoRows) {
		return KYC{Status: "NOT_SUBMITTED"}, nil
	}
	return k, err
}

// Store is the operator's view of merchants (svc merchant ...). Every change notifies the
// running servers so their caches drop the merchant's settings.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns the operator store on pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// MerchantSummary is one line of `svc merchant list`.
type MerchantSummary struct {
	ID                 uuid.UUID
	Email              string
	BusinessName       string
	Verified           bool
	Suspended          bool
	RateLimitPerMinute *int
	CreatedAt          time.Time
}

// ListMerchants returns merchants, newest first.
func (s *Store) ListMerchants(ctx context.Context, limit int) ([]MerchantSummary, error) {
	rows, err := s.pool.Query(ctx, `select id, email, business_name, email_verified_at is not null, suspended,
		rate_limit_per_minute, created_at from merchants order by created_at desc limit $1`, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (MerchantSummary, error) {
		var m MerchantSummary
		err := r.Scan(&m.ID, &m.Email, &m.BusinessName, &m.Verified, &m.Suspended, &m.RateLimitPerMinute, &m.CreatedAt)
		return m, err
	})
}

// Merchant returns one merchant by id or email (ErrNotFound).
func (s *Store) Merchant(ctx context.Context, idOrEmail string) (Merchant, error) {
	var m Merchant
	var err error
	if id, perr := uuid.Parse(idOrEmail); perr == nil {
		m, err = merchantByID(ctx, s.pool, id)
	} else {
		m, err = merchantByEmail(ctx, s.pool, idOrEmail, false)
	}
	if errors.Is(err, errNoRows) {
		return m, ErrNotFound
	}
	return m, err
}

// KeyCounts returns the number of active keys per environment.
func (s *Store) KeyCounts(ctx context.Context, merchantID uuid.UUID) (map[Environment]int, error) {
	rows, err := s.pool.Query(ctx, `select environment, count(*) from api_keys where merchant_id = $1 and is_active group by 1`, merchantID)
	if err != nil {
		return nil, err
	}
	out := map[Environment]int{}
	for rows.Next() {
		var env Environment
		var n int
		if err := rows.Scan(&env, &n); err != nil {
			return nil, err
		}
		out[env] = n
	}
	return out, rows.Err()
}

// SetRateLimit sets a merchant's requests per minute; nil restores the default. The audit
// row and the cache notification commit with the change.
func (s *Store) SetRateLimit(ctx context.Context, id uuid.UUID, perMinute *int, actor, reason string) error {
	return s.change(ctx, id, "merchant.set_rate_limit", actor, reason, map[string]any{"rate_limit_per_minute": perMinute},
		`update merchants set rate_limit_per_minute = $2, updated_at = now() where id = $1`, perMinute)
}

// SetSuspended suspends (every request 403 MERCHANT_SUSPENDED, logins and refreshes refused)
// or reinstates a merchant.
func (s *Store) SetSuspended(ctx context.Context, id uuid.UUID, suspended bool, actor, reason string) error {
	action := "merchant.suspend"
	if !suspended {
		action = "merchant.unsuspend"
	}
	return s.change(ctx, id, action, actor, reason, map[string]any{"suspended": suspended},
		`update merchants set suspended = $2, updated_at = now() where id = $1`, suspended)
}

func (s *Store) change(ctx context.Context, id uuid.UUID, action, actor, reason string, detail map[string]any, sql string, arg any) error {
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sql, id, arg)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		if err := audit(ctx, tx, actor, action, "merchant:"+id.String(), reason, detail); err != nil {
			return err
		}
		return notify(ctx, tx, "merchant:"+id.String())
	})
}

// Operator actions on a merchant's IP whitelist (audit_log action names).
const (
	ActionWhitelistShow  = "merchant.whitelist.show"
	ActionWhitelistClear = "merchant.whitelist.clear"
)

// whitelistByID reads a merchant's IP whitelist in tx; ErrNotFound when there is no such merchant.
func whitelistByID(ctx context.Context, tx pgx.Tx, id uuid.UUID) (Whitelist, error) {
	st, err := settingsByID(ctx, tx, id)
	if errors.Is(err, errNoRows) {
		return Whitelist{}, ErrNotFound
	}
	if err != nil {
		return Whitelist{}, err
	}
	return st.Whitelist, nil
}

// ShowWhitelist returns a merchant's IP whitelist for an operator, audited (who looked and
// why) like every operator action.
func (s *Store) ShowWhitelist(ctx context.Context, id uuid.UUID, actor, reason string) (Whitelist, error) {
	var w Whitelist
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if w, err = whitelistByID(ctx, tx, id); err != nil {
			return err
		}
		return audit(ctx, tx, actor, ActionWhitelistShow, "merchant:"+id.String(), reason, nil)
	})
	return w, err
}

// ClearWhitelist switches a merchant's IP whitelist off and empties it (the way back in for
// a merchant locked out of every route), returning what it was. The audit row keeps the
// previous whitelist, and running servers apply the change at once (NOTIFY).
func (s *Store) ClearWhitelist(ctx context.Context, id uuid.UUID, actor, reason string) (Whitelist, error) {
	var before Whitelist
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if before, err = whitelistByID(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update merchants set ip_whitelist_enabled = false, ip_whitelist_required = false,
			ip_whitelist = '{}', updated_at = now() where id = $1`, id); err != nil {
			return err
		}
		ips := make([]string, len(before.IPs))
		for i, p := range before.IPs {
			ips[i] = p.String()
		}
		if err := audit(ctx, tx, actor, ActionWhitelistClear, "merchant:"+id.String(), reason,
			map[string]any{"before": map[string]any{"enabled": before.Enabled, "required": before.Required, "ips": ips}}); err != nil {
			return err
		}
		return notify(ctx, tx, "merchant:"+id.String())
	})
	return before, err
}

// audit writes an operator's action on a merchant to audit_log in tx, so it commits or rolls
// back with the change it records (through the table's owner, persistence/audit, as
// payments/operator.Audit does for money operations). actor "" is "unknown"; detail nil is {}.
func audit(ctx context.Context, tx postgres.Querier, actor, action, subject, reason string, detail map[string]any) error {
	var d any
	if detail != nil {
		d = detail
	}
	return auditlog.Write(ctx, tx, auditlog.Entry{Actor: actor, Action: action, Subject: subject, Reason: reason, Detail: d})
}
