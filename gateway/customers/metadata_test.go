package customers_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"svc/payments/events"
)

// TestCustomerMetadata (issue 30): a customer's metadata is stored, returned, merged on
// PATCH, filtered on in the list, refused beyond the limits with field errors, and carried
// in every customer.* webhook as it is when the event happens.
func TestCustomerMetadata(t *testing.T) {
	e := setup(t)
	type withMD struct {
		ID       string            `json:"id"`
		Metadata map[string]string `json:"metadata"`
	}
	var a, b withMD
	e.srv.Must(t, 201, "POST", "/v1/customers", e.m.SandboxKey,
		`{"email":"a@example.test","first_name":"Ada","last_name":"Obi","metadata":{"user_id":"u-1","plan":"pro"}}`).Decode(t, &a)
	e.srv.Must(t, 201, "POST", "/v1/customers", e.m.SandboxKey,
		`{"email":"b@example.test","first_name":"Bo","last_name":"Obi","metadata":{"user_id":"u-2","plan":"pro"}}`).Decode(t, &b)
	if a.Metadata["user_id"] != "u-1" || len(a.Metadata) != 2 {
		t.Fatalf("created %+v", a)
	}
	plain := e.create(t, e.m.SandboxKey, "c@example.test")

	eventData := func(typ events.Type, id string) map[string]any {
		t.Helper()
		var raw []byte
		if err := e.pool.QueryRow(context.Background(), `select data from events where merchant_id = $1 and type = $2 and data->>'id' = $3`,
			e.m.ID, string(typ), id).Scan(&raw); err != nil {
			t.Fatalf("%s of %s: %v", typ, id, err)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	if md, _ := eventData(events.CustomerCreated, a.ID)["metadata"].(map[string]any); md["user_id"] != "u-1" {
		t.Fatalf("customer.created carries %v", eventData(events.CustomerCreated, a.ID))
	}
	if md, ok := eventData(events.CustomerCreated, plain.ID)["metadata"].(map[string]any); !ok || len(md) != 0 {
		t.Fatalf("a customer without metadata: %v", eventData(events.CustomerCreated, plain.ID))
	}

	var got withMD
	e.srv.Must(t, 200, "PATCH", "/v1/customers/"+a.ID, e.m.SandboxKey, `{"metadata":{"plan":"","team":"t-9"}}`).Decode(t, &got)
	if len(got.Metadata) != 2 || got.Metadata["team"] != "t-9" || got.Metadata["user_id"] != "u-1" {
		t.Fatalf("patched %+v", got.Metadata)
	}
	// The next event about the customer carries the metadata of that moment.
	e.srv.Must(t, 200, "POST", "/v1/customers/"+a.ID+"/tier1-verification", e.m.SandboxKey,
		map[string]string{"bvn": "12345678901", "image_url": "https://x.test/a.jpg"})
	if md, _ := eventData(events.CustomerTier1Verified, a.ID)["metadata"].(map[string]any); md["team"] != "t-9" || md["plan"] != nil {
		t.Fatalf("customer.tier1_verified carries %v", md)
	}

	list := func(key, q string) []string {
		var page struct{ Items []withMD }
		e.srv.Must(t, 200, "GET", "/v1/customers?"+q, key, nil).Decode(t, &page)
		var out []string
		for _, c := range page.Items {
			out = append(out, c.ID)
		}
		return out
	}
	if got := list(e.m.SandboxKey, "metadata[user_id]=u-2"); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("filter user_id: %v", got)
	}
	if got := list(e.m.SandboxKey, "metadata[plan]=pro&limit=1"); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("filter plan: %v", got)
	}
	if got := list(e.other.SandboxKey, "metadata[user_id]=u-2"); len(got) != 0 {
		t.Fatalf("another merchant's filter found %v", got)
	}
	if got := list(e.m.LiveKey, "metadata[user_id]=u-2"); len(got) != 0 {
		t.Fatalf("the live environment found %v", got)
	}
	wantFields(t, e.srv.Do(t, "GET", "/v1/customers?metadata[x=1", e.m.SandboxKey, nil), "metadata[x")

	wantFields(t, e.srv.Do(t, "POST", "/v1/customers", e.m.SandboxKey,
		`{"email":"d@example.test","first_name":"D","last_name":"E","metadata":{"n":1,"`+strings.Repeat("k", 41)+`":"v"}}`),
		"metadata.n", "metadata."+strings.Repeat("k", 41))
	wantFields(t, e.srv.Do(t, "PATCH", "/v1/customers/"+a.ID, e.m.SandboxKey, `{"metadata":{"k":"`+strings.Repeat("v", 501)+`"}}`), "metadata.k")
	if got := list(e.m.SandboxKey, "email=d@example.test"); len(got) != 0 {
		t.Fatalf("a refused create made %v", got)
	}
}
