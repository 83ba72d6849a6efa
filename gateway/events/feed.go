package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"svc/gateway/api"
	"svc/gateway/ws"
	"svc/payments"
	pe "svc/payments/events"
)

// Source is what a Feed reads; *payments/events.Service is one.
type Source interface {
	Since(ctx context.Context, t payments.Tenant, since time.Time, limit int) ([]pe.Event, error)
}

// Feed streams a tenant's new events to the WebSocket events channel (ws.EventFeed) by
// polling the events table: events are written in their domain's transactions, which this
// process may not see (another svcd, a worker), and the table is the one place all of them
// reach. Each follower reads its own tenant's rows (the events_tenant index) every Interval.
//
// An event's created_at is taken inside its transaction, so one may commit after a later
// one was already read: every poll looks Lookback behind the newest event seen and skips
// the ids it already sent. A transaction open longer than Lookback when it commits is not
// streamed (the events API and webhooks still have it).
type Feed struct {
	Source   Source
	Interval time.Duration // default 250ms
	Lookback time.Duration // default 30s
	Log      *slog.Logger
}

var _ ws.EventFeed = (*Feed)(nil)

const feedPage = 200

// Follow implements ws.EventFeed.
func (f *Feed) Follow(ctx context.Context, merchantID uuid.UUID, env api.Environment, send func(msg []byte)) {
	interval, lookback := f.Interval, f.Lookback
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	if lookback <= 0 {
		lookback = 30 * time.Second
	}
	t := payments.Tenant{MerchantID: merchantID, Environment: string(env)}
	start := time.Now().UTC()
	newest := start
	seen := map[uuid.UUID]time.Time{}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		from := start
		if w := newest.Add(-lookback); w.After(from) {
			from = w
		}
		for cur := from; ; {
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			evs, err := f.Source.Since(qctx, t, cur, feedPage)
			cancel()
			if err != nil {
				if ctx.Err() == nil && f.Log != nil {
					f.Log.Warn("events feed: poll failed; retrying", "error", err, "merchant_id", merchantID)
				}
				break
			}
			for _, e := range evs {
				if _, ok := seen[e.ID]; ok {
					continue
				}
				seen[e.ID] = e.CreatedAt
				if e.CreatedAt.After(newest) {
					newest = e.CreatedAt
				}
				send(ws.EventMessage(e.ID.String(), string(e.Type), e.Data, api.Time(e.CreatedAt)))
			}
			if len(evs) < feedPage || !evs[len(evs)-1].CreatedAt.After(cur) {
				break
			}
			cur = evs[len(evs)-1].CreatedAt
		}
		for id, at := range seen {
			if at.Before(from.Add(-interval)) {
				delete(seen, id)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
