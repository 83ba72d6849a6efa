//go:build linux

package main

// The partition test's load, nemesis schedule and checker (partition_test.go runs them).
//
// The history: every order a client placed, with the gateway, when the request was sent and
// when its answer came, and the answer (201 with the order id, a refusal, or none). The
// checker reads it against the final journal, read two ways (the journal package's reader,
// and a raw read of the Kafka partition that keeps each record's epoch):
//   - every acknowledged order (201) is accepted in the journal exactly once, in a record
//     the fencing rule keeps (lost: 0, duplicated: 0);
//   - no two engines acknowledged in overlapping lease terms: an order acknowledged by
//     epoch e was sent before every order acknowledged by a later epoch was answered;
//   - the balances the API answered at the end equal a replay of the journal from scratch;
//   - the ledger verifies (payments/ledger.Verify).
// It prints the faults injected, the orders acknowledged, lost and duplicated, and each
// fault's recovery time.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"svc/engine"
	"svc/gateway/auth/authtest"
	"svc/payments/ledger"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// ack is one acknowledged order.
type ack struct {
	id         string
	client     string
	gateway    int
	sent, recv time.Time
}

// history is what the clients saw.
type history struct {
	c       *pcluster
	clients []*pclient

	mu       sync.Mutex
	acks     []ack
	lastOK   [2]time.Time  // the last answer from the engine (201, or 422) per gateway
	oks      []time.Time   // every such answer's time, in order
	unknown  int           // no answer
	refused  map[int]int   // by status
	faults   []faultResult // in order
	cancels  int
	canceled map[string]bool
	// cancels answered 404: the engine may have forgotten an order that closed meanwhile
	// (it keeps only the newest closed orders); the checker finds it closed in the journal.
	cancel404 []string
}

type faultResult struct {
	name                     string
	injected, healed         time.Time
	recoveredAfterHeal, wait time.Duration // heal -> a 201 on every gateway; the longest time without any 201 around it
	ok                       bool
}

func newHistory(c *pcluster, seed uint64) *history {
	h := &history{c: c, refused: map[int]int{}, canceled: map[string]bool{}}
	for i := range 4 {
		m := authtest.New(c.t, c.pool)
		if i == 0 && os.Getenv("SVC_PARTITION_KEEP") != "" {
			c.t.Logf("first merchant's sandbox key (for a look by hand): %s", m.SandboxKey)
		}
		h.clients = append(h.clients, &pclient{name: fmt.Sprintf("m%d", i), id: m.ID, key: m.SandboxKey,
			rng: rand.New(rand.NewPCG(seed, uint64(i+1)))})
	}
	return h
}

// pclient places and cancels orders for one merchant, through both gateways in turn.
type pclient struct {
	name string
	id   uuid.UUID
	key  string
	rng  *rand.Rand
	open []string
	n    int
}

