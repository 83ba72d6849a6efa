package ws_test

import (
	"testing"
	"time"

	"svc/gateway/ws"
)

// The server counts open connections by visibility (an auth message makes a public
// connection private) and the frames it queues; closing a connection uncounts it.
func TestServerConnectionStats(t *testing.T) {
	r := newRig(t, 1, ws.Config{})
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d open, %d private", what, r.server.Connections(), r.server.PrivateConnections())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	priv := r.dial(t, r.keys[0])
	pub := r.dial(t, "")
	waitFor("one private, one public", func() bool {
		return r.server.Connections() == 2 && r.server.PrivateConnections() == 1
	})
	_ = pub.Auth(r.keys[0])
	if m := next(t, pub, ofType("ack")); m.Op != "auth" {
		t.Fatalf("%+v", m)
	}
	waitFor("both private after auth", func() bool { return r.server.PrivateConnections() == 2 })
	if r.server.MessagesQueued() == 0 {
		t.Fatal("the auth ack was not counted as a queued frame")
	}
	_ = priv.Close()
	_ = pub.Close()
	waitFor("none after close", func() bool {
		return r.server.Connections() == 0 && r.server.PrivateConnections() == 0
	})
}
