package checkout_test

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/gateway/auth/authtest"
	gc "svc/gateway/checkout"
	"svc/gateway/gatewaytest"
	gi "svc/gateway/invoices"
	gp "svc/gateway/products"
	pc "svc/payments/checkout"
	"svc/payments/checkout/checkouttest"
	"svc/payments/events"
	pi "svc/payments/invoices"
	"svc/payments/jobs"
	pp "svc/payments/products"
	"svc/persistence/postgres/pgtest"
)

// The hosted page shows a notice only for a code it knows: ?notice= cannot make a
// merchant's payment page display text of the sender's choosing (a phishing aid).
func TestNoticeIsACodeNotText(t *testing.T) {
	e := setup(t)
	l := e.link(t, e.a.SandboxKey, `{"title":"Print","amount":5,"slug":"notice-print"}`)
	free := "Pay to account 0123456789 at Evil Bank instead"
	r := e.srv.Must(t, 200, "GET", "/pay/notice-print?notice="+url.QueryEscape(free), "", nil)
	if strings.Contains(string(r.Body), "Evil Bank") {
		t.Fatal("the page shows free text from the query string")
	}

	e.srv.Must(t, 200, "PATCH", "/v1/checkout-links/"+l.ID, e.a.SandboxKey, `{"status":"inactive"}`)
	r = e.srv.Do(t, "POST", "/pay/notice-print/transfer", "", nil)
	loc, err := url.Parse(r.Header["Location"])
	if r.Status != 303 || err != nil {
		t.Fatalf("%s %v", r, err)
	}
	if got := loc.Query().Get("notice"); got != "link_inactive" {
		t.Fatalf("notice %q, want the code link_inactive", got)
	}
	page := e.srv.Do(t, "GET", loc.RequestURI(), "", nil)
	if !strings.Contains(string(page.Body), "not accepting payments") {
		t.Fatalf("the code's sentence is missing: %s", page.Body)
	}
}

// /pay/* needs no credentials, so each client address gets its own budget: reads (page,
// status poll) and writes (payment attempts) apart, IPv6 by /64.
func TestPayIsRateLimitedPerClientAddress(t *testing.T) {
	pool, _ := pgtest.New(t)
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	inv := pi.NewService(pool, client, pc.NewInvoiceLinks("https://pay.example/", nil), nil)
	links := pc.NewService(pool, inv, pc.Config{BaseURL: "https://pay.example/",
		Onramps: &checkouttest.Onramps{Pool: pool, Completer: pc.NewCompleter(events.NewRecorder(client), nil)}})
	routes := gc.New(links).WithPayLimits(gc.PayLimits{ReadsPerMinute: 5, WritesPerMinute: 2,
		// the test's client address comes from a header (the in-memory listener has none)
		ClientIP: func(ctx *fasthttp.RequestCtx) netip.Addr {
			a, _ := netip.ParseAddr(string(ctx.Request.Header.Peek("X-Test-Client")))
			return a
		}})
	srv := gatewaytest.New(t, pool, gp.New(pp.NewService(pool, nil)), gi.New(inv), routes)
	m := authtest.New(t, pool)
	srv.Must(t, 201, "POST", "/v1/checkout-links", m.SandboxKey, `{"title":"Print","amount":5,"slug":"limited"}`)

	from := func(addr string) []string { return []string{"X-Test-Client", addr} }
	for i := 0; i < 5; i++ {
		srv.Must(t, 200, "GET", "/pay/limited", "", nil, from("203.0.113.7")...)
	}
	r := srv.Do(t, "GET", "/pay/limited", "", nil, from("203.0.113.7")...)
	if r.Status != 429 || r.Header["Retry-After"] == "" {
		t.Fatalf("sixth page view in a minute: %d %v", r.Status, r.Header)
	}
	if r := srv.Do(t, "GET", "/pay/limited/status?payment=x", "", nil, from("203.0.113.7")...); r.Status != 429 || r.Message != "RATE_LIMITED" {
		t.Fatalf("status poll over the limit: %s", r)
	}
	// another address is not affected
	srv.Must(t, 200, "GET", "/pay/limited", "", nil, from("198.51.100.1")...)

	// writes have their own, smaller budget
	for i := 0; i < 2; i++ {
		if r := srv.Do(t, "POST", "/pay/limited/transfer", "", nil, from("203.0.113.7")...); r.Status != 303 {
			t.Fatalf("payment attempt %d: %s", i, r)
		}
	}
	if r := srv.Do(t, "POST", "/pay/limited/transfer", "", nil, from("203.0.113.7")...); r.Status != 429 {
		t.Fatalf("third payment attempt in a minute: %s", r)
	}

	// one IPv6 /64 is one client
	for i, a := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3", "2001:db8:1:2::4", "2001:db8:1:2::5"} {
		if r := srv.Do(t, "GET", "/pay/limited", "", nil, from(a)...); r.Status != 200 {
			t.Fatalf("view %d: %d", i, r.Status)
		}
	}
	if r := srv.Do(t, "GET", "/pay/limited", "", nil, from("2001:db8:1:2::99")...); r.Status != 429 {
		t.Fatalf("a sixth address of the same /64: %d", r.Status)
	}
	srv.Must(t, 200, "GET", "/pay/limited", "", nil, from("2001:db8:1:3::1")...)
}
