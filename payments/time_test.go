package payments_test

import (
	"context"
	"testing"
	"time"

	"svc/payments"
	"svc/persistence/postgres/pgtest"
)

// TestStampRoundTrips: a stamped time (here one with nanoseconds, in another zone) comes
// back from a timestamptz column equal to itself, which the unstamped one does not.
func TestStampRoundTrips(t *testing.T) {
	pool, _ := pgtest.New(t)
	raw := time.Date(2026, 11, 27, 7, 8, 9, 123456789, time.FixedZone("WAT", 3600))
	var back time.Time
	if err := pool.QueryRow(context.Background(), `select $1::timestamptz`, payments.Stamp(raw)).Scan(&back); err != nil {
		t.Fatal(err)
	}
	if got := payments.Stamp(raw); !back.Equal(got) || got.Location() != time.UTC {
		t.Fatalf("stamped %v read back as %v", got, back)
	}
	if back.Equal(raw) {
		t.Fatal("the nanoseconds survived a timestamptz column: the test proves nothing")
	}
}
