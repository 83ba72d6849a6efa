// Package testport picks TCP ports for the servers tests start, stop and start again on the
// same port (svcd in its crash tests, geth in the chain tests).
//
// A port ":0" hands out lies in Linux's ephemeral range (32768-60999 by default), and once
// its listener is closed any socket of the box can take it before the server binds it
// again: a test process binding ":0" (seen in CI: a stranger answering svcd's clients with
// 401s), or just the local end of an outgoing connection, PostgreSQL's included, which
// makes the server's bind fail with "address already in use". Ports below that range are
// only ever taken by asking for them.
package testport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
)

// Low and High bound the ports Free picks from: [Low, High).
const (
	Low  = 20000
	High = 32000
)

// Free returns a port in [Low, High) that was free a moment ago on 127.0.0.1.
func Free(t testing.TB) int {
	t.Helper()
	for range 200 {
		port := Low + rand.IntN(High-Low)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
	t.Fatalf("no free port in %d-%d", Low, High-1)
	return 0
}
