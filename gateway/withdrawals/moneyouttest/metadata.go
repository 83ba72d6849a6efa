package moneyouttest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"svc/gateway/gatewaytest"
)

// EventMetadata returns the metadata in the data of m's event of type typ about the object
// id (issue 30: every webhook about an object carries the object's metadata).
func (r *Rig) EventMetadata(t testing.TB, m uuid.UUID, typ, id string) map[string]string {
	t.Helper()
	var raw []byte
	if err := r.Pool.QueryRow(context.Background(), `select data from events where merchant_id = $1 and type = $2 and data->>'id' = $3`,
		m, typ, id).Scan(&raw); err != nil {
		t.Fatalf("%s of %s: %v", typ, id, err)
	}
	var d struct {
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &d); err != nil || d.Metadata == nil {
		t.Fatalf("%s of %s carries no metadata: %s %v", typ, id, raw, err)
	}
	return d.Metadata
}

// ListIDs returns the ids of the first page of GET path?query as key sees it.
func (r *Rig) ListIDs(t testing.TB, key, path, query string) []string {
	t.Helper()
	var page struct {
		Items []struct {
			ID string `json:"id"`
		}
	}
	r.Srv.Must(t, 200, "GET", path+"?"+query, key, nil).Decode(t, &page)
	var out []string
	for _, it := range page.Items {
		out = append(out, it.ID)
	}
	return out
}

// WantMetadataFields fails unless res is a 400 naming exactly the fields given.
func WantMetadataFields(t testing.TB, res gatewaytest.Response, fields ...string) {
	t.Helper()
	if res.Status != 400 {
		t.Fatalf("status %d, want 400: %s", res.Status, res.Body)
	}
	got := slices.Sorted(slices.Values(res.Fields()))
	if !slices.Equal(got, slices.Sorted(slices.Values(fields))) {
		t.Fatalf("fields %v, want %v", got, fields)
	}
}

// LongKey is a metadata key one character beyond the limit.
var LongKey = strings.Repeat("k", 41)

// WantMetadataFilter checks the list at path against a metadata filter (e.g.
// "metadata[order]=o-2"): alone it finds exactly want; with the other filter given (one the
// wanted record does not meet, e.g. "status=SETTLED") it finds nothing; another merchant
// finds nothing with it; and a malformed filter key is a 400 naming it.
func (r *Rig) WantMetadataFilter(t testing.TB, path, filter, want, excluding string) {
	t.Helper()
	if ids := r.ListIDs(t, r.M.SandboxKey, path, filter); !slices.Equal(ids, []string{want}) {
		t.Fatalf("filter: %v", ids)
	}
	if ids := r.ListIDs(t, r.M.SandboxKey, path, excluding+"&"+filter); len(ids) != 0 {
		t.Fatalf("filter with %s: %v", excluding, ids)
	}
	if ids := r.ListIDs(t, r.Other.SandboxKey, path, filter); len(ids) != 0 {
		t.Fatalf("another merchant's filter found %v", ids)
	}
	WantMetadataFields(t, r.Srv.Do(t, "GET", path+"?metadata[x=1", r.M.SandboxKey, nil), "metadata[x")
}
