package events_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/gateway/auth/authtest"
	gwevents "svc/gateway/events"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	"svc/gateway/openapi/client"
	gwwebhooks "svc/gateway/webhooks"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/webhooks"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// receiver is a real HTTP webhook receiver that verifies and keeps every delivery.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []map[string]any
	secret string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := webhooks.Verify(body, req.Header.Get(webhooks.HeaderSignature), r.secret, time.Minute, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		r.got = append(r.got, m)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

type rig struct {
	pool *pgxpool.Pool
	srv  *gatewaytest.Server
	rec  *events.Recorder
	a, b authtest.Merchant
}

// newRig runs the events and webhooks routes over a real database, with the delivery worker
// working the jobs a resend queues (http receivers allowed).
func newRig(t *testing.T, opts gwevents.Options) *rig {
	t.Helper()
	pool, _ := pgtest.New(t)
	cipher := webhooks.DevCipher("events-test")
	sender := webhooks.NewSender(webhooks.SenderConfig{AllowInsecure: true, Timeout: 5 * time.Second})
	workers := river.NewWorkers()
	if err := webhooks.Register(workers, webhooks.NewWorker(pool, cipher, sender, webhooks.WorkerConfig{RetryBase: 10 * time.Millisecond})); err != nil {
		t.Fatal(err)
	}
	client, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{events.Queue: 4},
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	rec := events.NewRecorder(client)
	keys := idempotency.New(pool, idempotency.Config{})
	opts.Idempotency = gwidem.Middleware(keys)
	srv := gatewaytest.New(t, pool,
		gwevents.New(events.NewService(pool, rec), opts),
		gwwebhooks.New(webhooks.NewService(pool, cipher, sender)))
	return &rig{pool: pool, srv: srv, rec: rec, a: authtest.New(t, pool), b: authtest.New(t, pool)}
}

func (r *rig) record(t *testing.T, m authtest.Merchant, env string, typ events.Type, data any) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := postgres.InTx(context.Background(), r.pool, func(tx pgx.Tx) error {
		var err error
		id, err = r.rec.Record(context.Background(), tx, m.ID, env, typ, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type page struct {
	Items      []gwevents.EventJSON `json:"items"`
	NextCursor *string              `json:"next_cursor"`
}

func TestListAndGet(t *testing.T) {
	r := newRig(t, gwevents.Options{})
	s := r.srv
	var ids []uuid.UUID // oldest first
	for i := range 5 {
		typ := events.CustomerCreated
		if i%2 == 1 {
			typ = events.DepositSettled
		}
		ids = append(ids, r.record(t, r.a, "sandbox", typ, events.Sample(typ)))
		time.Sleep(2 * time.Millisecond)
	}
	liveID := r.record(t, r.a, "live", events.CustomerCreated, events.Sample(events.CustomerCreated))
	otherID := r.record(t, r.b, "sandbox", events.CustomerCreated, events.Sample(events.CustomerCreated))

	t.Run("pages newest first through the cursor", func(t *testing.T) {
		var seen []string
		path := "/v1/events?limit=2"
		for range 10 {
			var p page
			s.Must(t, 200, "GET", path, r.a.SandboxKey, nil).Decode(t, &p)
			for _, e := range p.Items {
				seen = append(seen, e.ID)
			}
			if p.NextCursor == nil {
				break
			}
			path = "/v1/events?limit=2&cursor=" + *p.NextCursor
		}
		if len(seen) != 5 {
			t.Fatalf("saw %d events, want 5: %v", len(seen), seen)
		}
		for i, id := range seen {
			if id != ids[4-i].String() {
				t.Fatalf("position %d: %s, want %s", i, id, ids[4-i])
			}
		}
	})
	t.Run("the data is the webhook's data", func(t *testing.T) {
		var e gwevents.EventJSON
		s.Must(t, 200, "GET", "/v1/events/"+ids[1].String(), r.a.SandboxKey, nil).Decode(t, &e)
		want, _ := json.Marshal(events.Sample(events.DepositSettled))
		var a, b any
		_ = json.Unmarshal(e.Data, &a)
		_ = json.Unmarshal(want, &b)
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		if e.Event != "deposit.settled" || string(ga) != string(gb) {
			t.Fatalf("%+v, want data %s", e, want)
		}
	})
	t.Run("filters by type", func(t *testing.T) {
		var p page
		s.Must(t, 200, "GET", "/v1/events?type=deposit.settled", r.a.SandboxKey, nil).Decode(t, &p)
		if len(p.Items) != 2 || p.Items[0].ID != ids[3].String() || p.Items[1].ID != ids[1].String() {
			t.Fatalf("%+v", p.Items)
		}
		s.Must(t, 200, "GET", "/v1/events?type=deposit.settled,customer.created", r.a.SandboxKey, nil).Decode(t, &p)
		if len(p.Items) != 5 {
			t.Fatalf("%d items", len(p.Items))
		}
	})
	t.Run("filters by created range", func(t *testing.T) {
		var e2, e4 gwevents.EventJSON
		s.Must(t, 200, "GET", "/v1/events/"+ids[2].String(), r.a.SandboxKey, nil).Decode(t, &e2)
		s.Must(t, 200, "GET", "/v1/events/"+ids[4].String(), r.a.SandboxKey, nil).Decode(t, &e4)
		var p page
		s.Must(t, 200, "GET", "/v1/events?from="+url.QueryEscape(e2.CreatedAt)+"&to="+url.QueryEscape(e4.CreatedAt), r.a.SandboxKey, nil).Decode(t, &p)
		if len(p.Items) != 2 || p.Items[0].ID != ids[3].String() || p.Items[1].ID != ids[2].String() {
			t.Fatalf("from %s to %s: %+v", e2.CreatedAt, e4.CreatedAt, p.Items)
		}
	})
	t.Run("scoped by merchant and environment", func(t *testing.T) {
		s.Must(t, 404, "GET", "/v1/events/"+otherID.String(), r.a.SandboxKey, nil)
		s.Must(t, 404, "GET", "/v1/events/"+liveID.String(), r.a.SandboxKey, nil)
		s.Must(t, 200, "GET", "/v1/events/"+liveID.String(), r.a.LiveKey, nil)
		var p page
		s.Must(t, 200, "GET", "/v1/events", r.b.SandboxKey, nil).Decode(t, &p)
		if len(p.Items) != 1 || p.Items[0].ID != otherID.String() {
			t.Fatalf("%+v", p.Items)
		}
		s.Must(t, 404, "GET", "/v1/events/not-a-uuid", r.a.SandboxKey, nil)
	})
	t.Run("bad filters are field errors", func(t *testing.T) {
		for q, field := range map[string]string{
			"type=nope":      "type",
			"from=yesterday": "from",
			"to=2025-01-01":  "to",
			"cursor=!!":      "cursor",
			"cursor=bm9wZQ":  "cursor",
			"limit=0":        "limit",
			"limit=101":      "limit",
			"from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z": "to",
		} {
			resp := s.Must(t, 400, "GET", "/v1/events?"+q, r.a.SandboxKey, nil)
			if f := resp.Fields(); len(f) != 1 || f[0] != field {
				t.Errorf("%s: fields %v, want %s", q, f, field)
			}
		}
	})
}

func TestResend(t *testing.T) {
	r := newRig(t, gwevents.Options{ResendsPerMinute: 5})
	s := r.srv
	subscribed, picked := newReceiver(t), newReceiver(t)
	var ep1, ep2 struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	s.Must(t, 201, "POST", "/v1/webhooks/endpoints", r.a.SandboxKey,
		map[string]any{"url": subscribed.URL + "/hook", "events": []string{"deposit.settled"}}).Decode(t, &ep1)
	s.Must(t, 201, "POST", "/v1/webhooks/endpoints", r.a.SandboxKey,
		map[string]any{"url": picked.URL + "/hook", "events": []string{"customer.created"}}).Decode(t, &ep2)
	subscribed.secret, picked.secret = ep1.Secret, ep2.Secret
	id := r.record(t, r.a, "sandbox", events.DepositSettled, events.Sample(events.DepositSettled))
	waitFor(t, func() bool { return subscribed.count() == 1 }) // the original delivery

	var out gwevents.ResendJSON
	s.Must(t, 200, "POST", "/v1/events/"+id.String()+"/resend", r.a.SandboxKey, nil).Decode(t, &out)
	if out.EventID != id.String() || len(out.EndpointIDs) != 1 || out.EndpointIDs[0] != ep1.ID {
		t.Fatalf("resend to the subscribed: %+v", out)
	}
	waitFor(t, func() bool { return subscribed.count() == 2 })

	// One endpoint, not subscribed to the event: it gets it anyway, with an idempotency key
	// honoured (the replay queues nothing more).
	body := map[string]any{"endpoint_id": ep2.ID}
	s.Must(t, 200, "POST", "/v1/events/"+id.String()+"/resend", r.a.SandboxKey, body, "X-Idempotency-Key", "resend-1").Decode(t, &out)
	if len(out.EndpointIDs) != 1 || out.EndpointIDs[0] != ep2.ID {
		t.Fatalf("resend to one endpoint: %+v", out)
	}
	replay := s.Must(t, 200, "POST", "/v1/events/"+id.String()+"/resend", r.a.SandboxKey, body, "X-Idempotency-Key", "resend-1")
	if replay.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("no replay header: %v", replay.Header)
	}
	waitFor(t, func() bool { return picked.count() == 1 })
	picked.mu.Lock()
	if got := picked.got[0]; got["id"] != id.String() || got["event"] != "deposit.settled" {
		t.Fatalf("delivered %v", got)
	}
	picked.mu.Unlock()

	// Every attempt is in the delivery logs, with the event's id. A log is written once the
	// receiver has answered, so the receiver's count can be ahead of it for a moment.
	type logPage struct {
		Items []struct {
			EventID    *string `json:"event_id"`
			EndpointID string  `json:"endpoint_id"`
			Success    bool    `json:"success"`
		} `json:"items"`
	}
	perEndpoint := map[string]int{}
	waitFor(t, func() bool {
		var logs logPage
		s.Must(t, 200, "GET", "/v1/webhooks/logs", r.a.SandboxKey, nil).Decode(t, &logs)
		clear(perEndpoint)
		for _, l := range logs.Items {
			if l.EventID == nil || *l.EventID != id.String() || !l.Success {
				t.Fatalf("log %+v", l)
			}
			perEndpoint[l.EndpointID]++
		}
		return perEndpoint[ep1.ID] >= 2 && perEndpoint[ep2.ID] >= 1
	})
	if perEndpoint[ep1.ID] != 2 || perEndpoint[ep2.ID] != 1 {
		t.Fatalf("logs per endpoint %v", perEndpoint)
	}
	if n := picked.count(); n != 1 {
		t.Fatalf("the idempotent replay delivered again: %d deliveries", n)
	}

	t.Run("refusals", func(t *testing.T) {
		other := authtest.New(t, r.pool)
		s.Must(t, 404, "POST", "/v1/events/"+id.String()+"/resend", other.SandboxKey, nil)
		s.Must(t, 404, "POST", "/v1/events/"+id.String()+"/resend", r.a.LiveKey, nil)
		s.Must(t, 404, "POST", "/v1/events/"+id.String()+"/resend", r.a.SandboxKey, map[string]any{"endpoint_id": uuid.NewString()})
		resp := s.Must(t, 400, "POST", "/v1/events/"+id.String()+"/resend", r.a.SandboxKey, map[string]any{"endpoint_id": "x"})
		if f := resp.Fields(); len(f) != 1 || f[0] != "endpoint_id" {
			t.Fatalf("%v", f)
		}
		s.Must(t, 200, "PATCH", "/v1/webhooks/endpoints/"+ep2.ID, r.a.SandboxKey, map[string]any{"is_active": false})
		s.Must(t, 422, "POST", "/v1/events/"+id.String()+"/resend", r.a.SandboxKey, map[string]any{"endpoint_id": ep2.ID})
	})
	t.Run("rate limited per merchant", func(t *testing.T) {
		// Five a minute, all spent above by this merchant in the sandbox (the replay spent
		// none; refusals spend one each).
		resp := s.Do(t, "POST", "/v1/events/"+id.String()+"/resend", r.a.SandboxKey, nil)
		if resp.Status != 429 || resp.Message != "RATE_LIMITED" || resp.Header["Retry-After"] == "" {
			t.Fatalf("%s", resp)
		}
		// Another merchant has its own budget.
		other := authtest.New(t, r.pool)
		s.Must(t, 404, "POST", "/v1/events/"+id.String()+"/resend", other.SandboxKey, nil)
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGeneratedClient: the client generated from openapi.json lists, reads and resends
// events against the real routes (gateway/openapi/client covers issue 30's routes).
func TestGeneratedClient(t *testing.T) {
	r := newRig(t, gwevents.Options{})
	id := r.record(t, r.a, "sandbox", events.DepositSettled, events.Sample(events.DepositSettled))
	c, err := client.NewClientWithResponses("http://svc", client.WithHTTPClient(r.srv.HTTPClient()),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("X-Api-Key", r.a.SandboxKey)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	typ, limit := "deposit.settled", 10
	list, err := c.GetEventsWithResponse(ctx, &client.GetEventsParams{Type: &typ, Limit: &limit})
	if err != nil || list.JSON200 == nil || list.JSON200.Data == nil || len(list.JSON200.Data.Items) != 1 {
		t.Fatalf("GET /v1/events: %v %s", err, list.Body)
	}
	if got := list.JSON200.Data.Items[0]; got.Id.String() != id.String() || string(got.Event) != "deposit.settled" {
		t.Fatalf("listed %+v", got)
	}
	one, err := c.GetEventsIdWithResponse(ctx, id.String(), nil)
	if err != nil || one.JSON200 == nil || one.JSON200.Data == nil || one.JSON200.Data.Id.String() != id.String() {
		t.Fatalf("GET /v1/events/{id}: %v %s", err, one.Body)
	}
	resent, err := c.PostEventsIdResendWithResponse(ctx, id.String(), nil, client.PostEventsIdResendJSONRequestBody{})
	if err != nil || resent.JSON200 == nil || resent.JSON200.Data == nil {
		t.Fatalf("POST /v1/events/{id}/resend: %v %s", err, resent.Body)
	}
	missing, err := c.GetEventsIdWithResponse(ctx, uuid.NewString(), nil)
	if err != nil || missing.StatusCode() != 404 {
		t.Fatalf("an unknown event: %v %d", err, missing.StatusCode())
	}
}
