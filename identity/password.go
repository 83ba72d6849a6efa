package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters (OWASP: 19 MiB, 2 passes, 1 lane).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

var errBadHash = errors.New("identity: malformed password hash")

// Hasher hashes and verifies passwords with argon2id. Each hash takes 19 MiB, so a
// HashLimit bounds how many run at once and how many callers wait: beyond that a call fails
// at once with ErrHashBusy, so a login flood piles up neither memory nor goroutines.
type Hasher struct {
	limit *HashLimit
	dummy string // verified for unknown emails so the answer takes as long
}

// HashLimit is the memory bound of password hashing: at most slots hashes at once, at most
// queue callers waiting for a slot, each for at most maxWait. Safe for concurrent use; one
// limit may be shared by several Hashers (every identity service of a process under one
// bound), and whoever takes a slot with Acquire holds it until Release.
type HashLimit struct {
	sem     chan struct{}
	waiting atomic.Int64
	queue   int64         // callers allowed to wait for a slot
	maxWait time.Duration // longest wait for a slot
}

// NewHashLimit allows slots hashes at once (at least 1), with queue waiting callers (zero:
// 16 per slot), each for at most maxWait (zero: 2 s).
func NewHashLimit(slots, queue int, maxWait time.Duration) *HashLimit {
	if slots < 1 {
		slots = 1
	}
	if queue <= 0 {
		queue = 16 * slots
	}
	if maxWait <= 0 {
		maxWait = 2 * time.Second
	}
	return &HashLimit{sem: make(chan struct{}, slots), queue: int64(queue), maxWait: maxWait}
}

// NewHasher allows concurrent hashes at once (at least 1), with up to 16 waiting callers
// per slot, each for at most 2 s.
func NewHasher(concurrent int) *Hasher { return NewBoundedHasher(concurrent, 0, 0) }

// NewBoundedHasher is NewHasher with the waiting queue's length and longest wait (zero:
// 16 per slot, 2 s).
func NewBoundedHasher(concurrent, queue int, maxWait time.Duration) *Hasher {
	return NewLimitedHasher(NewHashLimit(concurrent, queue, maxWait))
}

// NewLimitedHasher hashes under limit (shared with whoever else holds it).
func NewLimitedHasher(limit *HashLimit) *Hasher {
	h := &Hasher{limit: limit}
	d, err := h.hash(rand.Text())
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	h.dummy = d
	return h
}

// Hash returns the PHC-style encoding $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	return h.hash(password)
}

func (h *Hasher) hash(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether password matches encoded, in constant time. The parameters are
// read from the encoding, so hashes made with older parameters still verify.
func (h *Hasher) Verify(ctx context.Context, encoded, password string) (bool, error) {
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	return verifyHash(encoded, password)
}

// VerifyDummy spends the time of one verification without a real hash: used when the email
// is unknown, so the answer cannot tell the two cases apart by timing. It fails like
// Verify when the hasher is busy (ErrHashBusy), so load does not tell them apart either.
func (h *Hasher) VerifyDummy(ctx context.Context, password string) error {
	_, err := h.Verify(ctx, h.dummy, password)
	return err
}

func (h *Hasher) acquire(ctx context.Context) error { return h.limit.Acquire(ctx) }

func (h *Hasher) release() { h.limit.Release() }

// Acquire takes a hashing slot: at once when one is free, else after waiting in the queue
// for at most the limit's wait. ErrHashBusy when the queue is full or the wait ran out;
// ctx's error when it ends first. Every nil answer must be followed by one Release.
func (l *HashLimit) Acquire(ctx context.Context) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return ErrHashBusy
	}
	defer l.waiting.Add(-1)
	t := time.NewTimer(l.maxWait)
	defer t.Stop()
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-t.C:
		return ErrHashBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release gives back a slot taken by Acquire.
func (l *HashLimit) Release() { <-l.sem }

func verifyHash(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<20 || t > 16 {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
