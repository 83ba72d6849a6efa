package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Headers of a delivery.
const (
	HeaderSignature = "X-Svc-Signature" // sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>; two, space-separated, during a rotation's overlap
	HeaderEventID   = "X-Svc-Event-Id"  // the event's id (also "id" in the body)
	HeaderTimestamp = "X-Svc-Timestamp" // Unix seconds of this attempt (also "timestamp" in the body)
	HeaderTestMode  = "X-Svc-Test-Mode" // "true" on test sends only
)

// Errors of Verify.
var (
	ErrBadSignatureHeader = errors.New("webhook: signature header is not sha256=<hex>")
	ErrSignatureMismatch  = errors.New("webhook: signature does not match the body")
	ErrTimestampOutside   = errors.New("webhook: timestamp outside the tolerance")
	ErrNoTimestamp        = errors.New("webhook: body has no valid timestamp")
)

// Sign returns the X-Svc-Signature value of body under secret: "sha256=" and the hex
// HMAC-SHA256 of the exact bytes, keyed with the whole secret string (whsec_ included).
func Sign(body []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a delivery as a merchant receives it: body is the raw request body, exactly
// as read (before any JSON parsing), header the X-Svc-Signature value, secret the endpoint's
// whsec_ secret. The digests are compared in constant time.
//
// During a secret rotation's overlap the header carries two signatures separated by a
// space (the new secret's, then the replaced one's, as Standard Webhooks does); the body is
// authentic when any of them matches secret, so a receiver holding either secret accepts
// it. Entries that are not sha256=<hex> are skipped (a later scheme); none at all is
// ErrBadSignatureHeader.
//
// With tolerance > 0 it also checks that the body's signed "timestamp" (the time of this
// attempt) is within tolerance of now, which refuses an old delivery replayed by someone
// who captured it. Five minutes is a sensible tolerance; 0 skips the check.
//
// Errors: ErrBadSignatureHeader, ErrSignatureMismatch, ErrNoTimestamp, ErrTimestampOutside.
func Verify(body []byte, header string, secret string, tolerance time.Duration, now time.Time) error {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	want := m.Sum(nil)
	parsed, matched := 0, false
	for _, sig := range strings.Fields(header) {
		hexSig, ok := strings.CutPrefix(sig, "sha256=")
		if !ok {
			continue
		}
		got, err := hex.DecodeString(hexSig)
		if err != nil || len(got) != sha256.Size {
			continue
		}
		parsed++
		if hmac.Equal(got, want) {
			matched = true
		}
	}
	if parsed == 0 {
		return ErrBadSignatureHeader
	}
	if !matched {
		return ErrSignatureMismatch
	}
	if tolerance <= 0 {
		return nil
	}
	var env struct {
		Timestamp string `json:"timestamp"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return ErrNoTimestamp
	}
	ts, err := time.Parse(time.RFC3339Nano, env.Timestamp)
	if err != nil {
		return ErrNoTimestamp
	}
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: sent at %s, now %s", ErrTimestampOutside, ts.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}
