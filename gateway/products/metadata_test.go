package products_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fresh empties *v before a decode: json.Unmarshal merges into an existing map.
func fresh[T any](v *T) *T {
	var zero T
	*v = zero
	return v
}

// TestMetadata (issue 30): metadata is stored and returned, merged on update (an empty value
// removes a key), filtered on in the list by containment, and refused with field errors
// beyond the limits, changing nothing.
func TestMetadata(t *testing.T) {
	srv, m := setup(t)
	type withMD struct {
		ID       string            `json:"id"`
		Metadata map[string]string `json:"metadata"`
	}
	var a, b, plain withMD
	srv.Must(t, 201, "POST", "/v1/products", m.SandboxKey, `{"name":"Tea","price":100,"metadata":{"sku":"T-1","shelf":"A"}}`).Decode(t, &a)
	srv.Must(t, 201, "POST", "/v1/products", m.SandboxKey, `{"name":"Cake","price":100,"metadata":{"sku":"C-1","shelf":"A"}}`).Decode(t, &b)
	srv.Must(t, 201, "POST", "/v1/products", m.SandboxKey, `{"name":"Pie","price":100}`).Decode(t, &plain)
	if a.Metadata["sku"] != "T-1" || len(a.Metadata) != 2 || plain.Metadata == nil || len(plain.Metadata) != 0 {
		t.Fatalf("created %+v %+v", a, plain)
	}
	var got withMD
	srv.Must(t, 200, "GET", "/v1/products/"+a.ID, m.SandboxKey, nil).Decode(t, fresh(&got))
	if got.Metadata["shelf"] != "A" {
		t.Fatalf("read %+v", got)
	}

	t.Run("update merges; an empty value removes", func(t *testing.T) {
		srv.Must(t, 200, "PATCH", "/v1/products/"+a.ID, m.SandboxKey, `{"metadata":{"shelf":"","color":"green"}}`).Decode(t, fresh(&got))
		if len(got.Metadata) != 2 || got.Metadata["sku"] != "T-1" || got.Metadata["color"] != "green" {
			t.Fatalf("%+v", got.Metadata)
		}
		srv.Must(t, 200, "PATCH", "/v1/products/"+a.ID, m.SandboxKey, `{"name":"Green tea"}`).Decode(t, fresh(&got))
		if len(got.Metadata) != 2 {
			t.Fatalf("an update without metadata changed it: %+v", got.Metadata)
		}
	})
	t.Run("list filters by containment", func(t *testing.T) {
		ids := func(q string) []string {
			var page struct{ Items []withMD }
			srv.Must(t, 200, "GET", "/v1/products?"+q, m.SandboxKey, nil).Decode(t, &page)
			var out []string
			for _, p := range page.Items {
				out = append(out, p.ID)
			}
			slices.Sort(out)
			return out
		}
		for q, want := range map[string][]string{
			"metadata[sku]=T-1":                       {a.ID},
			"metadata[shelf]=A":                       {b.ID},
			"metadata[sku]=C-1&metadata[shelf]=A":     {b.ID},
			"metadata[sku]=T-1&metadata[shelf]=A":     nil,
			"metadata[nope]=x":                        nil,
			"metadata%5Bcolor%5D=green&status=active": {a.ID},
		} {
			if got := ids(q); !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", q, got, want)
			}
		}
		if r := srv.Must(t, 400, "GET", "/v1/products?metadata[]=x", m.SandboxKey, nil); !slices.Equal(r.Fields(), []string{"metadata[]"}) {
			t.Errorf("bad filter: %s", r)
		}
	})
	t.Run("limits are field errors and change nothing", func(t *testing.T) {
		var many []string
		for i := range 51 {
			many = append(many, fmt.Sprintf(`"k%d":"v"`, i))
		}
		for body, field := range map[string]string{
			`{"name":"X","price":1,"metadata":{"n":1}}`:                                  "metadata.n",
			`{"name":"X","price":1,"metadata":["a"]}`:                                    "metadata",
			`{"name":"X","price":1,"metadata":{"` + strings.Repeat("k", 41) + `":"v"}}`:  "metadata." + strings.Repeat("k", 41),
			`{"name":"X","price":1,"metadata":{"k":"` + strings.Repeat("v", 501) + `"}}`: "metadata.k",
			`{"name":"X","price":1,"metadata":{` + strings.Join(many, ",") + `}}`:        "metadata",
		} {
			r := srv.Must(t, 400, "POST", "/v1/products", m.SandboxKey, body)
			if !slices.Equal(r.Fields(), []string{field}) {
				t.Errorf("%.60s: fields %v, want %s", body, r.Fields(), field)
			}
		}
		// 49 more keys on a product that has 2: 51, refused, and the product is unchanged.
		r := srv.Must(t, 400, "PATCH", "/v1/products/"+a.ID, m.SandboxKey, `{"metadata":{`+strings.Join(many[:49], ",")+`}}`)
		if !slices.Equal(r.Fields(), []string{"metadata"}) {
			t.Errorf("51 keys after merging: %v", r.Fields())
		}
		srv.Must(t, 200, "GET", "/v1/products/"+a.ID, m.SandboxKey, nil).Decode(t, fresh(&got))
		if len(got.Metadata) != 2 {
			t.Fatalf("a refused update changed the metadata: %+v", got.Metadata)
		}
	})
}
