package ws

import "testing"

func TestIPLimiterCountsRefusals(t *testing.T) {
	l := NewIPLimiter(nil)
	allowed := 0
	for i := 0; i < 15; i++ {
		if l.Take("k", 1).Allowed {
			allowed++
		}
	}
	if got := l.Refused(); got != uint64(15-allowed) || got == 0 {
		t.Fatalf("Refused() = %d after %d of 15 allowed", got, allowed)
	}
}
