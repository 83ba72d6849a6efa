// Package metadata owns the merchant's own key-value data on payment objects (issue 30):
// its limits, its validation (the one place every resource validates it), merging an update
// into what is stored, and the list filter. Stripe and Paystack call it the same.
//
// Metadata is a JSON object of strings: at most MaxKeys keys, each key 1 to MaxKeyLength
// characters, each value at most MaxValueLength characters. It is stored in a jsonb column
// (default '{}'), returned on the object, carried in the object's webhooks, and lists filter
// on it with metadata[key]=value (jsonb containment, served by a GIN index).
package metadata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"svc/payments"
)

// Limits.
const (
	MaxKeys        = 50
	MaxKeyLength   = 40
	MaxValueLength = 500
)

// Metadata is a merchant's keys and values. Nil and empty are the same: no metadata.
type Metadata map[string]string

// Field is the request field name of metadata.
const Field = "metadata"

// Parse decodes the raw JSON of a request's metadata field and validates it: an object whose
// values are strings, within the limits. Absent or null is (nil, false, nil). Every problem is
// a field error: "metadata" for the whole, "metadata.KEY" for one entry. With patch, an empty
// string value is allowed (it removes the key, see Merge) and the key count is checked after
// merging instead.
func Parse(raw json.RawMessage, patch bool) (Metadata, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, false, nil
	}
	var p payments.Problems
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		p.Add(Field, "must be an object of string values")
		return nil, true, p.Err()
	}
	m := make(Metadata, len(obj))
	for _, k := range sortedKeys(obj) {
		var s string
		if err := json.Unmarshal(obj[k], &s); err != nil {
			p.Add(Field+"."+k, "must be a string")
			continue
		}
		m[k] = s
	}
	checkEntries(&p, m, patch)
	if !patch {
		checkCount(&p, len(m))
	}
	if err := p.Err(); err != nil {
		return nil, true, err
	}
	return m, true, nil
}

// Validate checks m within the limits (for metadata built in code, not parsed).
func (m Metadata) Validate() error {
	var p payments.Problems
	checkEntries(&p, m, false)
	checkCount(&p, len(m))
	return p.Err()
}

func checkEntries(p *payments.Problems, m Metadata, patch bool) {
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch n := utf8.RuneCountInString(k); {
		case n == 0:
			p.Add(Field, "keys must not be empty")
		case n > MaxKeyLength:
			p.Add(Field+"."+k, fmt.Sprintf("key must be at most %d characters", MaxKeyLength))
		case strings.ContainsAny(k, "[]"):
			p.Add(Field+"."+k, "key must not contain [ or ]")
		case strings.ContainsRune(k, 0):
			p.Add(Field, "keys must not contain the NUL character (U+0000)")
		}
		// PostgreSQL's jsonb cannot hold U+0000: refused here rather than failing the write
		// (or, for an order's, the projection of the journal).
		if strings.ContainsRune(v, 0) {
			p.Add(Field+"."+k, "must not contain the NUL character (U+0000)")
		}
		if utf8.RuneCountInString(v) > MaxValueLength {
			p.Add(Field+"."+k, fmt.Sprintf("must be at most %d characters", MaxValueLength))
		}
		if v == "" && !patch {
			p.Add(Field+"."+k, "must not be empty")
		}
	}
}

func checkCount(p *payments.Problems, n int) {
	if n > MaxKeys {
		p.Add(Field, fmt.Sprintf("must have at most %d keys, got %d", MaxKeys, n))
	}
}

// Merge applies an update to stored metadata: each key of patch is set, an empty value
// removes the key. It checks the result's key count (a field error on "metadata").
func Merge(stored, patch Metadata) (Metadata, error) {
	out := make(Metadata, len(stored)+len(patch))
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range patch {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	var p payments.Problems
	checkCount(&p, len(out))
	return out, p.Err()
}

// OrEmpty is m, or an empty map for nil, for JSON ({} rather than null) and the database.
func (m Metadata) OrEmpty() Metadata {
	if m == nil {
		return Metadata{}
	}
	return m
}

// Filter is a list's metadata[key]=value condition: every pair must be present.
type Filter Metadata

// ParseFilter reads metadata[KEY]=VALUE query parameters (visit calls f with every
// parameter's name and value). At most MaxKeys of them; a key or value beyond the limits is
// a field error naming the parameter.
func ParseFilter(visit func(f func(name, value string))) (Filter, error) {
	var p payments.Problems
	out := Filter{}
	visit(func(name, value string) {
		k, ok := strings.CutPrefix(name, Field+"[")
		if !ok {
			return
		}
		k, ok = strings.CutSuffix(k, "]")
		switch {
		case !ok || k == "" || utf8.RuneCountInString(k) > MaxKeyLength:
			p.Add(name, fmt.Sprintf("must be metadata[KEY] with a key of 1 to %d characters", MaxKeyLength))
		case value == "" || utf8.RuneCountInString(value) > MaxValueLength:
			p.Add(name, fmt.Sprintf("must be 1 to %d characters", MaxValueLength))
		default:
			out[k] = value
		}
	})
	checkCount(&p, len(out))
	if err := p.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// JSON is the filter as the jsonb a containment condition (`metadata @> $n`) takes.
func (f Filter) JSON() string {
	b, _ := json.Marshal(map[string]string(f))
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
