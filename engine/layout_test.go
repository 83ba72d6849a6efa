package engine

import (
	"testing"
	"unsafe"
)

// TestAccountHotLine checks the account's layout (issue 33, see account): mu, id and the
// order index's header in the first cache line, and a size whose class starts every
// object on a line, so a place or cancel reads one line of the account before its
// balances.
func TestAccountHotLine(t *testing.T) {
	var a account
	if end := unsafe.Offsetof(a.orders) + unsafe.Sizeof(a.orders); end > 64 || unsafe.Offsetof(a.mu) != 0 || unsafe.Offsetof(a.id) > 48 {
		t.Fatalf("mu, id and the order index end at byte %d, beyond the first cache line", end)
	}
	if unsafe.Sizeof(a) != 256 {
		t.Fatalf("account is %d bytes; pad it to 256 (a size class aligned to 64) or rethink the layout", unsafe.Sizeof(a))
	}
	var tab accountTable // allocated as the engine allocates them
	for i := range 8 {
		if p := uintptr(unsafe.Pointer(tab.getOrCreate(acc(i + 1)))); p%64 != 0 {
			t.Fatalf("an account at %#x does not start a cache line", p)
		}
	}
}

// TestEventSize keeps Event at 352 bytes (issue 33: the runner zeroes and writes one per
// event into a buffer beyond L1; the one-byte fields sit together).
func TestEventSize(t *testing.T) {
	if n := unsafe.Sizeof(Event{}); n > 352 {
		t.Fatalf("Event is %d bytes, was 352: keep the one-byte fields together", n)
	}
}
