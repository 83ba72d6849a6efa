//go:build linux

package main

import (
	"testing"
	"time"

	"svc/gateway/ws"
)

// TestBareBroadcasterKeepsTheStreamsRules drives the anchor of `svcbench ws` with real
// gorilla clients: each gets a snapshot, then diffs whose sequences continue each other;
// a client that stops reading does not hold the others up, and once it reads again it
// gets a snapshot in place of the diffs it fell behind on (the hub's conflation), never a
// gap.
func TestBareBroadcasterKeepsTheStreamsRules(t *testing.T) {
	// big levels so that a reader that stops fills its socket within the test
	big := []byte(`"bids":[["1499.99","1.00"]],"asks":[["1500.01","` + string(bytesOf('9', 60000)) + `"]]`)
	channel := "orderbook:" + wsSymbol
	b, err := startBareBroadcaster(5*time.Millisecond, channel, [][]byte{big})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dial := func() *ws.Client {
		c, err := ws.Dial(b.URL(), "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Conn().Close() })
		if err := c.Subscribe(channel); err != nil {
			t.Fatal(err)
		}
		m, err := c.Next()
		if err != nil || m.Type != "snapshot" {
			t.Fatalf("first message %+v, %v", m, err)
		}
		return c
	}
	fast, slow := dial(), dial()
	b.on.Store(true)
	// read slow's snapshot sequence, then let it lag: it does not read for a while
	seqOf := func(c *ws.Client, n int) (snapshots int) {
		var last uint64
		for i := 0; i < n; i++ {
			_ = c.Conn().SetReadDeadline(time.Now().Add(10 * time.Second))
			m, err := c.Next()
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			switch m.Type {
			case "snapshot":
				snapshots++
				last = m.Sequence
			case "diff":
				if last > 0 && m.FirstSequence != last+1 {
					t.Fatalf("diff %d..%d after %d: a gap", m.FirstSequence, m.LastSequence, last)
				}
				last = m.LastSequence
			}
		}
		return snapshots
	}
	seqOf(fast, 50)
	time.Sleep(time.Second) // slow's socket fills; fast keeps going
	seqOf(fast, 50)
	if got := seqOf(slow, 300); got == 0 || b.conflated.Load() == 0 {
		t.Fatalf("a reader that lagged got %d snapshots (%d conflations)", got, b.conflated.Load())
	}
	b.on.Store(false)
	if b.hsErr.Load() != 0 || b.slow.Load() != 0 {
		t.Fatalf("handshake errors %d, dropped %d", b.hsErr.Load(), b.slow.Load())
	}
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}
