package identity_test

import (
	"net/netip"
	"testing"

	"svc/identity"
)

func TestWhitelistCheck(t *testing.T) {
	v4, v6 := netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::1")
	list := []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}
	cases := []struct {
		name           string
		w              identity.Whitelist
		client         netip.Addr
		whitelistRoute bool
		want           error
	}{
		{"off", identity.Whitelist{}, v4, false, nil},
		{"off with addresses", identity.Whitelist{IPs: list}, v6, false, nil},
		{"enabled, inside", identity.Whitelist{Enabled: true, IPs: list}, v4, false, nil},
		{"enabled, outside", identity.Whitelist{Enabled: true, IPs: list}, v6, false, identity.ErrIPNotWhitelisted},
		{"required, outside", identity.Whitelist{Required: true, IPs: list}, v6, false, identity.ErrIPNotWhitelisted},
		{"required and empty", identity.Whitelist{Required: true}, v4, false, identity.ErrWhitelistRequired},
		{"required and empty, on the whitelist route", identity.Whitelist{Required: true}, v4, true, nil},
		{"enabled, outside, on the whitelist route", identity.Whitelist{Enabled: true, IPs: list}, v6, true, identity.ErrIPNotWhitelisted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.w.Check(c.client, c.whitelistRoute); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestParsePrefix(t *testing.T) {
	cases := []struct{ in, want string }{
		{"10.1.2.3", "10.1.2.3/32"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"::1", "::1/128"},
		{"::ffff:10.1.2.3", "10.1.2.3/32"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"2001:db8::5/32", "2001:db8::/32"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			p, err := identity.ParsePrefix(c.in)
			if err != nil || p.String() != c.want {
				t.Fatalf("got %v %v, want %s", p, err, c.want)
			}
		})
	}
	for _, bad := range []string{"nonsense", "10.0.0.0/33", "fe80::1%eth0", "::ffff:10.0.0.0/64"} {
		if _, err := identity.ParsePrefix(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	ps, err := identity.ParsePrefixes([]string{" 10.0.0.1 ", "", "::1"})
	if err != nil || len(ps) != 2 {
		t.Fatalf("%v %v", ps, err)
	}
}

func TestScopes(t *testing.T) {
	s, bad, ok := identity.ParseScopes([]string{"trade", "read"})
	if !ok || bad != "" || s.String() != "read,trade" || !s.Has(identity.ScopeRead) || s.Has(identity.ScopeWithdraw) {
		t.Fatalf("%v %q %v", s, bad, ok)
	}
	if _, bad, ok := identity.ParseScopes([]string{"read", "admin"}); ok || bad != "admin" {
		t.Fatalf("unknown scope: %q %v", bad, ok)
	}
	if identity.AllScopes.String() != "read,trade,payments,withdraw" {
		t.Fatal(identity.AllScopes.String())
	}
}
