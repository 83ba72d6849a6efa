//go:build linux

package nemesis

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCutAndHeal: three namespaces reach each other through the router; a cut between two
// of them silences only that pair, both ways, and Heal restores it. The host namespace
// reaches none of them. Root only.
func TestCutAndHeal(t *testing.T) {
	nft, _ := exec.LookPath("nft")
	if nft == "" {
		if out, err := exec.Command("../../.ci/nft", "path").Output(); err == nil {
			nft = strings.TrimSpace(string(out))
		}
	}
	if err := Available(nft); err != nil {
		t.Skipf("partition harness unavailable: %v", err)
	}
	CleanStale()
	n, err := New(Prefix()+"t", nft, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	// A listener in b and in c.
	listen := func(role string) string {
		var ln net.Listener
		if err := n.Do(role, func() (err error) {
			ln, err = net.Listen("tcp", n.Addr(role)+":0")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return ln.Addr().String()
	}
	b, c := listen("b"), listen("c")
	reach := func(from, to string) bool {
		var err error
		if derr := n.Do(from, func() error {
			var conn net.Conn
			conn, err = net.DialTimeout("tcp", to, 500*time.Millisecond)
			if err == nil {
				conn.Close()
			}
			return nil
		}); derr != nil {
			t.Fatal(derr)
		}
		return err == nil
	}
	if !reach("a", b) || !reach("a", c) || !reach("b", c) {
		t.Fatal("namespaces do not reach each other before any cut")
	}
	if conn, err := net.DialTimeout("tcp", b, 300*time.Millisecond); err == nil {
		conn.Close()
		t.Fatal("the host namespace reaches a role's namespace")
	}
	if err := n.Cut("a", "b"); err != nil {
		t.Fatal(err)
	}
	if reach("a", b) {
		t.Fatal("a reaches b across the cut")
	}
	var bToA string
	if !reach("a", c) || !reach("b", c) {
		t.Fatal("the cut of a-b silenced another pair")
	}
	bToA = listen("a")
	if reach("b", bToA) {
		t.Fatal("b reaches a across the cut")
	}
	if err := n.Heal(); err != nil {
		t.Fatal(err)
	}
	if !reach("a", b) || !reach("b", bToA) {
		t.Fatal("not healed")
	}
}
