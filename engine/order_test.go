package engine

import (
	"testing"
	"unsafe"
)

// TestOrderLayout: an order is three cache lines and its hot fields share the first.
func TestOrderLayout(t *testing.T) {
	var o order
	if s := unsafe.Sizeof(o); s != 192 {
		t.Fatalf("order is %d bytes, want 192 (adjust orderPad)", s)
	}
	if off := unsafe.Offsetof(o.reserved); off+8 > 64 {
		t.Fatalf("reserved ends at %d, past the first cache line", off+8)
	}
	if off := unsafe.Offsetof(o.quoteQty); off+8 > 128 {
		t.Fatalf("quoteQty ends at %d, past the second cache line", off+8)
	}
	var p orderPool
	for i := 0; i < 3*orderChunk; i++ {
		if a := uintptr(unsafe.Pointer(p.get())); a%64 != 0 {
			t.Fatalf("order %d at %#x: not on a cache line", i, a)
		}
	}
}
