package recipients_test

import (
	"slices"
	"strings"
	"testing"

	"svc/gateway/withdrawals/moneyouttest"
)

// TestRecipientMetadata (issue 30): a recipient keeps the metadata it was created with,
// returns it, and the list filters on it; metadata beyond the limits is a field error and
// creates nothing. Recipients cannot be changed, so neither can their metadata.
func TestRecipientMetadata(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	bank := func(acct string, md string) string {
		return `{"type":"BANK_ACCOUNT","bank_account":{"account_number":"` + acct + `","bank_code":"058","account_name":"Ada Obi"},"metadata":` + md + `}`
	}
	type withMD struct {
		ID       string            `json:"id"`
		Metadata map[string]string `json:"metadata"`
	}
	var a, b withMD
	r.Srv.Must(t, 201, "POST", "/v1/recipients", r.M.SandboxKey, bank("0123456789", `{"vendor":"v-1"}`)).Decode(t, &a)
	r.Srv.Must(t, 201, "POST", "/v1/recipients", r.M.SandboxKey, bank("0123456788", `{"vendor":"v-2"}`)).Decode(t, &b)
	var got withMD
	r.Srv.Must(t, 200, "GET", "/v1/recipients/"+a.ID, r.M.SandboxKey, nil).Decode(t, &got)
	if got.Metadata["vendor"] != "v-1" {
		t.Fatalf("read %+v", got)
	}
	list := func(key, q string) []string {
		var page struct{ Items []withMD }
		r.Srv.Must(t, 200, "GET", "/v1/recipients?"+q, key, nil).Decode(t, &page)
		var out []string
		for _, it := range page.Items {
			out = append(out, it.ID)
		}
		return out
	}
	if ids := list(r.M.SandboxKey, "metadata[vendor]=v-2"); !slices.Equal(ids, []string{b.ID}) {
		t.Fatalf("filter: %v", ids)
	}
	if ids := list(r.Other.SandboxKey, "metadata[vendor]=v-2"); len(ids) != 0 {
		t.Fatalf("another merchant's filter found %v", ids)
	}
	res := r.Srv.Must(t, 400, "POST", "/v1/recipients", r.M.SandboxKey, bank("0123456787", `{"vendor":["x"],"`+strings.Repeat("k", 41)+`":"v"}`))
	if f := res.Fields(); !slices.Equal(slices.Sorted(slices.Values(f)), []string{"metadata." + strings.Repeat("k", 41), "metadata.vendor"}) {
		t.Fatalf("bad metadata: %v", f)
	}
	if ids := list(r.M.SandboxKey, ""); len(ids) != 2 {
		t.Fatalf("a refused create made a recipient: %v", ids)
	}
}
