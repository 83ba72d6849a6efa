package checkout_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestCommerceMetadata (issue 30): invoices and checkout links take metadata on create,
// return it, merge it on PATCH (an empty value removes a key), filter their lists on it, refuse
// it beyond the limits with field errors, and a link's metadata rides in the
// checkout.payment.completed webhook of its payment.
func TestCommerceMetadata(t *testing.T) {
	e := setup(t)
	key := e.a.SandboxKey
	type withMD struct {
		ID       string            `json:"id"`
		Slug     string            `json:"slug"`
		Metadata map[string]string `json:"metadata"`
	}
	decode := func(r interface{ Decode(testing.TB, any) }) withMD {
		var v withMD
		r.Decode(t, &v)
		return v
	}
	ids := func(path string) []string {
		var page struct{ Items []withMD }
		e.srv.Must(t, 200, "GET", path, key, nil).Decode(t, &page)
		var out []string
		for _, it := range page.Items {
			out = append(out, it.ID)
		}
		return out
	}

	for _, res := range []struct{ name, path, body, other string }{
		{"invoices", "/v1/invoices", `{"title":"Work","customer_name":"Ada","customer_email":"ada@example.test","line_items":[{"description":"Tea","quantity":1,"unit_price":100}],"metadata":{"order_id":"1001","channel":"web"}}`,
			`{"title":"Work","customer_name":"Bo","customer_email":"bo@example.test","line_items":[{"description":"Tea","quantity":1,"unit_price":100}],"metadata":{"order_id":"1002","channel":"web"}}`},
		{"checkout links", "/v1/checkout-links", `{"title":"Donate","amount":500,"metadata":{"order_id":"1001","channel":"web"}}`,
			`{"title":"Donate","amount":500,"metadata":{"order_id":"1002","channel":"web"}}`},
	} {
		t.Run(res.name, func(t *testing.T) {
			a := decode(e.srv.Must(t, 201, "POST", res.path, key, res.body))
			b := decode(e.srv.Must(t, 201, "POST", res.path, key, res.other))
			if a.Metadata["order_id"] != "1001" || len(a.Metadata) != 2 {
				t.Fatalf("created %+v", a)
			}
			if got := decode(e.srv.Must(t, 200, "GET", res.path+"/"+a.ID, key, nil)); got.Metadata["channel"] != "web" {
				t.Fatalf("read %+v", got)
			}
			got := decode(e.srv.Must(t, 200, "PATCH", res.path+"/"+a.ID, key, `{"metadata":{"channel":"","ref":"r-1"}}`))
			if len(got.Metadata) != 2 || got.Metadata["ref"] != "r-1" || got.Metadata["order_id"] != "1001" {
				t.Fatalf("patched %+v", got.Metadata)
			}
			if got := ids(res.path + "?metadata[order_id]=1002"); !slices.Equal(got, []string{b.ID}) {
				t.Fatalf("filter: %v", got)
			}
			if got := ids(res.path + "?metadata[channel]=web"); !slices.Equal(got, []string{b.ID}) {
				t.Fatalf("filter after the removal: %v", got)
			}
			if got := ids(res.path + "?metadata[order_id]=1002&limit=1&page=2"); len(got) != 0 {
				t.Fatalf("second page: %v", got)
			}
			var other struct{ Items []withMD }
			e.srv.Must(t, 200, "GET", res.path+"?metadata[order_id]=1002", e.b.SandboxKey, nil).Decode(t, &other)
			if len(other.Items) != 0 {
				t.Fatalf("another merchant's filter found %v", other.Items)
			}
			bad := strings.Replace(res.body, `"order_id":"1001"`, `"order_id":1001,"`+strings.Repeat("k", 41)+`":"v"`, 1)
			r := e.srv.Must(t, 400, "POST", res.path, key, bad)
			if f := r.Fields(); !slices.Equal(slices.Sorted(slices.Values(f)), []string{"metadata." + strings.Repeat("k", 41), "metadata.order_id"}) {
				t.Fatalf("bad metadata: %v", r.Fields())
			}
			r = e.srv.Must(t, 400, "PATCH", res.path+"/"+a.ID, key, `{"metadata":{"ref":"`+strings.Repeat("v", 501)+`"}}`)
			if !slices.Equal(r.Fields(), []string{"metadata.ref"}) {
				t.Fatalf("bad patch: %v", r.Fields())
			}
			if got := decode(e.srv.Must(t, 200, "GET", res.path+"/"+a.ID, key, nil)); got.Metadata["ref"] != "r-1" {
				t.Fatalf("a refused update changed %+v", got.Metadata)
			}
		})
	}

	t.Run("the payment's webhook carries the link's metadata", func(t *testing.T) {
		l := decode(e.srv.Must(t, 201, "POST", "/v1/checkout-links", key, `{"title":"Print","amount":100,"slug":"md-print","metadata":{"cart":"c-77"}}`))
		pay := paymentOf(t, e.srv.Do(t, "POST", "/pay/md-print/transfer", "", nil))
		b, h := form("payment", pay)
		if r := e.srv.Do(t, "POST", "/pay/md-print/simulate", "", b, h...); r.Status != 303 || strings.Contains(r.Header["Location"], "notice") {
			t.Fatal(r, r.Header["Location"])
		}
		var raw []byte
		if err := e.pool.QueryRow(context.Background(), `select data from events where type = 'checkout.payment.completed'
			and data->>'checkout_link_id' = $1`, l.ID).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var data struct{ Metadata map[string]string }
		_ = json.Unmarshal(raw, &data)
		if data.Metadata["cart"] != "c-77" {
			t.Fatalf("checkout.payment.completed %s", raw)
		}
	})
}
