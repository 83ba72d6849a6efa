package identity

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"

	"github.com/google/uuid"
)

// API key format (spec "API key"): prefix + 32 random base62 characters.
const (
	LivePrefix       = "svc_sk_live_"
	TestPrefix       = "svc_sk_test_"
	keyRandomLen     = 32
	keyPrefixStored  = 20 // characters kept in clear (key_prefix)
	refreshPrefix    = "svc_rt_"
	refreshRandBytes = 32
)

var livePrefixB, testPrefixB = []byte(LivePrefix), []byte(TestPrefix)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewAPIKey makes a key for env from crypto/rand, with its hash and stored prefix.
func NewAPIKey(env Environment) (key string, hash []byte, prefix string) {
	p := TestPrefix
	if env == Live {
		p = LivePrefix
	}
	var b strings.Builder
	b.Grow(len(p) + keyRandomLen)
	b.WriteString(p)
	buf := make([]byte, 64)
	for n := 0; n < keyRandomLen; {
		if _, err := rand.Read(buf); err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		for _, c := range buf {
			if c >= 248 { // 248 = 4*62: rejection keeps the characters uniform
				continue
			}
			b.WriteByte(base62[c%62])
			n++
			if n == keyRandomLen {
				break
			}
		}
	}
	key = b.String()
	return key, HashSecret(key), key[:keyPrefixStored]
}

// KeyEnvironment reads the environment from a key's prefix and checks its shape.
func KeyEnvironment(key string) (Environment, bool) { return keyEnvironment([]byte(key)) }

func keyEnvironment(key []byte) (Environment, bool) {
	var env Environment
	switch {
	case bytes.HasPrefix(key, livePrefixB):
		env = Live
	case bytes.HasPrefix(key, testPrefixB):
		env = Sandbox
	default:
		return "", false
	}
	rest := key[len(LivePrefix):] // both prefixes have the same length
	if len(rest) != keyRandomLen {
		return "", false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return "", false
		}
	}
	return env, true
}

// HashSecret is the SHA-256 under which API keys and refresh tokens are stored. Both are
// 190+ bits of crypto/rand, so an unsalted fast hash is enough.
func HashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// newRefreshToken makes an opaque refresh token and its hash.
func newRefreshToken() (string, []byte) {
	b := make([]byte, refreshRandBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	t := refreshPrefix + base64.RawURLEncoding.EncodeToString(b)
	return t, HashSecret(t)
}

// wellFormedRefresh checks the shape of a refresh token before any lookup.
func wellFormedRefresh(t string) bool {
	if !strings.HasPrefix(t, refreshPrefix) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(t[len(refreshPrefix):])
	return err == nil && len(b) == refreshRandBytes
}

// newOTP returns a uniformly random 6-digit code.
func newOTP() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// otpHash binds a code to its row, keyed with the server's pepper: a leaked table alone
// does not give the codes away by trying all million of them.
func otpHash(pepper []byte, id uuid.UUID, code string) []byte {
	m := hmac.New(sha256.New, pepper)
	m.Write(id[:])
	m.Write([]byte(code))
	return m.Sum(nil)
}
