package auth

import "testing"

func TestLimiterCountsRefusals(t *testing.T) {
	l := NewLimiter(nil)
	allowed := 0
	for i := 0; i < 5; i++ {
		if l.Take("k", 2).Allowed {
			allowed++
		}
	}
	if got := l.Refused(); got != uint64(5-allowed) || got == 0 {
		t.Fatalf("Refused() = %d after %d of 5 allowed", got, allowed)
	}
}
