// Package idempotency makes retried POSTs safe (DESIGN.md section 4): a request carrying an
// idempotency key runs at most once per merchant, environment and key, and its response is
// stored IN THE SAME TRANSACTION as the change it made, so a crash anywhere cannot split
// them: either both committed (a retry replays the stored response) or neither (a retry runs
// the request afresh).
//
// The HTTP side is gateway/idempotency.Middleware; this package is the store and the
// transaction scope. The life of a keyed request:
//
//  1. Begin opens a transaction and takes a transaction-scoped advisory lock on the key
//     (pg_try_advisory_xact_lock: a second request with the key while the first runs gets
//     ErrKeyInUse, 409, at once instead of waiting). A stored, unexpired response for the key
//     is returned for replay if the request hash (method, path with query, body) matches,
//     else ErrKeyReused (422).
//  2. The handler runs with the Scope in its context. Services write through InTx, which
//     runs their function in a savepoint of the scope's transaction instead of a transaction
//     of their own. So the ledger postings, events and jobs of the request are part of it.
//  3. Complete stores the response (status, content type, body) and commits everything at
//     once. Abort rolls everything back (the middleware aborts on a 5xx or a panic, which
//     are not stored, so the client may retry).
//
// Services need one change to take part: write with idempotency.InTx(ctx, pool, fn) instead
// of postgres.InTx, pass the request's context down (the *fasthttp.RequestCtx itself, or a
// context derived from it), and do every query of fn through the tx it receives (a second
// pool connection per request could starve the pool). Without a scope in ctx, InTx is
// postgres.InTx.
//
// The scope's transaction is built to hold its pooled connection for as few round trips as
// it can (issue 22; pipetx.go): begin goes with the lock and the key read, a savepoint with
// the next statement, the jobs enqueued with jobs.InsertTx / jobs.InsertManyTx are inserted
// together before the commit, and the stored response goes with the commit.
//
// Keys are kept 24 hours (Config.TTL); an expired key is treated as new. Purge deletes
// expired rows.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/persistence/postgres"
)

// DefaultTTL is how long a key and its response are kept.
const DefaultTTL = 24 * time.Hour

// MaxKeyLength is the longest accepted key.
const MaxKeyLength = 255

// Config tunes Keys.
type Config struct {
	TTL time.Duration    // default DefaultTTL
	Now func() time.Time // default time.Now
}

// Keys is the idempotency-key store. Safe for concurrent use.
type Keys struct {
	pool *pgxpool.Pool
	ttl  time.Duration
	now  func() time.Time
}

// New returns the store on pool.
func New(pool *pgxpool.Pool, cfg Config) *Keys {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Keys{pool: pool, ttl: cfg.TTL, now: cfg.Now}
}

// Request identifies a keyed request.
type Request struct {
	MerchantID  uuid.UUID
	Environment string // sandbox or live
	Key         string
	Method      string
	Path        string // path and query string
	Body        []byte
}

func (r Request) hash() []byte {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(r.Method), []byte(r.Path), r.Body} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}

func (r Request) lockID() int64 {
	h := sha256.New()
	h.Write([]byte("idempotency\x00"))
	h.Write(r.MerchantID[:])
	h.Write([]byte(r.Environment + "\x00" + r.Key))
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]))
}

// Response is what is stored and replayed.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
}

// Errors of Begin.
var (
	// ErrKeyInUse: a request with this key is still running (409 IDEMPOTENCY_KEY_IN_USE).
	ErrKeyInUse error = &payments.Error{Code: "IDEMPOTENCY_KEY_IN_USE", Message: "a request with this idempotency key is still in progress; retry after it completes"}
	// ErrKeyReused: the key was used for another request (422 IDEMPOTENCY_KEY_REUSED).
	ErrKeyReused error = &payments.Error{Code: "IDEMPOTENCY_KEY_REUSED", Message: "this idempotency key was already used with a different request (method, path or body)"}
)

// ValidKey reports whether key is 1 to MaxKeyLength printable ASCII characters.
func ValidKey(key string) bool {
	if key == "" || len(key) > MaxKeyLength {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// Begin starts a keyed request. It returns either a Scope to run the request in (the caller
// must end it with Complete or Abort), or the stored response to replay, or ErrKeyInUse or
// ErrKeyReused, or a database error.
func (k *Keys) Begin(ctx context.Context, r Request) (*Scope, *Response, error) {
	if !ValidKey(r.Key) {
		return nil, nil, errors.New("idempotency: invalid key")
	}
	conn, err := k.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("idempotency: begin: %w", err)
	}
	tx := &pipeTx{conn: conn}
	scope := &Scope{keys: k, tx: tx, req: r, hash: r.hash()}
	// Begin, the lock and the read go in one round trip (a pipelined batch): they are still
	// three statements, run in order, so the read takes its snapshot after the lock is held
	// and sees the commit of whoever held it before.
	tx.pending = append(tx.pending, "begin")
	batch := &pgx.Batch{}
	batch.Queue(`select pg_try_advisory_xact_lock($1)`, r.lockID())
	batch.Queue(readKeySQL, r.MerchantID, r.Environment, r.Key)
	br := tx.SendBatch(ctx, batch)
	var locked bool
	if err := br.QueryRow().Scan(&locked); err != nil {
		_ = br.Close()
		scope.Abort(ctx)
		return nil, nil, fmt.Errorf("idempotency: lock: %w", err)
	}
	stored, hash, expired, err := k.scanKey(br.QueryRow())
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("idempotency: read key: %w", cerr)
	}
	if err != nil {
		scope.Abort(ctx)
		return nil, nil, err
	}
	if stored != nil && !expired {
		scope.Abort(ctx)
		if string(hash) != string(scope.hash) {
			return nil, nil, ErrKeyReused
		}
		return nil, stored, nil
	}
	if !locked {
		scope.Abort(ctx)
		return nil, nil, ErrKeyInUse
	}
	if stored != nil { // expired: the key starts over
		if _, err := tx.Exec(ctx, `delete from idempotency_keys where merchant_id = $1 and environment = $2 and key = $3`,
			r.MerchantID, r.Environment, r.Key); err != nil {
			scope.Abort(ctx)
			return nil, nil, fmt.Errorf("idempotency: delete expired key: %w", err)
		}
	}
	return scope, nil, nil
}

