package sandbox_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"

	"svc/payments/partners"
)

// noticeRow is the partner_events row of the sandbox bank's notification of a simulated deposit.
type noticeRow struct {
	id                uuid.UUID
	status, outcome   string
	eventType, env    string
	deposit           *uuid.UUID
	processed         bool
	headers           map[string]string
	body              []byte
	jobs, depositRows int
}

func (r *rig) notice(t testing.TB, onramp string) noticeRow {
	t.Helper()
	var n noticeRow
	err := r.pool.QueryRow(t.Context(), `select e.id, e.status, coalesce(e.outcome, ''), e.event_type, e.environment, e.deposit_id,
			e.processed_at is not null, e.headers, e.body,
			(select count(*) from river_job where queue = $2 and args->>'id' = e.id::text),
			(select count(*) from deposits where onramp_id = $1)
		from partner_events e join deposits d on d.id = e.deposit_id where d.onramp_id = $1`, onramp, partners.Queue).
		Scan(&n.id, &n.status, &n.outcome, &n.eventType, &n.env, &n.deposit, &n.processed, &n.headers, &n.body, &n.jobs, &n.depositRows)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The simulation reads the onramp once, locked in the intake's transaction, and processes
// the notification there: its row is stored done (status, outcome, deposit, processed_at)
// with no job, and a replay of the same notification finds that row and processes nothing.
// Concurrent simulations on one TEMPORARY onramp serialise on its lock: one deposit.
func TestSimulatedDepositNotificationIsStoredProcessedOnce(t *testing.T) {
	r := newRig(t)
	key := r.a.SandboxKey
	o := r.onramp(t, key, 16000, nil)
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o}))
	n := r.notice(t, o)
	if n.status != partners.Processed || n.outcome != "deposit "+d.ID+" received" || n.deposit == nil || n.deposit.String() != d.ID ||
		!n.processed || n.eventType != partners.TypeInboundTransfer || n.env != "sandbox" || n.jobs != 0 || n.depositRows != 1 {
		t.Fatalf("notification row %+v for deposit %s", n, d.ID)
	}

	h := http.Header{}
	for k, v := range n.headers {
		h.Set(k, v)
	}
	for range 2 { // the bank delivering it again: the stored row answers
		rc, err := r.partners.Receive(t.Context(), partners.SandboxBank, partners.Incoming{Header: h, Body: n.body, RemoteAddr: "127.0.0.1"})
		if err != nil || !rc.Duplicate || rc.ID != n.id || rc.Status != partners.Processed {
			t.Fatalf("replay: %+v %v", rc, err)
		}
		res, err := r.partners.Process(t.Context(), rc.ID)
		if err != nil || res.DepositID == nil || res.DepositID.String() != d.ID {
			t.Fatalf("replay processed: %+v %v", res, err)
		}
	}
	if again := r.notice(t, o); again.depositRows != 1 || again.jobs != 0 || again.id != n.id {
		t.Fatalf("after the replays: %+v", again)
	}

	// The TEMPORARY onramp is paid: another simulation is refused with nothing stored; so
	// is another merchant's simulation on it (the locked read is the tenant's).
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o}), 422, "ONRAMP_NOT_ACTIVE")
	r.srv.Must(t, 404, "POST", "/v1/payments/sandbox/deposits", r.b.SandboxKey, map[string]any{"onramp_id": o})
	var stored int
	if err := r.pool.QueryRow(t.Context(), `select count(*) from partner_events`).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("%d notifications stored (%v)", stored, err)
	}

	const k = 6
	o2 := r.onramp(t, key, 16000, nil)
	codes := make([]string, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			res := r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o2})
			codes[i] = res.Message
			if res.Status == 201 {
				codes[i] = "created"
			}
		})
	}
	wg.Wait()
	created := 0
	for i, c := range codes {
		switch c {
		case "created":
			created++
		case "ONRAMP_NOT_ACTIVE":
		default:
			t.Fatalf("simulation %d: %s", i, c)
		}
	}
	if n2 := r.notice(t, o2); created != 1 || n2.depositRows != 1 || n2.status != partners.Processed {
		t.Fatalf("%d created, notification %+v", created, n2)
	}
	verify(t, r.pool)
}
