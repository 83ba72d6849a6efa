package auth

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"

	"github.com/valyala/fasthttp"

	"svc/identity"
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
	ps, err := identity.ParsePrefixes(trusted)
	if err != nil {
		return nil, fmt.Errorf("trusted proxies: %w", err)
	}
	return &ClientIP{trusted: ps}, nil
}

// Of returns the client address of a request.
func (c *ClientIP) Of(ctx *fasthttp.RequestCtx) netip.Addr {
	peer := remoteAddr(ctx)
	if len(c.trusted) == 0 || !identity.Contains(c.trusted, peer) {
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
		if !identity.Contains(c.trusted, client) {
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

// whitelistPath is the route that reads and sets the IP whitelist: it stays reachable while
// a required whitelist is still empty (identity.Whitelist.Check).
const whitelistPath = "/v1/merchant/ip-whitelist"
