package moneyout_test

import (
	"testing"
	"time"

	"svc/payments/moneyout"
)

// TestDepsWithDefaults: one Deps shared by the three services (as svcd builds it) gives each
// its own poll default when Poll is zero, and the same Poll when set; the clock defaults to
// time.Now, and Stamp is the clock's time in UTC at microseconds.
func TestDepsWithDefaults(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 9, 10, 123456789, time.FixedZone("WAT", 3600))
	clock := func() time.Time { return at }
	for _, c := range []struct {
		name string
		deps moneyout.Deps
		def  time.Duration
		want time.Duration
	}{
		{"zero poll takes a withdrawal's default", moneyout.Deps{}, 2 * time.Second, 2 * time.Second},
		{"zero poll takes a payout's default", moneyout.Deps{}, 5 * time.Second, 5 * time.Second},
		{"a set poll is kept", moneyout.Deps{Poll: 20 * time.Millisecond}, 5 * time.Second, 20 * time.Millisecond},
		{"a negative poll is the default", moneyout.Deps{Poll: -time.Second}, 2 * time.Second, 2 * time.Second},
		{"a set clock is kept", moneyout.Deps{Now: clock}, 2 * time.Second, 2 * time.Second},
	} {
		d := c.deps.WithDefaults(c.def)
		if d.Poll != c.want {
			t.Errorf("%s: Poll %v, want %v", c.name, d.Poll, c.want)
		}
		if d.Now == nil {
			t.Fatalf("%s: no clock", c.name)
		}
		if c.deps.Now != nil {
			if got, want := d.Stamp(), time.Date(2026, 11, 27, 7, 9, 10, 123456000, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
				t.Errorf("%s: Stamp %v, want %v", c.name, got, want)
			}
		} else if since := time.Since(d.Now()); since < 0 || since > time.Minute {
			t.Errorf("%s: the default clock is %v off time.Now", c.name, since)
		}
	}

	// svcd's one Deps for the three: each service's defaults leave it as it was, so the
	// next service still gets its own.
	shared := moneyout.Deps{}
	w, p := shared.WithDefaults(2*time.Second), shared.WithDefaults(5*time.Second)
	if w.Poll != 2*time.Second || p.Poll != 5*time.Second || shared.Poll != 0 || shared.Now != nil {
		t.Fatalf("shared Deps: withdrawals %v, payouts %v, shared after both %+v", w.Poll, p.Poll, shared)
	}
}
