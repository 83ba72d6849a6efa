package ws

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// Order entry over the stream. Each order op is the REST request it stands for, run
// through the gateway's own HTTP handler (OrderEntry.Handler: middleware, authentication
// with the connection's credentials, scopes, the merchant's rate limit, the trading
// handler): validation, idempotency by client_order_id, durability (answered only once
// the journal has the order) and the answer's status and code are REST's by
// construction, not by a second copy of the rules. The answer becomes
//
//	{"type":"result","op":...,"id":...,"status":201,"data":{...the REST data...}}
//	{"type":"error","op":...,"id":...,"status":4xx|5xx,"code":"...","message":"...","errors":[...]}
//
// The ops of one connection run one at a time, in the order they arrived, on an op worker
// (opWorkers: reused goroutines, one per connection with ops at that moment; the poller
// that reads the socket and the hub never wait for the journal); orders.batch runs its
// items at once. An order.place does not hold its worker until the journal has the order:
// the engine's completion stage answers it (placeDeferred): it queues the answer to the
// writers (writing it there itself was no faster at one connection and slower at 32,
// where one goroutine then made every answer's writev in turn), and the connection's next
// op starts. Every op is answered by its request's deadline, a stalled journal included
// (the place's timer answers REST's 503; see placeDeferred), so no op waits behind one
// that never ends.
// A connection may have maxPendingOps ops waiting; more are refused with RATE_LIMITED.

// OrderEntry is what the order ops need from the gateway.
type OrderEntry struct {
	// Handler is the gateway's HTTP handler (gateway.Server.Handler).
	Handler fasthttp.RequestHandler
	// CancelOrders cancels the account's orders ids (cancel-on-disconnect; reason
	// DISCONNECT) and returns once the cancels are durable. It does not authenticate:
	// the session was, and its key may be gone by the time it closes.
	CancelOrders func(p api.Principal, ids []uuid.UUID) (int, error)
	// CancelWithin bounds how long a closed session's cleanup waits for CancelOrders
	// (0: api.DefaultRequestTimeout; svcd passes its --request-timeout, so the cancels get
	// what a REST cancel would). Cancels still unconfirmed then are not reported done:
	// the cleanup logs their ids at Warn and returns, and they go on in the background
	// (cancelOnDisconnect in session.go).
	CancelWithin time.Duration
	// Lease arms (d > 0) or clears (d 0) the engine countdown owned by a session on
	// symbols (all when empty): should this gateway die, the engine cancels the account's
	// orders there once the session stops renewing it. Optional.
	Lease func(p api.Principal, owner uuid.UUID, symbols []string, d time.Duration) error
}

// SetOrderEntry enables the order ops (svcd sets it once the gateway is built; before,
// and on processes that do not serve the trading routes, they answer 503).
func (s *Server) SetOrderEntry(oe OrderEntry) { s.entry.Store(&oe) }

const (
	maxPendingOps = 64
	maxBatch      = 20
)

// orderOps maps each order op to the REST route it stands for.
var orderOps = map[string]bool{"order.place": true, "order.cancel": true, "order.amend": true, "orders.cancel_all": true, "orders.batch": true}

// opJob is one op waiting for the connection's op goroutine.
type opJob struct {
	op     string
	id     json.RawMessage
	params json.RawMessage
}

// session is the order-entry state of a connection, under its own mutex (the op
// goroutine and the reader both use it).
type session struct {
	mu      sync.Mutex
	queue   []opJob
	running bool
	cred    [2]string // the header that authenticated the connection: X-Api-Key or Authorization
	// cancel-on-disconnect
	cod     bool
	codSyms map[string]bool // nil: every symbol
	codIdle int64           // ns without a message that close the connection (0: the idle timeout)
	placed  map[uuid.UUID]string
	lease   *lease // the engine's stand-in while cancel-on-disconnect is on (session.go)
	// After the connection closed: a place answered later (it was waiting for the journal)
	// is cancelled at once if cancel-on-disconnect covered it (track).
	gone     bool
	goneCod  bool
	goneSyms map[string]bool
}

