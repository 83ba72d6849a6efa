package sandbox_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	gwonramps "svc/gateway/onramps"
	"svc/payments/events"
)

// TestOnrampMetadata (issue 30): an onramp keeps the metadata it was created with (onramps
// cannot be changed), returns it, carries it in onramp.completed, and the list filters on
// it; metadata beyond the limits is a field error that creates nothing.
func TestOnrampMetadata(t *testing.T) {
	r := newRig(t)
	a := r.onramp(t, r.a.SandboxKey, 5000, map[string]any{"metadata": map[string]string{"cart": "c-1"}})
	b := r.onramp(t, r.a.SandboxKey, 6000, map[string]any{"metadata": map[string]string{"cart": "c-2"}})
	plain := r.onramp(t, r.a.SandboxKey, 7000, nil)

	got := decode[gwonramps.OnrampJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps/"+a, r.a.SandboxKey, nil))
	if got.Metadata["cart"] != "c-1" {
		t.Fatalf("read %+v", got)
	}
	if p := decode[gwonramps.OnrampJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps/"+plain, r.a.SandboxKey, nil)); p.Metadata == nil || len(p.Metadata) != 0 {
		t.Fatalf("an onramp without metadata: %+v", p.Metadata)
	}
	eventMD := func(id string) map[string]string {
		t.Helper()
		var raw []byte
		if err := r.pool.QueryRow(context.Background(), `select data from events where merchant_id = $1 and type = $2 and data->>'id' = $3`,
			r.a.ID, string(events.OnrampCompleted), id).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var d struct{ Metadata map[string]string }
		if err := json.Unmarshal(raw, &d); err != nil || d.Metadata == nil {
			t.Fatalf("onramp.completed of %s: %s %v", id, raw, err)
		}
		return d.Metadata
	}
	if md := eventMD(b); md["cart"] != "c-2" {
		t.Fatalf("onramp.completed carries %v", md)
	}
	if md := eventMD(plain); len(md) != 0 {
		t.Fatalf("onramp.completed of an onramp without metadata carries %v", md)
	}

	list := func(key, q string) []string {
		t.Helper()
		var page struct{ Items []gwonramps.OnrampJSON }
		if err := json.Unmarshal(r.srv.Must(t, 200, "GET", "/v1/payments/onramps?"+q, key, nil).Data, &page); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range page.Items {
			out = append(out, o.ID)
		}
		return out
	}
	if ids := list(r.a.SandboxKey, "metadata[cart]=c-2"); !slices.Equal(ids, []string{b}) {
		t.Fatalf("filter: %v", ids)
	}
	if ids := list(r.a.SandboxKey, "status=ACTIVE&metadata[cart]=c-2&limit=1"); !slices.Equal(ids, []string{b}) {
		t.Fatalf("filter with status: %v", ids)
	}
	if ids := list(r.b.SandboxKey, "metadata[cart]=c-2"); len(ids) != 0 {
		t.Fatalf("another merchant's filter found %v", ids)
	}
	if res := r.srv.Do(t, "GET", "/v1/payments/onramps?metadata[x=1", r.a.SandboxKey, nil); res.Status != 400 || !slices.Equal(res.Fields(), []string{"metadata[x"}) {
		t.Fatalf("bad filter: %d %v", res.Status, res.Fields())
	}
	long := strings.Repeat("k", 41)
	res := r.srv.Do(t, "POST", "/v1/payments/onramps", r.a.SandboxKey,
		map[string]any{"type": "TEMPORARY", "amount": 5000, "metadata": map[string]any{"n": 1, long: "v"}})
	if f := slices.Sorted(slices.Values(res.Fields())); res.Status != 400 || !slices.Equal(f, []string{"metadata." + long, "metadata.n"}) {
		t.Fatalf("bad metadata: %d %v", res.Status, f)
	}
	if ids := list(r.a.SandboxKey, ""); len(ids) != 3 {
		t.Fatalf("a refused create made an onramp: %v", ids)
	}
}
