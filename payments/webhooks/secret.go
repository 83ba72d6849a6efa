package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// newSecret returns whsec_ followed by 32 random bytes in unpadded base64url (43 characters).
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// Cipher encrypts endpoint secrets at rest with AES-256-GCM. The ciphertext is a version
// byte, a random 12-byte nonce and the sealed secret; the endpoint id is the additional
// data, so a ciphertext copied to another row does not decrypt.
type Cipher struct {
	aead cipher.AEAD
	dev  bool
}

const cipherVersion = 1

// ParseKey reads a 32-byte key written as 64 hex characters or as base64 (standard or URL,
// padded or not).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, errors.New("webhook secret key must be 32 bytes, as 64 hex characters or base64 (generate one with `openssl rand -hex 32`)")
}

// NewCipher returns a Cipher for a 32-byte key.
func NewCipher(key []byte) (*Cipher, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("webhook secret key is %d bytes, want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Cipher{aead: aead}, nil
}

// DevCipher derives a development key from seed (svcd uses the database URL, so the key is
// stable across restarts of one local setup). It is not a secret: anyone who knows the seed
// can decrypt. Services built with it refuse live endpoints (ErrNoLiveKey).
func DevCipher(seed string) *Cipher {
	sum := sha256.Sum256([]byte("svc development webhook secret key\x00" + seed))
	c, _ := NewCipher(sum[:])
	c.dev = true
	return c
}

// Dev reports whether this is a development key.
func (c *Cipher) Dev() bool { return c.dev }

func (c *Cipher) seal(secret string, ad []byte) []byte {
	out := make([]byte, 1, 1+c.aead.NonceSize()+len(secret)+c.aead.Overhead())
	out[0] = cipherVersion
	nonce := make([]byte, c.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out = append(out, nonce...)
	return c.aead.Seal(out, nonce, []byte(secret), ad)
}

// openPair opens an endpoint's secret and, during a rotation's overlap, the one it replaced
// ("" otherwise).
func (c *Cipher) openPair(sp secretPair, ad []byte) (current, previous string, err error) {
	if current, err = c.open(sp.current, ad); err != nil {
		return "", "", err
	}
	if sp.previous != nil {
		if previous, err = c.open(sp.previous, ad); err != nil {
			return "", "", err
		}
	}
	return current, previous, nil
}

func (c *Cipher) open(sealed, ad []byte) (string, error) {
	n := c.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != cipherVersion {
		return "", errors.New("webhook secret: unknown ciphertext format")
	}
	plain, err := c.aead.Open(nil, sealed[1:1+n], sealed[1+n:], ad)
	if err != nil {
		return "", errors.New("webhook secret: cannot decrypt (wrong --webhook-secret-key?)")
	}
	return string(plain), nil
}