// maxTracked bounds the orders a session remembers for cancel-on-disconnect; past it the
// oldest half is forgotten (orders that old are mostly closed).
const maxTracked = 100_000

// orderOp queues an order op of c (under c.rmu).
func (s *Server) orderOp(c *conn, r request) {
	se := &c.sess
	se.mu.Lock()
	if len(se.queue) >= maxPendingOps {
		se.mu.Unlock()
		c.sendBytes(opError(r.Op, r.ID, 429, api.CodeRateLimited, "at most "+strconv.Itoa(maxPendingOps)+" ops may wait on one connection; wait for answers or open another connection", nil))
		return
	}
	se.queue = append(se.queue, opJob{op: r.Op, id: r.ID, params: r.Params})
	start := !se.running
	se.running = true
	se.mu.Unlock()
	if start {
		s.ops.run(s, c)
	}
}

// runOps runs a connection's queued ops in order on an op worker and returns when none
// is left, or when a deferred answer (placeDeferred) will go on with them.
func (s *Server) runOps(c *conn) {
	se := &c.sess
	for {
		se.mu.Lock()
		if len(se.queue) == 0 {
			se.running = false
			se.mu.Unlock()
			return
		}
		j := se.queue[0]
		se.queue[0] = opJob{}
		se.queue = se.queue[1:]
		se.mu.Unlock()
		if j.op == "order.place" && s.placeDeferred(c, j) {
			return // the engine's completion stage answers it and goes on with the queue
		}
		c.sendBytes(s.runOp(c, j))
	}
}

// runOp runs one op and returns its answer.
func (s *Server) runOp(c *conn, j opJob) []byte {
	if j.op == "orders.batch" {
		return s.runBatch(c, j)
	}
	st, body, hdr := s.rest(c, j.op, j.params, nil)
	return answer(j.op, j.id, st, body, hdr)
}

// placeDeferred runs an order.place whose answer the engine's completion stage gives
// (api.Defer): the op goroutine does not wait for the journal, and the answer is
// queued to the connection from the group commit's completion. It reports false when the
// handler answered at once (refused before the engine, or an engine that cannot complete
// asynchronously): the answer was then sent here. The connection's later ops wait until
// this one is answered (resume), as when they ran one after another on the op goroutine.
//
// The answer comes by the op's deadline even when the journal stalls: the handler then
// answers 503 SERVICE_UNAVAILABLE with retry_after (the same answer as REST's), and the
// connection's next op starts. An order the engine accepts after that comes back as a
// Late answer: it is not sent (the op has its answer, and a retry with the same
// client_order_id replays it) but tracked, so cancel-on-disconnect covers it.
func (s *Server) placeDeferred(c *conn, j opJob) bool {
	id := j.id
	deferred := func(a *api.Answer) {
		switch {
		case a.Late:
			if a.Data != nil {
				c.track(a.Data, `{"id":"`)
			}
			return // answered already: the queue went on then
		case a.Data != nil:
			c.track(a.Data, `{"id":"`)
			c.sendBytes(result(j.op, id, a.Status, a.Replayed, a.Data))
		default:
			if a.Status < 300 {
				c.track(a.Body, `"data":{"id":"`)
			}
			c.sendBytes(answer(j.op, id, a.Status, a.Body, opHeaders{retryAfter: a.RetryAfter, replayed: a.Replayed}))
		}
		s.resume(c)
	}
	st, body, hdr := s.rest(c, j.op, j.params, deferred)
	if st == 0 {
		return true
	}
	c.sendBytes(answer(j.op, j.id, st, body, hdr))
	return false
}

// resume goes on with a connection's queued ops after a deferred answer.
func (s *Server) resume(c *conn) {
	se := &c.sess
	se.mu.Lock()
	if len(se.queue) == 0 {
		se.running = false
		se.mu.Unlock()
		return
	}
	se.mu.Unlock()
	s.ops.run(s, c)
}

