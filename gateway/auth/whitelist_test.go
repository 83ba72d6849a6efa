package auth_test

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/gateway/auth"
	"svc/gateway/auth/authtest"
)

func TestIPWhitelistIPv4AndIPv6(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := authtest.New(t, e.pool)
	email, pw := m.Email, authtest.Password
	access, _ := e.login(email, pw)
	sk := m.SandboxKey
	put := func(base string, body map[string]any, cred string) resp {
		return e.doAt(base, "PUT", "/v1/merchant/ip-whitelist", body, cred)
	}
	ping := func(base, cred string) resp { return e.doAt(base, "GET", "/v1/test/ping", nil, cred) }

	// Off: both families pass.
	e.want(ping(e.base4, apiKey(sk)), 200, "")
	e.want(ping(e.base6, apiKey(sk)), 200, "")

	// A sandbox key cannot set it (the whitelist also guards live); a live key or a bearer token can.
	e.want(put(e.base4, map[string]any{"enabled": true, "ips": []string{"127.0.0.1"}}, apiKey(sk)), 403, "LIVE_CREDENTIAL_REQUIRED")

	// IPv4 only.
	r := put(e.base4, map[string]any{"enabled": true, "ips": []string{"127.0.0.1", "10.0.0.0/8"}}, apiKey(m.LiveKey))
	e.want(r, 200, "")
	for _, cred := range []string{apiKey(sk), bearer(access)} {
		e.want(ping(e.base4, cred), 200, "")
		e.want(ping(e.base6, cred), 403, "IP_NOT_WHITELISTED")
	}
	g := e.doAt(e.base4, "GET", "/v1/merchant/ip-whitelist", nil, apiKey(sk))
	if ips := g.data()["ips"].([]any); len(ips) != 2 || ips[0] != "127.0.0.1/32" || ips[1] != "10.0.0.0/8" {
		t.Fatalf("whitelist %s", g.Raw)
	}

	// IPv6 only (set from the IPv4 side, which is still allowed).
	e.want(put(e.base4, map[string]any{"enabled": true, "ips": []string{"::1/128"}}, apiKey(m.LiveKey)), 200, "")
	for _, cred := range []string{apiKey(sk), bearer(access)} {
		e.want(ping(e.base6, cred), 200, "")
		e.want(ping(e.base4, cred), 403, "IP_NOT_WHITELISTED")
	}

	// Off again (from IPv6).
	e.want(put(e.base6, map[string]any{"enabled": false, "ips": []string{"::1"}}, apiKey(m.LiveKey)), 200, "")
	e.want(ping(e.base4, apiKey(sk)), 200, "")

	// Required but empty: every route refuses, except the whitelist's own.
	e.want(put(e.base4, map[string]any{"enabled": false, "required": true, "ips": []string{}}, apiKey(m.LiveKey)), 200, "")
	e.want(ping(e.base4, apiKey(sk)), 403, "IP_WHITELIST_REQUIRED")
	e.want(ping(e.base6, bearer(access)), 403, "IP_WHITELIST_REQUIRED")
	e.want(e.doAt(e.base4, "GET", "/v1/merchant/ip-whitelist", nil, apiKey(sk)), 200, "")
	e.want(put(e.base4, map[string]any{"enabled": true, "required": true, "ips": []string{"127.0.0.0/8", "::1"}}, apiKey(m.LiveKey)), 200, "")
	e.want(ping(e.base4, apiKey(sk)), 200, "")
	e.want(ping(e.base6, apiKey(sk)), 200, "")

	// Bad input.
	e.want(put(e.base4, map[string]any{"enabled": true, "ips": []string{"300.1.1.1"}}, apiKey(m.LiveKey)), 400, "VALIDATION_ERROR")
	e.want(put(e.base4, map[string]any{"enabled": true, "ips": []string{}}, apiKey(m.LiveKey)), 400, "VALIDATION_ERROR")
	e.want(put(e.base4, map[string]any{"ips": []string{"1.2.3.4"}}, apiKey(m.LiveKey)), 400, "VALIDATION_ERROR")
}

// X-Forwarded-For counts only when the socket peer is a trusted proxy.
func TestXForwardedForOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config) { c.TrustedProxies = []string{"127.0.0.1/32"} })
	m := authtest.New(t, e.pool)
	sk := m.SandboxKey
	e.want(e.do("PUT", "/v1/merchant/ip-whitelist", map[string]any{"enabled": true, "ips": []string{"203.0.113.7", "2001:db8::/32", "::1"}}, apiKey(m.LiveKey)), 200, "")
	// From the trusted proxy (127.0.0.1), the forwarded client counts.
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(sk), "X-Forwarded-For: 203.0.113.7"), 200, "")
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(sk), "X-Forwarded-For: 2001:db8::5"), 200, "")
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(sk), "X-Forwarded-For: 198.51.100.1"), 403, "IP_NOT_WHITELISTED")
	// A client cannot prepend a whitelisted address: the rightmost untrusted one counts.
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(sk), "X-Forwarded-For: 203.0.113.7, 198.51.100.1"), 403, "IP_NOT_WHITELISTED")
	// The proxy itself without a header is not whitelisted.
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(sk)), 403, "IP_NOT_WHITELISTED")
	// From ::1 (not a trusted proxy) the header is ignored: ::1 is whitelisted, so it passes
	// even when it claims a refused address...
	e.want(e.doAt(e.base6, "GET", "/v1/test/ping", nil, apiKey(sk), "X-Forwarded-For: 198.51.100.1"), 200, "")
	// ...and after removing ::1, claiming a whitelisted address does not help.
	e.want(e.do("PUT", "/v1/merchant/ip-whitelist", map[string]any{"enabled": true, "ips": []string{"203.0.113.7"}}, apiKey(m.LiveKey), "X-Forwarded-For: 203.0.113.7"), 200, "")
	e.want(e.doAt(e.base6, "GET", "/v1/test/ping", nil, apiKey(sk), "X-Forwarded-For: 203.0.113.7"), 403, "IP_NOT_WHITELISTED")
}

func TestClientIP(t *testing.T) {
	t.Parallel()
	cip, err := auth.NewClientIP([]string{"10.0.0.0/8", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer, xff, want string
	}{
		{"untrusted peer, header ignored", "198.51.100.9", "1.2.3.4", "198.51.100.9"},
		{"trusted v4 proxy", "10.1.2.3", "1.2.3.4", "1.2.3.4"},
		{"chain of trusted proxies", "10.1.2.3", "1.2.3.4, 10.9.9.9, 10.8.8.8", "1.2.3.4"},
		{"spoofed left entry ignored", "10.1.2.3", "6.6.6.6, 1.2.3.4", "1.2.3.4"},
		{"trusted v6 proxy, v6 client", "fd00::1", "2001:db8::1", "2001:db8::1"},
		{"v4-mapped peer", "::ffff:198.51.100.9", "1.2.3.4", "198.51.100.9"},
		{"garbage header", "10.1.2.3", "not-an-ip", "10.1.2.3"},
		{"no header", "10.1.2.3", "", "10.1.2.3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			var req fasthttp.Request
			if c.xff != "" {
				req.Header.Set("X-Forwarded-For", c.xff)
			}
			ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(c.peer), Port: 1234}, nil)
			if got := cip.Of(&ctx).String(); got != c.want {
				t.Fatalf("got %s want %s", got, c.want)
			}
		})
	}
	if _, err := auth.NewClientIP([]string{"nonsense"}); err == nil {
		t.Fatal("bad proxy accepted")
	}
}
