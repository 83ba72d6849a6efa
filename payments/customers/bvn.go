package customers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// BVNs are stored only as their last 4 digits and a keyed digest: HMAC-SHA256 under a server
// secret (svcd --bvn-hmac-key, SVC_BVN_HMAC_KEY). A bare SHA-256 of an 11-digit number is no
// protection (10^11 candidates are hashed in minutes), so it is not used: without the key a
// stolen table does not give the BVNs back, and the same BVN still gives the same digest, so
// duplicates can be found.

// MinBVNKeyLength is the shortest accepted BVN key, in bytes.
const MinBVNKeyLength = 32

// devBVNKey is used when no key is configured (tests, local development). It is public, so
// digests made with it protect nothing; svcd derives its own and warns when unconfigured.
var devBVNKey = sha256.Sum256([]byte("svc development BVN key: not for production"))

// WithBVNKey sets the secret BVN digests are keyed with and returns s; call it before use.
// Errors: a key shorter than MinBVNKeyLength bytes.
func (s *Service) WithBVNKey(key []byte) (*Service, error) {
	if len(key) < MinBVNKeyLength {
		return nil, errors.New("customers: the BVN key must be at least 32 bytes")
	}
	s.bvnKey = append([]byte(nil), key...)
	return s, nil
}

// bvnDigest is HMAC-SHA256(key, bvn).
func (s *Service) bvnDigest(bvn string) []byte {
	key := s.bvnKey
	if key == nil {
		key = devBVNKey[:]
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(bvn))
	return m.Sum(nil)
}

// ParseBVNKey reads a BVN key written as hex or base64 (at least 32 bytes; generate one with
// `openssl rand -hex 32`).
func ParseBVNKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) >= MinBVNKeyLength {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) >= MinBVNKeyLength {
			return b, nil
		}
	}
	return nil, errors.New("the BVN key must be at least 32 bytes, as hex or base64 (generate one with `openssl rand -hex 32`)")
}

// DevBVNKey derives a development key from seed (svcd uses the database URL when no key is
// configured, and says so loudly).
func DevBVNKey(seed string) []byte {
	sum := sha256.Sum256([]byte("svc development BVN key\x00" + seed))
	return sum[:]
}
