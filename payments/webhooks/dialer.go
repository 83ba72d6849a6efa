package webhooks

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// The SSRF guard. Deliveries go to URLs merchants choose, so the dialer refuses addresses
// inside the operator's network. The check runs in the dialer's Control hook, on the
// address actually being connected to after DNS resolution, so a name that resolves to a
// public address when the endpoint is saved and to 127.0.0.1 later (DNS rebinding) is still
// refused. No proxy is ever used: a proxy would connect on our behalf, unchecked.

// Special-purpose ranges refused beyond what netip classifies (RFC 6890 and friends).
var refusedPrefixes = []struct {
	p      netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("100.64.0.0/10"), "private"}, // carrier-grade NAT
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"}, // documentation
	{netip.MustParsePrefix("198.18.0.0/15"), "private"}, // benchmarking
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},  // and 255.255.255.255
	{netip.MustParsePrefix("64:ff9b::/96"), "reserved"}, // NAT64 can reach any IPv4
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},
	{netip.MustParsePrefix("2002::/16"), "reserved"}, // 6to4 embeds an IPv4 address
	{netip.MustParsePrefix("100::/64"), "reserved"},  // discard
}

// refusedAddr says why a delivery must not connect to a, or "" if it may. allowLocal (the
// operator's development switch) permits loopback and private addresses; link-local (cloud
// metadata at 169.254.169.254), multicast and unspecified addresses stay refused.
func refusedAddr(a netip.Addr, allowLocal bool) string {
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.IsLoopback():
		if allowLocal {
			return ""
		}
		return "loopback"
	case a.IsPrivate():
		if allowLocal {
			return ""
		}
		return "private"
	}
	for _, r := range refusedPrefixes {
		if r.p.Contains(a) {
			if allowLocal && r.reason == "private" {
				return ""
			}
			return r.reason
		}
	}
	return ""
}

// guardedDialer returns a dialer whose every connection is checked by refusedAddr.
func guardedDialer(allowLocal bool, timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: cannot parse %q", ErrRefused, address)
			}
			if reason := refusedAddr(ap.Addr(), allowLocal); reason != "" {
				return fmt.Errorf("%w: %s is a %s address", ErrRefused, ap.Addr(), reason)
			}
			return nil
		},
	}
}
