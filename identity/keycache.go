package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Cache serves API-key and merchant-settings lookups from memory. Entries are dropped at
// once in this process when a key is revoked or deleted or a merchant's settings change,
// and in every other process when PostgreSQL delivers the NOTIFY sent in the same
// transaction (channel svc_auth). While the listening connection is down the cache is
// bypassed, and it is emptied on every (re)connect, so a missed notification cannot keep
// a revoked key alive.
//
// The cache also batches API-key last_used_at: a request only stores a time in memory; an
// owned goroutine writes the batch every FlushEvery. Start runs both goroutines; Stop ends
// them and writes the last batch.
type Cache struct {
	pool       *pgxpool.Pool
	log        *slog.Logger
	now        func() time.Time
	flushEvery time.Duration

	mu        sync.RWMutex
	gen       uint64 // bumped by every invalidation; a load that raced one is not kept
	listening bool   // entries are trusted only while notifications can arrive
	keys      map[[sha256.Size]byte]*keyEntry
	keyHashes map[uuid.UUID][sha256.Size]byte
	merchants map[uuid.UUID]merchantSettings
	pending   map[uuid.UUID]int64 // last uses of evicted keys not yet written
	// misses remembers hashes no key has (until the unix-nanosecond expiry), so a client
	// repeating an unknown key costs no query. A new key cannot be among them: its hash is
	// unknown to anyone before it is made.
	misses map[[sha256.Size]byte]int64

	ready     chan struct{}
	readyOnce sync.Once
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

type keyEntry struct {
	rec      keyRecord
	lastUsed atomic.Int64 // unix nanoseconds of the latest use
	flushed  atomic.Int64 // the value last written to the database
}

// NewCache returns a stopped cache; call Start.
func NewCache(pool *pgxpool.Pool, log *slog.Logger, now func() time.Time, flushEvery time.Duration) *Cache {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	if flushEvery <= 0 {
		flushEvery = 5 * time.Second
	}
	return &Cache{
		pool: pool, log: log, now: now, flushEvery: flushEvery,
		keys:      map[[sha256.Size]byte]*keyEntry{},
		keyHashes: map[uuid.UUID][sha256.Size]byte{},
		merchants: map[uuid.UUID]merchantSettings{},
		pending:   map[uuid.UUID]int64{},
		misses:    map[[sha256.Size]byte]int64{},
		ready:     make(chan struct{}),
	}
}

// Start runs the listener and the last-used flusher until Stop.
func (c *Cache) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.listen(ctx) }()
	go func() { defer c.wg.Done(); c.flushLoop(ctx) }()
}

// Stop ends the goroutines and writes the pending last-used times.
func (c *Cache) Stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	c.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Flush(ctx); err != nil {
		c.log.Warn("api key last_used_at: final flush failed", "error", err)
	}
}

// Ready is closed once the listener has subscribed for the first time.
func (c *Cache) Ready() <-chan struct{} { return c.ready }

// Bounds of the unknown-key memory.
const (
	missTTL = 10 * time.Second
	maxMiss = 1 << 16
)

// cached answers from memory alone: (entry, true) for a cached key, (nil, true) for a hash
// recently looked up and not found, (nil, false) when only the database can tell.
func (c *Cache) cached(h [sha256.Size]byte) (*keyEntry, bool) {
	c.mu.RLock()
	e, hit := c.keys[h]
	exp, miss := c.misses[h]
	c.mu.RUnlock()
	if hit {
		return e, true
	}
	if miss && c.now().UnixNano() < exp {
		return nil, true
	}
	return nil, false
}