const readKeySQL = `select request_hash, status_code, content_type, response_body, expires_at
		from idempotency_keys where merchant_id = $1 and environment = $2 and key = $3`

// scanKey reads the row of readKeySQL: the stored response, its request hash and whether
// it expired; all nil when there is none.
func (k *Keys) scanKey(row pgx.Row) (*Response, []byte, bool, error) {
	var (
		resp    Response
		hash    []byte
		expires time.Time
	)
	err := row.Scan(&hash, &resp.Status, &resp.ContentType, &resp.Body, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("idempotency: read key: %w", err)
	}
	return &resp, hash, !k.now().Before(expires), nil
}

// Purge deletes expired keys and returns how many.
func (k *Keys) Purge(ctx context.Context) (int64, error) {
	tag, err := k.pool.Exec(ctx, `delete from idempotency_keys where expires_at <= $1`, k.now())
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Scope is one keyed request in flight: its transaction, held until Complete or Abort.
type Scope struct {
	keys *Keys
	req  Request
	hash []byte

	mu   sync.Mutex // a pgx.Tx is not safe for concurrent use
	tx   *pipeTx
	done bool
}

// Tx is the scope's transaction. Prefer InTx, which isolates a failing step in a savepoint.
func (s *Scope) Tx() pgx.Tx { return s.tx }

// Complete stores resp under the key and commits the scope's transaction (the request's
// changes and its stored response together). After an error nothing was committed.
func (s *Scope) Complete(ctx context.Context, resp Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errors.New("idempotency: scope already ended")
	}
	s.done = true
	now := s.keys.now().UTC()
	// The deferred jobs go in first; then the stored response and the commit travel in one
	// round trip. After an error nothing is committed (commitWith rolls back).
	err := s.tx.commitWith(ctx, `insert into idempotency_keys
			(merchant_id, environment, key, request_hash, method, path, status_code, content_type, response_body, created_at, expires_at)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		s.req.MerchantID, s.req.Environment, s.req.Key, s.hash, s.req.Method, s.req.Path,
		resp.Status, resp.ContentType, resp.Body, now, now.Add(s.keys.ttl))
	if err != nil {
		return fmt.Errorf("idempotency: store response and commit: %w", err)
	}
	return nil
}

// Abort rolls the scope's transaction back; calling it again, or after Complete, does
// nothing.
func (s *Scope) Abort(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	postgres.Rollback(ctx, s.tx)
}

// ContextKey is the key under which the scope is found in a context (ctx.Value): the
// ambient transaction of persistence/postgres (postgres.ScopeKey), so identity, which may not
// import payments, writes in the same scope (postgres.InScope). The middleware stores the
// scope with fasthttp's RequestCtx.SetUserValue(ContextKey(), scope), which
// RequestCtx.Value reads back.
func ContextKey() any { return postgres.ScopeKey() }

// WithScope returns a context carrying s (for callers that are not fasthttp handlers).
func WithScope(parent context.Context, s *Scope) context.Context {
	if s == nil { // a nil *Scope in the interface would be a scope to ScopeFrom's callers
		return parent
	}
	return postgres.WithScope(parent, s)
}

// ScopeFrom returns the scope in ctx, or nil.
func ScopeFrom(ctx context.Context) *Scope {
	s, _ := postgres.ScopeFrom(ctx).(*Scope)
	return s
}

// InTx runs fn in the idempotency scope of ctx when there is one (in a savepoint of the
// scope's transaction: an error of fn rolls back only fn's writes, and nothing is committed
// until the scope completes), else in a transaction of its own (postgres.InTx, with its
// retries). Services use it for every write a keyed request can make.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	return postgres.InScope(ctx, pool, fn)
}

// InTx runs fn in a savepoint of the scope's transaction (postgres.Scope).
func (s *Scope) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errors.New("idempotency: scope already ended")
	}
	sp, err := s.tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("idempotency: savepoint: %w", err)
	}
	if err := fn(sp); err != nil {
		postgres.Rollback(ctx, sp)
		return err
	}
	// The savepoint is not released: that would cost a round trip while the scope holds its
	// connection, and it changes nothing: fn's writes stay in the scope's transaction either
	// way, committed or rolled back with it (a later InTx nests its own savepoint, which
	// rolls back only its own writes).
	return nil
}
