package auth

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// ClientIP finds the address a request comes from: the socket's peer, unless that peer is
// a trusted proxy, in which case X-Forwarded-For is read from the right, skipping trusted
// proxies, and the first untrusted address is the client. A header from anyone else is
// ignored, so a client cannot claim an address.
type ClientIP struct {
	trusted []netip.Prefix
}

// NewClientIP parses the trusted proxies (CIDRs or single addresses).
func NewClientIP(trusted []string) (*ClientIP, error) {
	ps, err := ParsePrefixes(trusted)
	if err != nil {
		return nil, fmt.Errorf("trusted proxies: %w", err)
	}
	return &ClientIP{trusted: ps}, nil
}

// Of returns the client address of a request.
func (c *ClientIP) Of(ctx *fasthttp.RequestCtx) netip.Addr {
	peer := remoteAddr(ctx)
	if len(c.trusted) == 0 || !inAny(c.trusted, peer) {
		return peer
	}
	xff := ctx.Request.Header.Peek("X-Forwarded-For")
	if len(xff) == 0 {
		return peer
	}
	client := peer
	parts := bytes.Split(xff, []byte{','})
	for i := len(parts) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(string(bytes.TrimSpace(parts[i])))
		if err != nil {
			break // garbage: stop at the last address we could trust
		}
		client = a.Unmap()
		if !inAny(c.trusted, client) {
			break
		}
	}
	return client
}

func remoteAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	if ta, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		if a, ok := netip.AddrFromSlice(ta.IP); ok {
			return a.Unmap()
		}
	}
	a, _ := netip.AddrFromSlice(ctx.RemoteIP())
	return a.Unmap()
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParsePrefixes reads CIDRs ("10.0.0.0/8", "2001:db8::/32") and bare addresses (a /32 or
// /128), normalised to their network address.
func ParsePrefixes(in []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(in))
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := parsePrefix(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
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

// check applies a whitelist to a client address. path is the request path: the whitelist's
// own routes stay reachable while a required whitelist is still empty, so the merchant can
// set one.
//
//   - required and no addresses: 403 IP_WHITELIST_REQUIRED (except on the whitelist routes);
//   - enabled or required, with addresses: the client must be in one, else 403
//     IP_NOT_WHITELISTED.
func (w Whitelist) check(client netip.Addr, path []byte) error {
	if len(w.IPs) == 0 {
		if w.Required && string(path) != whitelistPath {
			return ErrWhitelistRequired
		}
		return nil
	}
	if (w.Enabled || w.Required) && !inAny(w.IPs, client) {
		return ErrIPNotWhitelisted
	}
	return nil
}

const whitelistPath = "/v1/merchant/ip-whitelist"
