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
	"svc/payments"
	"svc/payments/events"
	"svc/persistence/postgres/pgtest"
)

// TestFeedStreamsEachEventOnceIncludingLateCommits: the events channel's feed sends the
// tenant's events recorded after it started, once each, in the channel's message shape; an
// event whose transaction commits after a later one was already sent (an earlier
// created_at) is still sent; earlier events and other tenants' are not.
//
// The test waits for the feed's polls instead of sleeping for them (it slept 300 ms for the
// feed to start and 200/300 ms for each send, which a loaded machine under -race can miss):
// the late event's created_at lies between the feed's start and the first event's, and it is
// inserted only once the first event was sent.
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
	sentNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sent)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	src := &polledSource{Source: events.NewService(pool, nil)}
	feed := &gwevents.Feed{Source: src, Interval: 20 * time.Millisecond, Lookback: 30 * time.Second}
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
	defer func() { cancel(); <-done }()
	// The feed takes its start before its first poll: after that poll, polled is past it.
	src.wait(t, 1)
	polled := src.firstPoll()
	for !time.Now().After(polled.Add(2 * time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	now := time.Now()
	a := insert(merchant, "sandbox", now)
	insert(other, "sandbox", now)
	insert(merchant, "live", now)
	waitSent(t, sentNow, a)
	late := insert(merchant, "sandbox", polled.Add(time.Millisecond)) // committed after a was sent, created before it
	waitSent(t, sentNow, late)
	src.wait(t, src.count()+2) // a whole poll after late was sent: room for a second send of either
	cancel()
	<-done

	// Both once, a first (it was sent before late was inserted).
	if got := sentNow(); len(got) != 2 || got[0] != a.String() || got[1] != late.String() {
		t.Fatalf("sent %v, want %s and %s once each (not %s, recorded before the feed started)", got, a, late, before)
	}
}

// polledSource is a feed's Source that counts the polls it answered and keeps the time the
// first one began (after the feed's start), so a test waits for the feed, not a guess of it.
type polledSource struct {
	gwevents.Source
	mu    sync.Mutex
	n     int
	first time.Time
}

func (p *polledSource) Since(ctx context.Context, t payments.Tenant, since time.Time, limit int) ([]events.Event, error) {
	p.mu.Lock()
	if p.first.IsZero() {
		p.first = time.Now()
	}
	p.mu.Unlock()
	evs, err := p.Source.Since(ctx, t, since, limit)
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
	return evs, err
}

func (p *polledSource) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *polledSource) firstPoll() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// wait returns once n polls were answered (10 s at most).
func (p *polledSource) wait(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); p.count() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the feed answered %d polls in 10 s, want %d", p.count(), n)
		}
	}
}

// waitSent returns once id was sent (10 s at most).
func waitSent(t *testing.T, sent func() []string, id uuid.UUID) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(sent(), id.String()); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not sent in 10 s (sent %v)", id, sent())
		}
	}
}
