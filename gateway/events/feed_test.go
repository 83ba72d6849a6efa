package events_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/api"
	gwevents "svc/gateway/events"
	"svc/payments/events"
	"svc/persistence/postgres/pgtest"
)

// TestFeedStreamsEachEventOnceIncludingLateCommits: the events channel's feed sends the
// tenant's events recorded after it started, once each, in the channel's message shape; an
// event whose transaction commits after a later one was already sent (an earlier
// created_at) is still sent; earlier events and other tenants' are not.
func TestFeedStreamsEachEventOnceIncludingLateCommits(t *testing.T) {
	pool, _ := pgtest.New(t)
	merchant, other := uuid.New(), uuid.New()
	insert := func(m uuid.UUID, env string, at time.Time) uuid.UUID {
		t.Helper()
		id := uuid.Must(uuid.NewV7())
		if _, err := pool.Exec(context.Background(), `insert into events (id, merchant_id, environment, type, data, created_at)
			values ($1, $2, $3, 'customer.created', '{"id":"c"}', $4)`, id, m, env, at); err != nil {
			t.Fatal(err)
		}
		return id
	}
	before := insert(merchant, "sandbox", time.Now().Add(-time.Second))

	var (
		mu   sync.Mutex
		sent []string
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	feed := &gwevents.Feed{Source: events.NewService(pool, nil), Interval: 20 * time.Millisecond, Lookback: 5 * time.Second}
	go func() {
		defer close(done)
		feed.Follow(ctx, merchant, api.Sandbox, func(msg []byte) {
			var m struct {
				Type, Channel string
				Data          struct{ ID, Event, CreatedAt string }
			}
			if err := json.Unmarshal(msg, &m); err != nil || m.Type != "event" || m.Channel != "events" || m.Data.Event != "customer.created" {
				t.Errorf("message %s", msg)
			}
			mu.Lock()
			sent = append(sent, m.Data.ID)
			mu.Unlock()
		})
	}()
	time.Sleep(300 * time.Millisecond)
	now := time.Now()
	a := insert(merchant, "sandbox", now)
	insert(other, "sandbox", now)
	insert(merchant, "live", now)
	time.Sleep(200 * time.Millisecond)                                  // a is sent
	late := insert(merchant, "sandbox", now.Add(-150*time.Millisecond)) // committed after a, created before it
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-done

	mu.Lock()
	defer mu.Unlock()
	// Both once, in either order (under load both may land in one poll, oldest first).
	if len(sent) != 2 || !slices.Contains(sent, a.String()) || !slices.Contains(sent, late.String()) {
		t.Fatalf("sent %v, want %s and %s once each (not %s, recorded before the feed started)", sent, a, late, before)
	}
}