// opWorkers are the goroutines that run connections' ops, reused as fasthttp reuses the
// goroutines of its connections: an op then neither starts a goroutine nor grows a fresh
// stack through the gateway's handler chain (both showed in profiles of order.place).
// A worker serves one connection's queue at a time and may block (the handler may wait
// for PostgreSQL), so there are as many as connections with ops at once; one idle for
// opWorkerIdle exits. They also run the blocking part of a deferred answer (do: a
// rejected or replayed place answered through the handler's code), at most one per
// connection's deferred place, instead of a goroutine started per answer.
type opWorkers struct {
	mu   sync.Mutex
	idle []*opWorker
}

type opWorker struct {
	ch    chan opTask // buffered: whoever takes an idle worker never waits for it
	timer *time.Timer
}

// opTask is a worker's next work: a connection's queued ops, or a function.
type opTask struct {
	c  *conn
	fn func()
}

const opWorkerIdle = 10 * time.Second

// run runs c's ops on an idle worker, or a new one.
func (p *opWorkers) run(s *Server, c *conn) { p.start(s, opTask{c: c}) }

// do runs fn on an idle worker, or a new one (an api.Runner).
func (p *opWorkers) do(s *Server, fn func()) { p.start(s, opTask{fn: fn}) }

func (p *opWorkers) start(s *Server, t opTask) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.ch <- t
		return
	}
	p.mu.Unlock()
	s.wg.Add(1)
	go p.work(s, &opWorker{ch: make(chan opTask, 1)}, t)
}

func (p *opWorkers) work(s *Server, w *opWorker, t opTask) {
	defer s.wg.Done()
	for {
		if t.fn != nil {
			t.fn()
		} else {
			s.runOps(t.c)
		}
		t = opTask{} // hold nothing while idle
		p.mu.Lock()
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		if w.timer == nil {
			w.timer = time.NewTimer(opWorkerIdle)
		} else {
			w.timer.Reset(opWorkerIdle)
		}
		select {
		case t = <-w.ch:
			w.timer.Stop()
			continue
		case <-w.timer.C:
		case <-s.stop:
			w.timer.Stop()
		}
		if p.leave(w) {
			return
		}
		t = <-w.ch // taken meanwhile: its work is on the way
	}
}

// leave takes w out of the idle workers; false if someone took it first.
func (p *opWorkers) leave(w *opWorker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.idle {
		if x == w {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return true
		}
	}
	return false
}

type batchParams struct {
	Orders []struct {
		Op     string          `json:"op"`
		Params json.RawMessage `json:"params"`
	} `json:"orders"`
}