func (h *history) do(gw int, key, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.c.url(h.c.gws[gw].role, 8080)+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Api-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// fund credits every client's trading account through the first gateway.
func (h *history) fund(t *testing.T) {
	for _, c := range h.clients {
		for _, f := range crashFunding {
			status, body, err := h.do(0, c.key, http.MethodPost, "/v1/trading/sandbox/fund", map[string]string{"asset": f.asset.String(), "amount": f.amount})
			if err != nil || status != http.StatusCreated {
				t.Fatalf("fund %s %s: %d %v %s", c.name, f.asset, status, err, body)
			}
		}
	}
}

func (c *pclient) loop(ctx context.Context, h *history) {
	for ctx.Err() == nil {
		c.n++
		gw := c.n % 2
		if len(c.open) > 0 && c.rng.IntN(100) < 30 {
			c.cancel(h, gw)
		} else {
			c.place(h, gw)
		}
		// Bounded load: the box is small and shared.
		time.Sleep(time.Duration(20+c.rng.IntN(20)) * time.Millisecond)
	}
}

func (c *pclient) place(h *history, gw int) {
	r := c.rng
	sym := crashSymbols[r.IntN(len(crashSymbols))]
	side := []string{"buy", "sell"}[r.IntN(2)]
	req := map[string]any{"symbol": sym, "side": side, "client_order_id": fmt.Sprintf("%s-%d-%d", c.name, c.n, r.Uint32()),
		"type": "limit", "price": fmt.Sprintf("%d.00", 1495+r.IntN(11)), "quantity": fmt.Sprintf("%d.00", 1+r.IntN(3))}
	if r.IntN(10) == 0 {
		req = map[string]any{"symbol": sym, "side": side, "client_order_id": req["client_order_id"], "type": "market", "quantity": "1.00"}
	}
	sent := time.Now()
	status, body, err := h.do(gw, c.key, http.MethodPost, "/v1/trading/orders", req)
	recv := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil:
		h.unknown++
	case status == http.StatusCreated:
		var o orderJSONView
		if err := json.Unmarshal(body, &struct{ Data *orderJSONView }{&o}); err != nil || o.ID == "" {
			h.c.t.Errorf("201 with a body that is not an order: %s", body)
			return
		}
		h.acks = append(h.acks, ack{id: o.ID, client: c.name, gateway: gw, sent: sent, recv: recv})
		h.lastOK[gw] = recv
		h.oks = append(h.oks, recv)
		if o.Status == "OPEN" || o.Status == "PARTIALLY_FILLED" {
			c.open = append(c.open, o.ID)
		}
	case status == http.StatusUnprocessableEntity:
		// The engine answered (funds locked in resting orders): it serves, for the recovery
		// and steadiness measures as much as a 201.
		h.refused[status]++
		h.lastOK[gw] = recv
		h.oks = append(h.oks, recv)
	case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
		h.refused[status]++
	default:
		h.c.t.Errorf("place through gw-%d: %d %s", gw+1, status, body)
	}
}

func (c *pclient) cancel(h *history, gw int) {
	i := c.rng.IntN(len(c.open))
	id := c.open[i]
	status, body, err := h.do(gw, c.key, http.MethodDelete, "/v1/trading/orders/"+id, nil)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil:
		h.unknown++
		return
	case status == http.StatusOK:
		h.cancels++
		h.canceled[id] = true
	case status == http.StatusUnprocessableEntity:
	case status == http.StatusNotFound:
		h.cancel404 = append(h.cancel404, id)
	case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
		h.refused[status]++
		return
	default:
		h.c.t.Errorf("cancel %s: %d %s", id, status, body)
	}
	c.open = slices.Delete(c.open, i, i+1)
}