// key returns the record for a key hash, loading it on a miss. ok is false when no such
// key exists (remembered for missTTL).
func (c *Cache) key(ctx context.Context, hash []byte) (*keyEntry, bool, error) {
	var h [sha256.Size]byte
	copy(h[:], hash)
	c.mu.RLock()
	e, hit := c.keys[h]
	gen, listening := c.gen, c.listening
	c.mu.RUnlock()
	if hit {
		return e, true, nil
	}
	rec, err := keyByHash(ctx, c.pool, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		c.mu.Lock()
		if len(c.misses) >= maxMiss {
			clear(c.misses)
		}
		c.misses[h] = c.now().Add(missTTL).UnixNano()
		c.mu.Unlock()
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	e = &keyEntry{rec: rec}
	if rec.LastUsed != nil {
		e.lastUsed.Store(rec.LastUsed.UnixNano())
		e.flushed.Store(rec.LastUsed.UnixNano())
	}
	if listening {
		c.mu.Lock()
		if c.gen == gen && c.listening {
			if old, ok := c.keys[h]; ok {
				e = old
			} else {
				c.keys[h] = e
				c.keyHashes[rec.ID] = h
			}
		}
		c.mu.Unlock()
	}
	return e, true, nil
}

// settings returns a merchant's settings, loading them on a miss.
func (c *Cache) settings(ctx context.Context, id uuid.UUID) (merchantSettings, bool, error) {
	c.mu.RLock()
	s, hit := c.merchants[id]
	gen, listening := c.gen, c.listening
	c.mu.RUnlock()
	if hit {
		return s, true, nil
	}
	s, err := settingsByID(ctx, c.pool, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	if listening {
		c.mu.Lock()
		if c.gen == gen && c.listening {
			c.merchants[id] = s
		}
		c.mu.Unlock()
	}
	return s, true, nil
}

// lastUsedEvery is the resolution of last_used_at: a key's use is recorded at most once
// per interval, so the flusher writes each key at most once a minute however busy it is.
const lastUsedEvery = time.Minute

// touch records a use of a key in memory, at most once per lastUsedEvery per key; the
// flusher writes the batch (never a query on the request path). A loaded entry starts
// from the stored last_used_at, so a reload (or an uncached entry while the listener is
// down) does not write more often either.
func (c *Cache) touch(e *keyEntry, now time.Time) {
	n := now.UnixNano()
	if n-e.lastUsed.Load() < int64(lastUsedEvery) {
		return
	}
	e.lastUsed.Store(n)
	c.mu.RLock()
	_, cached := c.keyHashes[e.rec.ID]
	c.mu.RUnlock()
	if !cached { // an uncached entry (listener down): keep the use in pending
		c.mu.Lock()
		c.pending[e.rec.ID] = max(c.pending[e.rec.ID], n)
		c.mu.Unlock()
	}
}

// InvalidateKey drops a key from this process's cache.
func (c *Cache) InvalidateKey(id uuid.UUID) {
	c.mu.Lock()
	c.gen++
	if h, ok := c.keyHashes[id]; ok {
		c.evictLocked(h)
	}
	c.mu.Unlock()
}

// InvalidateMerchant drops a merchant's settings from this process's cache.
func (c *Cache) InvalidateMerchant(id uuid.UUID) {
	c.mu.Lock()
	c.gen++
	delete(c.merchants, id)
	c.mu.Unlock()
}

func (c *Cache) evictLocked(h [sha256.Size]byte) {
	e := c.keys[h]
	if e == nil {
		return
	}
	if lu := e.lastUsed.Load(); lu > e.flushed.Load() {
		c.pending[e.rec.ID] = max(c.pending[e.rec.ID], lu)
	}
	delete(c.keys, h)
	delete(c.keyHashes, e.rec.ID)
}

// clearLocked empties the cache (keeping unwritten last uses).
func (c *Cache) clearLocked() {
	c.gen++
	for h := range c.keys {
		c.evictLocked(h)
	}
	clear(c.merchants)
}

func (c *Cache) setListening(on bool) {
	c.mu.Lock()
	c.listening = on
	c.clearLocked()
	c.mu.Unlock()
}

func (c *Cache) handle(payload string) {
	kind, idText, _ := strings.Cut(payload, ":")
	id, err := uuid.Parse(idText)
	if err != nil {
		return
	}
	switch kind {
	case "key":
		c.InvalidateKey(id)
	case "merchant":
		c.InvalidateMerchant(id)
	}
}

func (c *Cache) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := c.listenOnce(ctx)
		c.setListening(false)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("auth cache: notification listener down; serving lookups from the database", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (c *Cache) listenOnce(ctx context.Context) error {
	cfg := c.pool.Config().ConnConfig.Copy()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "listen "+notifyChannel); err != nil {
		return err
	}
	c.setListening(true)
	c.readyOnce.Do(func() { close(c.ready) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		c.handle(n.Payload)
	}
}

func (c *Cache) flushLoop(ctx context.Context) {
	t := time.NewTicker(c.flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.Flush(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("api key last_used_at: flush failed; will retry", "error", err)
			}
		}
	}
}

// Flush writes every last-used time not yet written, in one statement.
func (c *Cache) Flush(ctx context.Context) error {
	var ids []uuid.UUID
	var at []time.Time
	var done []func()
	c.mu.Lock()
	for id, n := range c.pending {
		ids = append(ids, id)
		at = append(at, time.Unix(0, n).UTC())
	}
	pending := c.pending
	c.pending = map[uuid.UUID]int64{}
	for _, e := range c.keys {
		lu := e.lastUsed.Load()
		if lu > e.flushed.Load() {
			ids = append(ids, e.rec.ID)
			at = append(at, time.Unix(0, lu).UTC())
			done = append(done, func() { e.flushed.Store(lu) })
		}
	}
	c.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	if err := flushLastUsed(ctx, c.pool, ids, at); err != nil {
		c.mu.Lock() // put the evicted ones back for the next round
		for id, n := range pending {
			c.pending[id] = max(c.pending[id], n)
		}
		c.mu.Unlock()
		return err
	}
	for _, f := range done {
		f()
	}
	return nil
}