// runBatch runs up to maxBatch places, amends and cancels at once and answers them in one
// message, each item with its own status and data or error, in the order sent.
func (s *Server) runBatch(c *conn, j opJob) []byte {
	var bp batchParams
	if err := json.Unmarshal(j.params, &bp); err != nil {
		return opError(j.op, j.id, 400, api.CodeInvalidJSON, "params: "+err.Error(), nil)
	}
	if len(bp.Orders) == 0 || len(bp.Orders) > maxBatch {
		return opError(j.op, j.id, 400, api.CodeValidation, "request validation failed",
			[]api.FieldError{{Field: "orders", Message: "must hold 1 to " + strconv.Itoa(maxBatch) + " items"}})
	}
	items := make([][]byte, len(bp.Orders))
	var wg sync.WaitGroup
	for i, it := range bp.Orders {
		switch it.Op {
		case "order.place", "order.cancel", "order.amend":
		default:
			items[i] = opError(it.Op, nil, 400, api.CodeValidation, "a batch holds order.place, order.amend and order.cancel items", nil)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body, hdr := s.rest(c, it.Op, it.Params, nil)
			items[i] = answer(it.Op, nil, st, body, hdr)
		}()
	}
	wg.Wait()
	b := []byte(`{"type":"result","op":"orders.batch"`)
	if len(j.id) > 0 {
		b = append(append(b, `,"id":`...), j.id...)
	}
	b = append(b, `,"status":200,"data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, "]}"...)
}

// opParams are the params of the order ops other than place (whose params are the REST
// body as they are).
type opParams struct {
	OrderID       string  `json:"order_id"`
	ClientOrderID string  `json:"client_order_id"`
	Symbol        string  `json:"symbol"`
	Quantity      *string `json:"quantity,omitempty"`
	Price         *string `json:"price,omitempty"`
}

// rest runs op as its REST request on the gateway's handler and returns the answer's
// status, body and the headers an op answer carries (Retry-After, Idempotent-Replayed).
// With deferred, a placement may be answered later through it (api.Defer): then the
// status is 0 and nothing else is returned.
func (s *Server) rest(c *conn, op string, params json.RawMessage, deferred api.Deferred) (int, []byte, opHeaders) {
	oe := s.entry.Load()
	if oe == nil || oe.Handler == nil {
		return 503, envelopeError(api.CodeEngineUnavailable, "order entry is not served on this connection's server"), opHeaders{}
	}
	var method, path string
	var body []byte
	switch op {
	case "order.place":
		method, path, body = "POST", "/v1/trading/orders", params
	case "orders.cancel_all":
		var p opParams
		if err := json.Unmarshal(params, &p); err != nil {
			return 400, envelopeError(api.CodeInvalidJSON, "params: "+err.Error()), opHeaders{}
		}
		method, path = "DELETE", "/v1/trading/orders?symbol="+url.QueryEscape(p.Symbol)
	case "order.cancel", "order.amend":
		var p opParams
		if err := json.Unmarshal(params, &p); err != nil {
			return 400, envelopeError(api.CodeInvalidJSON, "params: "+err.Error()), opHeaders{}
		}
		switch {
		case p.OrderID != "" && p.ClientOrderID != "":
			return 400, envelopeFields("order_id", "send order_id or client_order_id, not both"), opHeaders{}
		case p.OrderID != "":
			path = "/v1/trading/orders/" + url.PathEscape(p.OrderID)
		case p.ClientOrderID != "":
			path = "/v1/trading/orders/by-client-id/" + url.PathEscape(p.ClientOrderID)
		default:
			return 400, envelopeFields("order_id", "order_id or client_order_id is required"), opHeaders{}
		}
		method = "DELETE"
		if op == "order.amend" {
			method = "PATCH"
			body, _ = json.Marshal(struct {
				Quantity *string `json:"quantity,omitempty"`
				Price    *string `json:"price,omitempty"`
			}{p.Quantity, p.Price})
		}
	}
	rc := opCtxs.Get().(*opCtx)
	defer rc.release()
	req := &rc.req
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	c.sess.mu.Lock()
	cred := c.sess.cred
	c.sess.mu.Unlock()
	if cred[0] != "" {
		req.Header.Set(cred[0], cred[1])
	}
	for _, h := range c.info.headers {
		req.Header.Set(h[0], h[1])
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	rc.rc.Init(req, c.info.remote, nil)
	if deferred != nil {
		api.Defer(&rc.rc, deferred, s.runner)
	}
	oe.Handler(&rc.rc)
	if deferred != nil && api.Taken(&rc.rc) {
		return 0, nil, opHeaders{}
	}
	resp := &rc.rc.Response
	st := resp.StatusCode()
	out := append([]byte(nil), resp.Body()...)
	hdr := opHeaders{retryAfter: string(resp.Header.Peek("Retry-After")), replayed: len(resp.Header.Peek("Idempotent-Replayed")) > 0}
	if op == "order.place" && st < 300 {
		c.track(out, `"data":{"id":"`)
	}
	return st, out, hdr
}

type opHeaders struct {
	retryAfter string
	replayed   bool
}

// opCtx is a reusable synthetic request (fasthttp's RequestCtx is large).
type opCtx struct {
	req fasthttp.Request
	rc  fasthttp.RequestCtx
}

var opCtxs = sync.Pool{New: func() any { return new(opCtx) }}

func (o *opCtx) release() {
	o.req.Reset()
	o.rc.ResetUserValues()
	o.rc.Request.Reset()
	o.rc.Response.Reset()
	opCtxs.Put(o)
}

// envelope is the REST answer's envelope.
type envelope struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Message string          `json:"message"`
	Detail  string          `json:"detail"`
	Errors  json.RawMessage `json:"errors"`
}

