package customers

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

func TestBVNDigestIsKeyedNotABareHash(t *testing.T) {
	const bvn = "22212345678"
	bare := sha256.Sum256([]byte(bvn))
	key := bytes.Repeat([]byte{7}, 32)
	s, err := (&Service{}).WithBVNKey(key)
	if err != nil {
		t.Fatal(err)
	}
	got := s.bvnDigest(bvn)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(bvn))
	switch {
	case bytes.Equal(got, bare[:]):
		t.Fatal("the BVN digest is a bare SHA-256")
	case !hmac.Equal(got, m.Sum(nil)):
		t.Fatalf("digest %x is not HMAC-SHA256 under the key", got)
	case !bytes.Equal(got, s.bvnDigest(bvn)):
		t.Fatal("the digest is not deterministic (duplicates could not be found)")
	}
	other, _ := (&Service{}).WithBVNKey(bytes.Repeat([]byte{8}, 32))
	if bytes.Equal(other.bvnDigest(bvn), got) {
		t.Fatal("another key gives the same digest")
	}
	if dev := (&Service{}).bvnDigest(bvn); bytes.Equal(dev, bare[:]) || bytes.Equal(dev, got) {
		t.Fatal("without a key the digest must still be keyed (development key), and differ from a configured one")
	}
	if _, err := (&Service{}).WithBVNKey([]byte("short")); err == nil {
		t.Fatal("a short key was accepted")
	}
}
