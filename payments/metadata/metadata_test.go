package metadata_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"svc/payments"
	"svc/payments/metadata"
)

func fields(err error) []string {
	var ve *payments.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var out []string
	for _, f := range ve.Fields {
		out = append(out, f.Field)
	}
	return out
}

func TestParse(t *testing.T) {
	many := map[string]string{}
	for i := range 51 {
		many[strings.Repeat("k", 1+i%30)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	manyJSON, _ := json.Marshal(many)
	for _, c := range []struct {
		name, raw string
		patch     bool
		want      metadata.Metadata
		present   bool
		fields    []string
	}{
		{"absent", ``, false, nil, false, nil},
		{"null", `null`, false, nil, false, nil},
		{"empty", `{}`, false, metadata.Metadata{}, true, nil},
		{"strings", `{"order_id":"1001","user":"ada"}`, false, metadata.Metadata{"order_id": "1001", "user": "ada"}, true, nil},
		{"not an object", `["a"]`, false, nil, true, []string{"metadata"}},
		{"a string", `"x"`, false, nil, true, []string{"metadata"}},
		{"number value", `{"n":1,"ok":"x","b":true}`, false, nil, true, []string{"metadata.b", "metadata.n"}},
		{"nested", `{"o":{"a":"b"}}`, false, nil, true, []string{"metadata.o"}},
		{"long key", `{"` + strings.Repeat("k", 41) + `":"v"}`, false, nil, true, []string{"metadata." + strings.Repeat("k", 41)}},
		{"40-char key", `{"` + strings.Repeat("k", 40) + `":"v"}`, false, metadata.Metadata{strings.Repeat("k", 40): "v"}, true, nil},
		{"long value", `{"k":"` + strings.Repeat("v", 501) + `"}`, false, nil, true, []string{"metadata.k"}},
		{"500-char multibyte value", `{"k":"` + strings.Repeat("é", 500) + `"}`, false, metadata.Metadata{"k": strings.Repeat("é", 500)}, true, nil},
		{"empty key", `{"":"v"}`, false, nil, true, []string{"metadata"}},
		{"bracket key", `{"a[b]":"v"}`, false, nil, true, []string{"metadata.a[b]"}},
		{"empty value on create", `{"k":""}`, false, nil, true, []string{"metadata.k"}},
		{"NUL in a value", `{"k":"a\u0000b"}`, false, nil, true, []string{"metadata.k"}},
		{"NUL in a key", `{"a\u0000":"v"}`, false, nil, true, []string{"metadata"}},
		{"empty value on update removes", `{"k":""}`, true, metadata.Metadata{"k": ""}, true, nil},
		{"51 keys", string(manyJSON), false, nil, true, []string{"metadata"}},
		{"51 keys in a patch: counted after merging", string(manyJSON), true, metadata.Metadata(many), true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, present, err := metadata.Parse(json.RawMessage(c.raw), c.patch)
			if got := fields(err); !slices.Equal(got, c.fields) || (err != nil) != (c.fields != nil) {
				t.Fatalf("fields %v (%v), want %v", got, err, c.fields)
			}
			if present != c.present || (c.fields == nil && len(m) != len(c.want)) {
				t.Fatalf("%v %v, want %v %v", m, present, c.want, c.present)
			}
			for k, v := range c.want {
				if m[k] != v {
					t.Fatalf("%q = %q, want %q", k, m[k], v)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	got, err := metadata.Merge(metadata.Metadata{"a": "1", "b": "2"}, metadata.Metadata{"b": "", "c": "3"})
	if err != nil || len(got) != 2 || got["a"] != "1" || got["c"] != "3" {
		t.Fatalf("%v %v", got, err)
	}
	stored := metadata.Metadata{}
	for i := range 50 {
		stored[string(rune('A'+i))] = "v"
	}
	if _, err := metadata.Merge(stored, metadata.Metadata{"new": "v"}); !slices.Equal(fields(err), []string{"metadata"}) {
		t.Fatalf("51st key: %v", err)
	}
	if got, err := metadata.Merge(stored, metadata.Metadata{"A": "", "new": "v"}); err != nil || len(got) != 50 {
		t.Fatalf("swap a key: %d %v", len(got), err)
	}
}

func TestParseFilter(t *testing.T) {
	visit := func(pairs ...string) func(func(string, string)) {
		return func(f func(string, string)) {
			for i := 0; i+1 < len(pairs); i += 2 {
				f(pairs[i], pairs[i+1])
			}
		}
	}
	f, err := metadata.ParseFilter(visit("limit", "5", "metadata[order_id]", "1001", "metadata[user]", "ada"))
	if err != nil || len(f) != 2 || f.JSON() != `{"order_id":"1001","user":"ada"}` {
		t.Fatalf("%v %v", f, err)
	}
	if f, err := metadata.ParseFilter(visit("status", "x")); f != nil || err != nil {
		t.Fatalf("no filter: %v %v", f, err)
	}
	for _, bad := range [][]string{{"metadata[]", "x"}, {"metadata[k", "x"}, {"metadata[k]", ""}, {"metadata[" + strings.Repeat("k", 41) + "]", "x"}} {
		if _, err := metadata.ParseFilter(visit(bad...)); !slices.Equal(fields(err), []string{bad[0]}) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

// FuzzParse: any input either parses into metadata within the limits or is a field error;
// never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"b"}`, `{"a":1}`, `null`, `[`, `{"":""}`} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, patch bool) {
		m, present, err := metadata.Parse(raw, patch)
		if err != nil {
			if len(fields(err)) == 0 {
				t.Fatalf("not a field error: %v", err)
			}
			return
		}
		if present && !patch {
			if verr := m.Validate(); verr != nil {
				t.Fatalf("parsed %q but Validate says %v", raw, verr)
			}
		}
	})
}
