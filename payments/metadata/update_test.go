package metadata_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"testing"

	"svc/payments"
	"svc/payments/metadata"
)

// TestUpdate: an update's metadata field applied to the stored metadata, as the products,
// checkout links and invoices updates use it: absent and null keep it, keys are set and
// removed, a bad entry or a key count past the limit is a field problem that keeps it.
func TestUpdate(t *testing.T) {
	stored := metadata.Metadata{"a": "1", "b": "2"}
	full := metadata.Metadata{}
	for i := range metadata.MaxKeys {
		full["k"+strconv.Itoa(i)] = "v"
	}
	for _, c := range []struct {
		name   string
		raw    string
		stored metadata.Metadata
		want   metadata.Metadata
		fields []string
	}{
		{"absent", ``, stored, stored, nil},
		{"null", `null`, stored, stored, nil},
		{"set and remove", `{"b": "", "c": "3"}`, stored, metadata.Metadata{"a": "1", "c": "3"}, nil},
		{"not an object", `[1]`, stored, stored, []string{"metadata"}},
		{"a value not a string", `{"c": 3}`, stored, stored, []string{"metadata.c"}},
		{"one key too many", `{"new": "v"}`, full, nil, []string{"metadata"}},
	} {
		var p payments.Problems
		got := maps.Clone(c.stored)
		if err := metadata.Update(&p, json.RawMessage(c.raw), &got); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(fields(p.Err()), c.fields) {
			t.Errorf("%s: problems %v, want %v", c.name, p.Err(), c.fields)
		}
		if c.want != nil && !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
