package webhooks_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/webhooks"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// received is one request a test receiver got.
type received struct {
	n      int // 1-based arrival number
	path   string
	header http.Header
	body   []byte
}

// receiver is a real HTTPS server; respond picks the status of the n-th request.
type receiver struct {
	srv     *httptest.Server
	caFile  string
	mu      sync.Mutex
	reqs    []received
	arrived chan received
}

func newReceiver(t *testing.T, respond func(r received) int) *receiver {
	t.Helper()
	rc := &receiver{arrived: make(chan received, 1024)}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		got := received{n: len(rc.reqs) + 1, path: r.URL.Path, header: r.Header.Clone(), body: body}
		rc.reqs = append(rc.reqs, got)
		rc.mu.Unlock()
		rc.arrived <- got
		status := http.StatusOK
		if respond != nil {
			status = respond(got)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	// The receiver's certificate is trusted through the configuration (a CA file), as an
	// operator would trust a private CA with --webhook-ca-file.
	rc.caFile = filepath.Join(t.TempDir(), "receiver-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(rc.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

func (rc *receiver) wait(t *testing.T) received {
	t.Helper()
	select {
	case r := <-rc.arrived:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery arrived within 30s")
	}
	return received{}
}

type harness struct {
	pool    *pgxpool.Pool
	url     string
	cipher  *webhooks.Cipher
	sender  *webhooks.Sender
	svc     *webhooks.Service
	rec     *events.Recorder
	client  *jobs.Client
	workers *river.Workers
	worker  *webhooks.Worker
}

// receiving is a new receiver (answering as newReceiver's respond says) and a harness that
// trusts its certificate.
func receiving(t *testing.T, respond func(r received) int) (*receiver, *harness) {
	t.Helper()
	rc := newReceiver(t, respond)
	return rc, newHarness(t, harnessOpts{caFile: rc.caFile})
}

type harnessOpts struct {
	caFile  string
	timeout time.Duration
	secure  bool // SSRF guard on, https only
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	pool, url := pgtest.New(t)
	h := &harness{pool: pool, url: url, cipher: webhooks.DevCipher("test")}
	sc := webhooks.SenderConfig{Timeout: o.timeout, AllowInsecure: !o.secure}
	if o.caFile != "" {
		roots, err := webhooks.LoadCAFile(o.caFile)
		if err != nil {
			t.Fatal(err)
		}
		sc.RootCAs = roots
	}
	h.sender = webhooks.NewSender(sc)
	h.svc = webhooks.NewService(pool, h.cipher, h.sender)
	h.workers = river.NewWorkers()
	w := webhooks.NewWorker(pool, h.cipher, h.sender, webhooks.WorkerConfig{RetryBase: 5 * time.Millisecond})
	if err := webhooks.Register(h.workers, w); err != nil {
		t.Fatal(err)
	}
	h.worker = w
	h.client = newClient(t, pool, h.workers, 0)
	h.rec = events.NewRecorder(h.client)
	return h
}

func newClient(t *testing.T, pool *pgxpool.Pool, workers *river.Workers, rescueAfter time.Duration) *jobs.Client {
	t.Helper()
	cfg := jobs.Config{
		Workers: workers, Queues: map[string]int{events.Queue: 20},
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
	}
	if rescueAfter > 0 {
		cfg.JobTimeout, cfg.RescueStuckJobsAfter = rescueAfter, rescueAfter
	}
	c, err := jobs.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (h *harness) start(t *testing.T) {
	t.Helper()
	startClient(t, h.client)
}

func startClient(t *testing.T, c *jobs.Client) {
	t.Helper()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.StopAndCancel(ctx)
	})
}

func (h *harness) record(t *testing.T, tn payments.Tenant, typ events.Type, data any) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := postgres.InTx(context.Background(), h.pool, func(tx pgx.Tx) error {
		var err error
		id, err = h.rec.Record(context.Background(), tx, tn.MerchantID, tn.Environment, typ, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (h *harness) create(t *testing.T, tn payments.Tenant, url string, evs ...string) webhooks.Created {
	t.Helper()
	c, err := h.svc.Create(context.Background(), tn, webhooks.CreateInput{URL: url, Events: evs})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitLogs waits until the filter matches at least n log entries and returns them, newest first.
func (h *harness) waitLogs(t *testing.T, tn payments.Tenant, f webhooks.LogFilter, n int) []webhooks.LogEntry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.Limit = 100
		logs, _, err := h.svc.Logs(context.Background(), tn, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) >= n {
			return logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d log entries after 10s, want %d", len(logs), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tenant() payments.Tenant {
	return payments.Tenant{MerchantID: uuid.New(), Environment: "sandbox"}
}

func TestDeliverySignedWithRawBody(t *testing.T) {
	rc, h := receiving(t, nil)
	h.start(t)
	tn := tenant()
	ep := h.create(t, tn, rc.srv.URL+"/hook")
	if !strings.HasPrefix(ep.Secret, "whsec_") || len(ep.Secret) != len("whsec_")+43 {
		t.Fatalf("secret %q", ep.Secret)
	}
	id := h.record(t, tn, events.DepositSettled, events.Deposit{ID: "dep_1", Amount: "1500.00", Currency: "NGN", Status: "SETTLED"})

	got := rc.wait(t)
	if err := webhooks.Verify(got.body, got.header.Get("X-Svc-Signature"), ep.Secret, time.Minute, time.Now()); err != nil {
		t.Fatalf("verify with the raw body: %v", err)
	}
	// Re-encoding the parsed body changes the bytes: only the raw body verifies.
	var env map[string]any
	if err := json.Unmarshal(got.body, &env); err != nil {
		t.Fatal(err)
	}
	reencoded, _ := json.MarshalIndent(env, "", " ")
	if webhooks.Verify(reencoded, got.header.Get("X-Svc-Signature"), ep.Secret, 0, time.Now()) == nil {
		t.Fatal("a re-encoded body verified")
	}
	if env["id"] != id.String() || env["event"] != "deposit.settled" || env["timestamp"] == nil || env["created_at"] == nil {
		t.Fatalf("envelope %s", got.body)
	}
	if data := env["data"].(map[string]any); data["id"] != "dep_1" || data["amount"] != "1500.00" {
		t.Fatalf("data %v", data)
	}
	if got.header.Get("X-Svc-Event-Id") != id.String() || got.header.Get("X-Svc-Timestamp") == "" ||
		!strings.HasPrefix(got.header.Get("User-Agent"), "svc-webhooks/") || got.header.Get("X-Svc-Test-Mode") != "" {
		t.Fatalf("headers %v", got.header)
	}
	logs := h.waitLogs(t, tn, webhooks.LogFilter{}, 1)
	if l := logs[0]; !l.Success || l.StatusCode == nil || *l.StatusCode != 200 || l.Attempt != 1 || string(l.Payload) == "" || *l.EventID != id {
		t.Fatalf("log %+v", l)
	}
}

func TestRetriesOn500ThenSucceeds(t *testing.T) {
	rc, h := receiving(t, func(r received) int {
		if r.n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	h.start(t)
	tn := tenant()
	h.create(t, tn, rc.srv.URL)
	id := h.record(t, tn, events.CustomerCreated, events.Customer{ID: "c1"})
	logs := h.waitLogs(t, tn, webhooks.LogFilter{Success: ptr(true)}, 1)
	all := h.waitLogs(t, tn, webhooks.LogFilter{}, 3)
	if len(all) != 3 || logs[0].Attempt != 3 {
		t.Fatalf("%d attempts, success on attempt %d; want 3 and 3", len(all), logs[0].Attempt)
	}
	for i, l := range all[1:] { // newest first
		if l.Success || *l.StatusCode != 500 || l.Error == nil || l.Attempt != 2-i {
			t.Fatalf("failed attempt %+v", l)
		}
	}
	rc.mu.Lock()
	for _, r := range rc.reqs {
		if r.header.Get("X-Svc-Event-Id") != id.String() {
			t.Errorf("retry carried event id %s", r.header.Get("X-Svc-Event-Id"))
		}
	}
	rc.mu.Unlock()
	// The worker counts each attempt by outcome (for /metrics) right after logging it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := h.worker.Stats()
		if st.Attempts[webhooks.OutcomeSuccess] == 1 && st.Attempts[webhooks.OutcomeFailure] == 2 && st.Count == 3 {
			var n uint64
			for _, b := range st.SecondsBuckets {
				n += b
			}
			if n != 3 || st.SecondsSum <= 0 {
				t.Fatalf("latency buckets %v sum %v for 3 attempts", st.SecondsBuckets, st.SecondsSum)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery stats %+v, want 1 success and 2 failures", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestGoneDisablesEndpoint(t *testing.T) {
	rc, h := receiving(t, func(received) int { return http.StatusGone })
	h.start(t)
	tn := tenant()
	ep := h.create(t, tn, rc.srv.URL)
	h.record(t, tn, events.DepositReceived, nil)
	h.record(t, tn, events.DepositReceived, nil) // queued behind it: stops without a send
	h.waitLogs(t, tn, webhooks.LogFilter{}, 1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := h.svc.Get(context.Background(), tn, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.IsActive {
			if got.DisabledReason == "" {
				t.Fatal("no disabled reason")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("endpoint still active after 410")
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitJobsDone(t, h.pool)
	if n := rc.count(); n > 2 {
		t.Fatalf("%d sends after 410, want at most 2 (one per event already in flight)", n)
	}
	var retryable int
	_ = h.pool.QueryRow(context.Background(), `select count(*) from river_job where state not in ('cancelled','completed')`).Scan(&retryable)
	if retryable != 0 {
		t.Fatalf("%d jobs still pending after 410", retryable)
	}
	// New events are no longer enqueued for it. Counted against the jobs before the new
	// event: the second event above gets a job only if it was recorded before the 410
	// disabled the endpoint, which the test does not control.
	var before, jobsN int
	_ = h.pool.QueryRow(context.Background(), `select count(*) from river_job`).Scan(&before)
	h.record(t, tn, events.DepositReceived, nil)
	_ = h.pool.QueryRow(context.Background(), `select count(*) from river_job`).Scan(&jobsN)
	if jobsN != before {
		t.Fatalf("%d jobs, want %d: a disabled endpoint gets no new deliveries", jobsN, before)
	}
}

func waitJobsDone(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		_ = pool.QueryRow(context.Background(), `select count(*) from river_job where state in ('available','running','retryable','scheduled')`).Scan(&n)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still pending", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTimeoutIsLogged(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(r received) int {
		if r.n == 1 {
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
		}
		return http.StatusOK
	})
	defer close(release)
	h := newHarness(t, harnessOpts{caFile: rc.caFile, timeout: 300 * time.Millisecond})
	h.start(t)
	tn := tenant()
	h.create(t, tn, rc.srv.URL)
	h.record(t, tn, events.PayoutCompleted, nil)
	failed := h.waitLogs(t, tn, webhooks.LogFilter{Success: ptr(false)}, 1)
	l := failed[len(failed)-1]
	if l.StatusCode != nil || l.Error == nil || !strings.Contains(*l.Error, "timeout") || l.Duration < 250*time.Millisecond {
		t.Fatalf("timeout log %+v (error %v)", l, deref(l.Error))
	}
	ok := h.waitLogs(t, tn, webhooks.LogFilter{Success: ptr(true)}, 1) // the retry gets through
	if ok[0].Attempt != 2 {
		t.Fatalf("retry after timeout was attempt %d", ok[0].Attempt)
	}
}

func TestRolledBackTransactionDeliversNothing(t *testing.T) {
	rc, h := receiving(t, nil)
	h.start(t)
	tn := tenant()
	h.create(t, tn, rc.srv.URL)
	boom := errors.New("the domain change failed")
	err := postgres.InTx(context.Background(), h.pool, func(tx pgx.Tx) error {
		if _, err := h.rec.Record(context.Background(), tx, tn.MerchantID, tn.Environment, events.DepositFailed, nil); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	committed := h.record(t, tn, events.DepositSettled, nil) // a marker that does commit
	got := rc.wait(t)
	if got.header.Get("X-Svc-Event-Id") != committed.String() {
		t.Fatalf("first delivery is %s, want the committed event", got.body)
	}
	time.Sleep(200 * time.Millisecond)
	if n := rc.count(); n != 1 {
		t.Fatalf("%d deliveries, want only the committed event's", n)
	}
}

// TestRotateSecretOverlap: during the overlap every delivery (queued before the rotation or
// after, test sends too) carries both signatures, and a receiver holding either secret
// accepts it; once the overlap ends only the new secret signs.
func TestRotateSecretOverlap(t *testing.T) {
	rc, h := receiving(t, nil)
	tn := tenant()
	ep := h.create(t, tn, rc.srv.URL)
	h.record(t, tn, events.DepositSettled, nil) // queued under the old secret
	before := time.Now()
	rot, err := h.svc.RotateSecret(context.Background(), tn, ep.ID, webhooks.RotateInput{}) // the default: 24 h
	if err != nil {
		t.Fatal(err)
	}
	if rot.PreviousExpiresAt == nil || rot.PreviousExpiresAt.Sub(before) < 24*time.Hour-time.Minute || rot.PreviousExpiresAt.Sub(before) > 24*time.Hour+time.Minute {
		t.Fatalf("previous expires at %v", rot.PreviousExpiresAt)
	}
	h.start(t)
	got := rc.wait(t)
	sig := got.header.Get("X-Svc-Signature")
	if parts := strings.Fields(sig); len(parts) != 2 || parts[0] != webhooks.Sign(got.body, rot.Secret) || parts[1] != webhooks.Sign(got.body, ep.Secret) {
		t.Fatalf("signature header %q: want the new secret's then the old one's", sig)
	}
	for name, secret := range map[string]string{"new": rot.Secret, "old": ep.Secret} {
		if err := webhooks.Verify(got.body, sig, secret, time.Minute, time.Now()); err != nil {
			t.Fatalf("the %s secret does not verify: %v", name, err)
		}
	}
	if !errors.Is(webhooks.Verify(got.body, sig, "whsec_other", 0, time.Now()), webhooks.ErrSignatureMismatch) {
		t.Fatal("a stranger's secret verifies")
	}
	h.record(t, tn, events.DepositFailed, nil) // queued after the rotation: both too
	got = rc.wait(t)
	if err := webhooks.Verify(got.body, got.header.Get("X-Svc-Signature"), ep.Secret, time.Minute, time.Now()); err != nil {
		t.Fatalf("a delivery after the rotation does not verify with the old secret: %v", err)
	}

	// A second rotation with a one-second overlap: the first secret is gone at once, the
	// second signs for a second more, then only the third.
	second := time.Second
	rot2, err := h.svc.RotateSecret(context.Background(), tn, ep.ID, webhooks.RotateInput{ExpiresIn: &second})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := h.svc.Test(context.Background(), tn, ep.ID, ""); err != nil || !res.Success {
		t.Fatalf("test send: %+v %v", res, err)
	}
	got = rc.wait(t)
	sig = got.header.Get("X-Svc-Signature")
	if webhooks.Verify(got.body, sig, rot.Secret, 0, time.Now()) != nil || webhooks.Verify(got.body, sig, rot2.Secret, 0, time.Now()) != nil ||
		webhooks.Verify(got.body, sig, ep.Secret, 0, time.Now()) == nil {
		t.Fatalf("after the second rotation %q", sig)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := h.svc.Test(context.Background(), tn, ep.ID, ""); err != nil {
		t.Fatal(err)
	}
	got = rc.wait(t)
	sig = got.header.Get("X-Svc-Signature")
	if strings.Contains(sig, " ") || webhooks.Verify(got.body, sig, rot2.Secret, 0, time.Now()) != nil {
		t.Fatalf("after the overlap %q", sig)
	}

	for _, bad := range []time.Duration{-time.Second, webhooks.MaxRotationOverlap + time.Second} {
		var fe *payments.FieldError
		if _, err := h.svc.RotateSecret(context.Background(), tn, ep.ID, webhooks.RotateInput{ExpiresIn: &bad}); !errors.As(err, &fe) || fe.Field != "expires_in" {
			t.Fatalf("expires_in %v: %v", bad, err)
		}
	}
}

// TestRotateSecretTakesEffectAtOnce: expires_in 0 retires the old secret at once, also for
// deliveries already queued.
func TestRotateSecretTakesEffectAtOnce(t *testing.T) {
	rc, h := receiving(t, nil)
	tn := tenant()
	ep := h.create(t, tn, rc.srv.URL)
	h.record(t, tn, events.DepositSettled, nil) // queued under the old secret
	zero := time.Duration(0)
	rot, err := h.svc.RotateSecret(context.Background(), tn, ep.ID, webhooks.RotateInput{ExpiresIn: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if rot.Secret == ep.Secret || rot.ID != ep.ID {
		t.Fatal("rotation kept the secret")
	}
	h.start(t)
	got := rc.wait(t)
	sig := got.header.Get("X-Svc-Signature")
	if err := webhooks.Verify(got.body, sig, rot.Secret, time.Minute, time.Now()); err != nil {
		t.Fatalf("the new secret does not verify the queued delivery: %v", err)
	}
	if !errors.Is(webhooks.Verify(got.body, sig, ep.Secret, 0, time.Now()), webhooks.ErrSignatureMismatch) {
		t.Fatal("the old secret still verifies")
	}
	// Test sends use it too.
	res, err := h.svc.Test(context.Background(), tn, ep.ID, "")
	if err != nil || !res.Success {
		t.Fatalf("test send: %+v %v", res, err)
	}
	got = rc.wait(t)
	if got.header.Get("X-Svc-Test-Mode") != "true" || webhooks.Verify(got.body, got.header.Get("X-Svc-Signature"), rot.Secret, time.Minute, time.Now()) != nil {
		t.Fatalf("test send headers %v", got.header)
	}
}

func TestDeliveriesStayWithTheirTenant(t *testing.T) {
	rc, h := receiving(t, nil)
	h.start(t)
	m1 := tenant()
	m1live := payments.Tenant{MerchantID: m1.MerchantID, Environment: "live"}
	m2 := tenant()
	h.create(t, m1, rc.srv.URL+"/m1-sandbox")
	// Live endpoints need a real key: the development key refuses them.
	if _, err := h.svc.Create(context.Background(), m1live, webhooks.CreateInput{URL: rc.srv.URL + "/m1-live"}); !errors.Is(err, webhooks.ErrNoLiveKey) {
		t.Fatalf("live endpoint with the dev key: %v", err)
	}
	live := webhooks.NewService(h.pool, mustCipher(t), h.sender)
	if _, err := live.Create(context.Background(), m1live, webhooks.CreateInput{URL: rc.srv.URL + "/m1-live"}); err != nil {
		t.Fatal(err)
	}
	other := h.create(t, m2, rc.srv.URL+"/m2-sandbox")

	h.record(t, m1, events.CustomerCreated, nil)
	got := rc.wait(t)
	time.Sleep(200 * time.Millisecond)
	if got.path != "/m1-sandbox" || rc.count() != 1 {
		t.Fatalf("delivered to %s (%d deliveries), want only /m1-sandbox", got.path, rc.count())
	}
	// Another merchant's endpoint does not exist for m1.
	ctx := context.Background()
	if _, err := h.svc.Get(ctx, m1, other.ID); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("get: %v", err)
	}
	if _, err := h.svc.Update(ctx, m1, other.ID, webhooks.UpdateInput{IsActive: ptr(false)}); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("update: %v", err)
	}
	if err := h.svc.Delete(ctx, m1, other.ID); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("delete: %v", err)
	}
	if _, err := h.svc.RotateSecret(ctx, m1, other.ID, webhooks.RotateInput{}); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("rotate: %v", err)
	}
	if _, err := h.svc.Test(ctx, m1, other.ID, ""); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("test: %v", err)
	}
	if logs, _, _ := h.svc.Logs(ctx, m2, webhooks.LogFilter{}); len(logs) != 0 {
		t.Fatalf("m2 sees %d of m1's logs", len(logs))
	}
	if eps, _ := h.svc.List(ctx, m1live); len(eps) != 1 {
		t.Fatalf("m1 live has %d endpoints", len(eps))
	}
}

func TestDisabledOrDeletedEndpointStopsPendingDeliveries(t *testing.T) {
	rc, h := receiving(t, nil)
	tn := tenant()
	a := h.create(t, tn, rc.srv.URL+"/a")
	b := h.create(t, tn, rc.srv.URL+"/b")
	h.record(t, tn, events.DepositSettled, nil)
	ctx := context.Background()
	if _, err := h.svc.Update(ctx, tn, a.ID, webhooks.UpdateInput{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.Delete(ctx, tn, b.ID); err != nil {
		t.Fatal(err)
	}
	h.start(t)
	waitJobsDone(t, h.pool)
	if n := rc.count(); n != 0 {
		t.Fatalf("%d deliveries to a disabled and a deleted endpoint", n)
	}
	var cancelled int
	_ = h.pool.QueryRow(ctx, `select count(*) from river_job where state = 'cancelled'`).Scan(&cancelled)
	if cancelled != 2 {
		t.Fatalf("%d cancelled jobs, want 2", cancelled)
	}
}

func TestSSRFGuard(t *testing.T) {
	rc := newReceiver(t, nil)
	port := rc.srv.URL[strings.LastIndex(rc.srv.URL, ":")+1:]
	h := newHarness(t, harnessOpts{caFile: rc.caFile, secure: true, timeout: 2 * time.Second})
	tn := tenant()
	ctx := context.Background()

	t.Run("creation refuses literal internal addresses and http", func(t *testing.T) {
		for _, u := range []string{
			"https://127.0.0.1/", "https://10.0.0.1/", "https://169.254.169.254/latest/meta-data",
			"https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://localhost/", "https://0.0.0.0/",
			"http://example.com/", "ftp://example.com/", "example.com", "https://user:pw@example.com/",
		} {
			_, err := h.svc.Create(ctx, tn, webhooks.CreateInput{URL: u})
			var fe *payments.FieldError
			if !errors.As(err, &fe) || fe.Field != "url" {
				t.Errorf("%s: %v, want a url field error", u, err)
			}
		}
		if _, err := h.svc.Create(ctx, tn, webhooks.CreateInput{URL: "https://example.com/hooks", Events: []string{"deposit.settled", "nope"}}); err == nil || !strings.Contains(err.Error(), "events[1]") {
			t.Errorf("unknown event: %v", err)
		}
	})

	t.Run("the dialer refuses internal addresses at connect time", func(t *testing.T) {
		for _, host := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "[::1]", "[::ffff:10.0.0.1]", "localhost"} {
			u := "https://" + host + ":" + port + "/"
			// Bypass creation checks, as a DNS change after creation would.
			ep := h.create(t, tn, "https://example.com/")
			if _, err := h.pool.Exec(ctx, `update webhook_endpoints set url = $1 where id = $2`, u, ep.ID); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := h.svc.Test(ctx, tn, ep.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Success || res.Error == nil || !strings.Contains(*res.Error, "refused") || res.StatusCode != nil {
				t.Errorf("%s: %+v (%s), want refused", host, res, deref(res.Error))
			}
			if time.Since(start) > time.Second {
				t.Errorf("%s: refusal took %s", host, time.Since(start))
			}
		}
		if rc.count() != 0 {
			t.Fatalf("the receiver on loopback got %d requests", rc.count())
		}
	})

	t.Run("the development switch allows loopback, never link-local", func(t *testing.T) {
		dev := newHarness(t, harnessOpts{caFile: rc.caFile, timeout: time.Second})
		ep := dev.create(t, tn, rc.srv.URL)
		if res, err := dev.svc.Test(ctx, tn, ep.ID, "deposit.settled"); err != nil || !res.Success {
			t.Fatalf("loopback with the switch on: %+v %v", res, err)
		}
		meta := dev.create(t, tn, "http://169.254.169.254/latest/meta-data")
		res, err := dev.svc.Test(ctx, tn, meta.ID, "")
		if err != nil || res.Success || !strings.Contains(deref(res.Error), "link-local") {
			t.Fatalf("metadata address with the switch on: %+v %v", res, err)
		}
	})
}

// TestCrashMidDeliveryLosesNothing kills a worker process while its delivery is in flight
// (SIGKILL: no cleanup, the job row stays "running"), then starts a new worker: river's
// rescuer finds the stuck job and the event is delivered.
func TestCrashMidDeliveryLosesNothing(t *testing.T) {
	if os.Getenv("SVC_WEBHOOK_CRASH_CHILD") != "" {
		t.Skip("helper process")
	}
	hang := make(chan struct{})
	rc := newReceiver(t, func(r received) int {
		if r.n == 1 {
			<-hang // the first attempt never gets an answer: its process dies meanwhile
		}
		return http.StatusOK
	})
	defer close(hang)
	h := newHarness(t, harnessOpts{caFile: rc.caFile})
	tn := tenant()
	ep := h.create(t, tn, rc.srv.URL)
	id := h.record(t, tn, events.DepositSettled, nil)

	child := startCrashChild(t, h.url, rc.caFile)
	first := rc.wait(t) // the child is mid-delivery
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	var state string
	_ = h.pool.QueryRow(context.Background(), `select state from river_job`).Scan(&state)
	if state != "running" {
		t.Fatalf("job state after the crash %q, want running", state)
	}
	// The dead process held river's leadership, which lapses after its TTL (15 s); end it
	// now rather than wait, as the TTL would.
	if _, err := h.pool.Exec(context.Background(), `delete from river_leader`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // older than the job timeout and RescueStuckJobsAfter below
	// The restarted process's worker presumes a job lost once it has run longer than its
	// job timeout (20 s in production; 2 s here, enough for a TLS attempt on a loaded machine).
	workers := river.NewWorkers()
	w := webhooks.NewWorker(h.pool, h.cipher, h.sender, webhooks.WorkerConfig{RetryBase: 5 * time.Millisecond, JobTimeout: 2 * time.Second})
	if err := webhooks.Register(workers, w); err != nil {
		t.Fatal(err)
	}
	startClient(t, newClient(t, h.pool, workers, 2*time.Second))
	second := rc.wait(t)
	if first.header.Get("X-Svc-Event-Id") != id.String() || second.header.Get("X-Svc-Event-Id") != id.String() {
		t.Fatal("the redelivery is not the same event")
	}
	if err := webhooks.Verify(second.body, second.header.Get("X-Svc-Signature"), ep.Secret, time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	logs := h.waitLogs(t, tn, webhooks.LogFilter{Success: ptr(true)}, 1)
	if logs[0].Attempt != 2 {
		t.Fatalf("delivered on attempt %d, want 2", logs[0].Attempt)
	}
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func mustCipher(t *testing.T) *webhooks.Cipher {
	key, err := webhooks.ParseKey("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if err != nil {
		t.Fatal(err)
	}
	c, err := webhooks.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