// answer turns a REST answer into the op's result or error message.
func answer(op string, id json.RawMessage, status int, body []byte, hdr opHeaders) []byte {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return opError(op, id, 500, api.CodeInternal, "internal error", nil)
	}
	if !env.Success {
		b := opErrorHead(op, id, status, env.Message, env.Detail)
		if len(env.Errors) > 0 && !bytes.Equal(env.Errors, []byte("null")) {
			b = append(append(b, `,"errors":`...), env.Errors...)
		}
		if hdr.retryAfter != "" {
			if n, err := strconv.Atoi(hdr.retryAfter); err == nil {
				b = append(append(b, `,"retry_after":`...), strconv.Itoa(n)...)
			}
		}
		return append(b, '}')
	}
	b := resultHead(op, id, status, hdr.replayed)
	if len(env.Data) > 0 {
		b = append(append(b, `,"data":`...), env.Data...)
	}
	if env.Message != "" {
		b = append(append(b, `,"message":`...), api.AppendString(nil, env.Message)...)
	}
	return append(b, '}')
}

// result is the op's result message with data (already JSON).
func result(op string, id json.RawMessage, status int, replayed bool, data []byte) []byte {
	b := resultHead(op, id, status, replayed)
	b = append(append(b, `,"data":`...), data...)
	return append(b, '}')
}

func resultHead(op string, id json.RawMessage, status int, replayed bool) []byte {
	b := make([]byte, 0, 96+len(id))
	b = append(append(b, `{"type":"result","op":`...), api.AppendString(nil, op)...)
	if len(id) > 0 {
		b = append(append(b, `,"id":`...), id...)
	}
	b = append(append(b, `,"status":`...), strconv.Itoa(status)...)
	if replayed {
		b = append(b, `,"replayed":true`...)
	}
	return b
}

func opErrorHead(op string, id json.RawMessage, status int, code, msg string) []byte {
	b := append([]byte(`{"type":"error","op":`), api.AppendString(nil, op)...)
	if len(id) > 0 {
		b = append(append(b, `,"id":`...), id...)
	}
	b = append(append(b, `,"status":`...), strconv.Itoa(status)...)
	b = append(append(b, `,"code":`...), api.AppendString(nil, code)...)
	return append(append(b, `,"message":`...), api.AppendString(nil, msg)...)
}

func opError(op string, id json.RawMessage, status int, code, msg string, fields []api.FieldError) []byte {
	b := opErrorHead(op, id, status, code, msg)
	if len(fields) > 0 {
		f, _ := json.Marshal(fields)
		b = append(append(b, `,"errors":`...), f...)
	}
	return append(b, '}')
}

func envelopeError(code, detail string) []byte {
	b, _ := json.Marshal(map[string]any{"success": false, "message": code, "detail": detail})
	return b
}

func envelopeFields(field, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"success": false, "message": api.CodeValidation, "detail": "request validation failed",
		"errors": []api.FieldError{{Field: field, Message: msg}}})
	return b
}

// track remembers an order the session placed (its REST answer's body, or the order's
// own JSON, in which key opens the order's id), for cancel-on-disconnect. The body is the
// gateway's own encoding of an order (its "id" and "symbol" come first, plain strings),
// so they are cut out rather than decoded.
func (c *conn) track(body []byte, key string) {
	id, ok := uuid.Parse(string(field(body, key)))
	sym := string(field(body, `"symbol":"`))
	if ok != nil || sym == "" {
		return
	}
	se := &c.sess
	se.mu.Lock()
	if se.gone {
		late := se.goneCod && (se.goneSyms == nil || se.goneSyms[sym])
		se.mu.Unlock()
		if late {
			c.srv.cancelLate(c, id)
		}
		return
	}
	if se.placed == nil {
		se.placed = map[uuid.UUID]string{}
	}
	if len(se.placed) >= maxTracked {
		n := 0
		for id := range se.placed { // map order: an arbitrary half
			delete(se.placed, id)
			if n++; n >= maxTracked/2 {
				break
			}
		}
	}
	se.placed[id] = sym
	se.mu.Unlock()
}

// field returns the string value after the first key (which ends with its opening quote).
func field(body []byte, key string) []byte {
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return nil
	}
	v := body[i+len(key):]
	if j := bytes.IndexByte(v, '"'); j >= 0 {
		return v[:j]
	}
	return nil
}