// balances reads every client's balances through the first gateway (retrying while the
// cluster settles).
func (h *history) balances(t *testing.T) map[uuid.UUID]engine.Balances {
	out := map[uuid.UUID]engine.Balances{}
	for _, c := range h.clients {
		var (
			status int
			body   []byte
			err    error
		)
		for deadline := time.Now().Add(60 * time.Second); ; {
			status, body, err = h.do(0, c.key, http.MethodGet, "/v1/trading/balances", nil)
			if err == nil && status == http.StatusOK || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil || status != http.StatusOK {
			t.Fatalf("balances %s: %d %v %s", c.name, status, err, body)
		}
		out[c.id] = decodeBalances(t, c.name, body)
	}
	return out
}

// pfault is one fault of the nemesis: inject returns its heal.
type pfault struct {
	name   string
	hold   time.Duration
	inject func(c *pcluster, leader *pproc) (heal func())
}

func partitionFaults(c *pcluster) []pfault {
	ttl := c.plan.TTL
	cut := func(pairs ...[2]string) func() {
		for _, p := range pairs {
			if err := c.n.Cut(p[0], p[1]); err != nil {
				c.t.Fatal(err)
			}
		}
		return func() {
			if err := c.n.Heal(); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	return []pfault{
		{name: "leader <-> PostgreSQL", hold: 3 * ttl, inject: func(c *pcluster, l *pproc) func() {
			return cut([2]string{l.role, "pg"})
		}},
		{name: "leader <-> Kafka", hold: 3 * ttl, inject: func(c *pcluster, l *pproc) func() {
			return cut([2]string{l.role, "kafka"})
		}},
		{name: "gateway gw-1 <-> engines", hold: 2 * ttl, inject: func(c *pcluster, _ *pproc) func() {
			return cut([2]string{"gw-1", "engine-a"}, [2]string{"gw-1", "engine-b"})
		}},
		{name: "standby <-> Kafka", hold: 2 * ttl, inject: func(c *pcluster, l *pproc) func() {
			return cut([2]string{c.other(l).role, "kafka"})
		}},
		{name: "leader paused (SIGSTOP) past its lease", hold: 2*ttl + time.Second, inject: func(c *pcluster, l *pproc) func() {
			l.signal(syscall.SIGSTOP)
			return func() { l.signal(syscall.SIGCONT) }
		}},
	}
}

// soakFaults are longer ones, for the soak only: a leader cut from Kafka until its journal
// gives up (3 attempts of 10 s), so that it exits and the standby takes over.
func soakFaults(c *pcluster) []pfault {
	return []pfault{
		{name: "leader <-> Kafka until its journal fails", hold: 45 * time.Second, inject: func(c *pcluster, l *pproc) func() {
			if err := c.n.Cut(l.role, "kafka"); err != nil {
				c.t.Fatal(err)
			}
			return func() {
				if err := c.n.Heal(); err != nil {
					c.t.Fatal(err)
				}
			}
		}},
	}
}

// waitSteady waits until one engine leads, the other waits as its standby, and both
// gateways acknowledged an order in the last seconds (or the load is off). It returns the
// leader.
func (c *pcluster) waitSteady(h *history) *pproc {
	deadline := time.Now().Add(90 * time.Second)
	for {
		l := c.leader()
		steady := l != nil
		if steady {
			o := c.other(l)
			steady = o.alive() && c.standbyWaiting(o)
		}
		if steady {
			h.mu.Lock()
			loadOn := len(h.oks) > 0 && time.Since(h.oks[len(h.oks)-1]) < 10*time.Second
			fresh := time.Since(h.lastOK[0]) < 3*time.Second && time.Since(h.lastOK[1]) < 3*time.Second
			h.mu.Unlock()
			steady = fresh || !loadOn
		}
		if steady {
			return l
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the cluster did not settle within 90 s (leader %v)", l != nil)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runFault injects f once the cluster is steady, heals it after f.hold, and measures the
// recovery: from the heal until every gateway acknowledged an order again, and the longest
// time without any acknowledgement from the injection to then.
func (c *pcluster) runFault(h *history, f pfault) {
	leader := c.waitSteady(h)
	r := faultResult{name: f.name, injected: time.Now()}
	heal := f.inject(c, leader)
	time.Sleep(f.hold)
	heal()
	r.healed = time.Now()
	deadline := r.healed.Add(60 * time.Second)
	for {
		h.mu.Lock()
		done := h.lastOK[0].After(r.healed) && h.lastOK[1].After(r.healed)
		var back time.Time
		if done {
			back = h.lastOK[0]
			if h.lastOK[1].After(back) {
				back = h.lastOK[1]
			}
			// The first 201 after the heal on the slower gateway.
			back = h.firstOKAfter(r.healed, back)
		}
		h.mu.Unlock()
		if done {
			r.recoveredAfterHeal, r.ok = back.Sub(r.healed), true
			break
		}
		if time.Now().After(deadline) {
			c.t.Errorf("fault %q: no order acknowledged on both gateways within 60 s of the heal", f.name)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.mu.Lock()
	prev := r.injected
	end := r.healed.Add(r.recoveredAfterHeal)
	for _, t := range h.oks {
		if t.Before(r.injected) || t.After(end) {
			continue
		}
		r.wait = max(r.wait, t.Sub(prev))
		prev = t
	}
	r.wait = max(r.wait, end.Sub(prev))
	h.faults = append(h.faults, r)
	h.mu.Unlock()
	c.t.Logf("fault %-40s held %v; acknowledged again on both gateways %v after the heal; longest time without a 201: %v",
		f.name, f.hold, r.recoveredAfterHeal.Round(time.Millisecond), r.wait.Round(time.Millisecond))
}

// firstOKAfter is the time by which every gateway had answered a 201 after t (called with
// mu held): the later of each gateway's first 201 after t. last bounds it.
func (h *history) firstOKAfter(t, last time.Time) time.Time {
	var first [2]time.Time
	for _, a := range h.acks {
		if a.recv.After(t) && (first[a.gateway].IsZero() || a.recv.Before(first[a.gateway])) {
			first[a.gateway] = a.recv
		}
	}
	if first[0].IsZero() || first[1].IsZero() {
		return last
	}
	if first[0].After(first[1]) {
		return first[0]
	}
	return first[1]
}

// rawRecord is one journal record as the raw read of the partition found it.
type rawRecord struct {
	seq, epoch uint64
	kept       bool
}

// checkPartitionHistory is the checker.
func checkPartitionHistory(t *testing.T, h *history, pool *pgxpool.Pool, brokers, topic string, apiBalances map[uuid.UUID]engine.Balances) {
	ctx := context.Background()
	h.mu.Lock()
	defer h.mu.Unlock()

	// 1. The raw partition: each accepted order with the epoch of its record, and whether
	// the fencing rule keeps it (a record of a lower epoch after a fence is dropped).
	acceptedIn := map[engine.OrderID][]rawRecord{} // kept or not
	ordered, traded := map[engine.OrderID]engine.Qty{}, map[engine.OrderID]engine.Qty{}
	closed := map[engine.OrderID]bool{}
	var maxEpoch, lastSeq uint64
	var records, dropped, repeats int
	epochs := map[uint64]int{}
	conn, err := kafka.DialLeader(ctx, "tcp", strings.Split(brokers, ",")[0], topic, 0)
	if err != nil {
		t.Fatalf("checker: dial the journal's partition: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	first, end, err := conn.ReadOffsets()
	if err != nil {
		t.Fatalf("checker: offsets: %v", err)
	}
	if _, err := conn.Seek(first, kafka.SeekAbsolute); err != nil {
		t.Fatal(err)
	}
	var ev engine.Event
	for next := first; next < end; {
		batch := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 5 * time.Second})
		for next < end {
			msg, err := batch.ReadMessage()
			if err != nil {
				break
			}
			next = msg.Offset + 1
			seq := binary.BigEndian.Uint64(msg.Key)
			var epoch uint64
			for _, hd := range msg.Headers {
				if hd.Key == "epoch" && len(hd.Value) == 8 {
					epoch = binary.BigEndian.Uint64(hd.Value)
				}
			}
			kept := epoch >= maxEpoch
			if kept {
				maxEpoch = epoch
			}
			if seq == 0 { // a fence marker
				continue
			}
			records++
			if kept && seq <= lastSeq {
				repeats++ // a retried produce request: the journal skips what it has seen
				continue
			}
			if kept {
				lastSeq = seq
				epochs[epoch]++
			} else {
				dropped++
			}
			err = engine.DecodeRecord(msg.Value, &ev, func(ev *engine.Event) error {
				switch ev.Kind {
				case engine.EventAccepted:
					acceptedIn[ev.OrderID] = append(acceptedIn[ev.OrderID], rawRecord{seq: seq, epoch: epoch, kept: kept})
					if kept {
						ordered[ev.OrderID] = ev.Qty
					}
				case engine.EventTrade:
					if kept {
						traded[ev.OrderID] += ev.Qty
						traded[ev.MakerOrderID] += ev.Qty
					}
				case engine.EventCancelled, engine.EventDone:
					if kept {
						closed[ev.OrderID] = true
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("checker: record %d: %v", seq, err)
			}
		}
		if err := batch.Close(); err != nil && next < end {
			t.Fatalf("checker: reading the partition at %d: %v", next, err)
		}
	}

	// 2. Every acknowledged order exactly once among the kept records.
	var lost, duplicated, lostToFence int
	byEpoch := map[uint64][]ack{}
	for _, a := range h.acks {
		oid := engine.OrderID(uuid.MustParse(a.id))
		var kept []rawRecord
		for _, r := range acceptedIn[oid] {
			if r.kept {
				kept = append(kept, r)
			}
		}
		switch {
		case len(kept) == 0 && len(acceptedIn[oid]) > 0:
			lostToFence++
			lost++
			t.Errorf("LOST: order %s (%s, 201 from gw-%d at %s) is only in records of a deposed epoch %v",
				a.id, a.client, a.gateway+1, a.recv.Format("15:04:05.000"), acceptedIn[oid])
		case len(kept) == 0:
			lost++
			t.Errorf("LOST: order %s (%s, 201 from gw-%d at %s) is not in the journal", a.id, a.client, a.gateway+1, a.recv.Format("15:04:05.000"))
		case len(kept) > 1:
			duplicated++
			t.Errorf("DUPLICATED: order %s accepted %d times in the journal", a.id, len(kept))
		default:
			byEpoch[kept[0].epoch] = append(byEpoch[kept[0].epoch], a)
		}
	}
	for oid, rs := range acceptedIn {
		n := 0
		for _, r := range rs {
			if r.kept {
				n++
			}
		}
		if n > 1 {
			t.Errorf("order %s accepted %d times in the journal's kept records", uuid.UUID(oid), n)
		}
	}

	// A cancel answered 404 is fine only for an order that closed (filled or cancelled): the
	// engine forgets the oldest closed orders. One still open in the journal was lost.
	for _, id := range h.cancel404 {
		oid := engine.OrderID(uuid.MustParse(id))
		if !closed[oid] && (ordered[oid] == 0 || traded[oid] < ordered[oid]) {
			lost++
			t.Errorf("LOST: cancel of acknowledged order %s answered 404, and the journal has it open (%d of %d traded)", id, traded[oid], ordered[oid])
		}
	}

	// 3. No two engines acknowledged in overlapping terms: every order acknowledged under
	// epoch e was sent before any order acknowledged under a later epoch was answered.
	var es []uint64
	for e := range byEpoch {
		es = append(es, e)
	}
	slices.Sort(es)
	overlaps := 0
	for i, e1 := range es {
		var lastSent time.Time
		var late ack
		for _, a := range byEpoch[e1] {
			if a.sent.After(lastSent) {
				lastSent, late = a.sent, a
			}
		}
		for _, e2 := range es[i+1:] {
			for _, b := range byEpoch[e2] {
				if b.recv.Before(lastSent) {
					overlaps++
					t.Errorf("OVERLAP: epoch %d acknowledged order %s (sent %s) after epoch %d had acknowledged order %s (answered %s)",
						e1, late.id, late.sent.Format("15:04:05.000"), e2, b.id, b.recv.Format("15:04:05.000"))
					break
				}
			}
		}
	}
	// The same against the recorded terms (the database's clock is this machine's): an order
	// acknowledged under epoch e was sent before term e+1 began, since epoch e stopped
	// acknowledging before its lease expired there, which is before e+1 could take it.
	var terms []string
	began := map[uint64]time.Time{}
	rows, err := pool.Query(ctx, `select epoch, holder, acquired_at from engine_lease_terms where environment = 'sandbox' order by epoch`)
	if err != nil {
		t.Fatalf("checker: lease terms: %v", err)
	}
	for rows.Next() {
		var e int64
		var holder string
		var at time.Time
		if err := rows.Scan(&e, &holder, &at); err != nil {
			t.Fatal(err)
		}
		began[uint64(e)] = at
		terms = append(terms, fmt.Sprintf("%d from %s (%d acknowledged)", e, at.Format("15:04:05.000"), len(byEpoch[uint64(e)])))
	}
	rows.Close()
	for e, acks := range byEpoch {
		for next := e + 1; next <= maxEpoch; next++ {
			at, ok := began[next]
			if !ok {
				continue
			}
			for _, a := range acks {
				if a.sent.After(at.Add(10 * time.Millisecond)) {
					overlaps++
					t.Errorf("OVERLAP: epoch %d acknowledged order %s sent at %s, after term %d began at %s",
						e, a.id, a.sent.Format("15:04:05.000"), next, at.Format("15:04:05.000"))
				}
			}
			break // the first later term is the tightest bound
		}
	}

	// 4. The journal package's own reader agrees, and a replay from scratch gives the API's
	// balances.
	j, err := journal.OpenKafka(ctx, journal.KafkaOptions{Brokers: strings.Split(brokers, ","), Topic: topic, ReadOnly: true})
	if err != nil {
		t.Fatalf("checker: open the journal: %v", err)
	}
	defer j.Close()
	readerAccepted := map[engine.OrderID]int{}
	if err := j.ReadFrom(ctx, 1, func(off uint64, payload []byte) error {
		return engine.DecodeRecord(payload, &ev, func(ev *engine.Event) error {
			if ev.Kind == engine.EventAccepted {
				readerAccepted[ev.OrderID]++
			}
			return nil
		})
	}); err != nil {
		t.Fatalf("checker: read the journal: %v", err)
	}
	for oid, rs := range acceptedIn {
		kept := slices.ContainsFunc(rs, func(r rawRecord) bool { return r.kept })
		if kept != (readerAccepted[oid] == 1) {
			t.Errorf("order %s: raw read keeps it %v, the journal reader reads it %d times", uuid.UUID(oid), kept, readerAccepted[oid])
		}
	}
	eng, err := engine.New(engine.Config{Journal: &engine.DiscardJournal{}})
	if err != nil {
		t.Fatal(err)
	}
	last, events, err := eventlog.Replay(ctx, j, 0, eng, nil)
	if err != nil {
		t.Fatalf("checker: replay from scratch: %v", err)
	}
	if last != j.LastOffset() {
		t.Errorf("replay stopped at %d of %d", last, j.LastOffset())
	}
	balanceMismatch := 0
	for id, want := range apiBalances {
		if got := eng.Balances(engine.AccountID(id)); got != want {
			balanceMismatch++
			t.Errorf("merchant %s: replayed balances %+v, API %+v", id, got, want)
		}
	}

	// 5. The ledger.
	violations, err := ledger.Verify(ctx, pool)
	if err != nil {
		t.Errorf("ledger verify: %v", err)
	}
	for _, v := range violations {
		t.Errorf("ledger: %+v", v)
	}

	t.Logf("partition checker: faults injected %d:", len(h.faults))
	for _, f := range h.faults {
		t.Logf("  %-40s recovered %v after the heal (longest time without a 201: %v)", f.name,
			f.recoveredAfterHeal.Round(time.Millisecond), f.wait.Round(time.Millisecond))
	}
	t.Logf("partition checker: orders acknowledged %d, lost %d (of which to a fence %d), duplicated %d; overlapping terms %d; "+
		"cancels acknowledged %d (404 for %d closed and forgotten); unanswered %d; refused %v", len(h.acks), lost, lostToFence, duplicated, overlaps,
		h.cancels, len(h.cancel404), h.unknown, h.refused)
	t.Logf("partition checker: journal %d records (%d events replayed), %d of deposed epochs dropped, %d repeats of retried produces; "+
		"records by epoch %v; lease terms: %s", records, events, dropped, repeats, epochs, strings.Join(terms, "; "))
	t.Logf("partition checker: balances of %d merchants equal a replay from scratch: %v; ledger violations: %d",
		len(apiBalances), balanceMismatch == 0, len(violations))
	if len(h.acks) < 100 {
		t.Errorf("only %d orders acknowledged: the load did not run", len(h.acks))
	}
}
