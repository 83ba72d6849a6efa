package identity

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParsePrefixes reads CIDRs ("10.0.0.0/8", "2001:db8::/32") and bare addresses (a /32 or
// /128), normalised to their network address; blank entries are skipped.
func ParsePrefixes(in []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(in))
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ParsePrefix reads one CIDR or bare address. IPv4-mapped IPv6 becomes IPv4.
func ParsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
	}
	if p.Addr().Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("%q: an IPv4-mapped prefix must be /96 or longer", s)
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// Contains reports whether a is in one of ps.
func Contains(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Check applies a whitelist to a client address. whitelistRoute is set on the routes that
// read and set the whitelist itself: they stay reachable while a required whitelist is
// still empty, so the merchant can set one.
//
//   - required and no addresses: ErrWhitelistRequired (except on the whitelist routes);
//   - enabled or required, with addresses: the client must be in one, else
//     ErrIPNotWhitelisted.
func (w Whitelist) Check(client netip.Addr, whitelistRoute bool) error {
	if len(w.IPs) == 0 {
		if w.Required && !whitelistRoute {
			return ErrWhitelistRequired
		}
		return nil
	}
	if (w.Enabled || w.Required) && !Contains(w.IPs, client) {
		return ErrIPNotWhitelisted
	}
	return nil
}
