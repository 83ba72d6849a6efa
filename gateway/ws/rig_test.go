package ws_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
	"svc/gateway/market"
	"svc/gateway/ws"
)

// tap is the engine's journal in these tests: it hands every batch to the hub the way
// svcd's eventlog.OnDurable does.
type tap struct {
	mu  sync.Mutex
	n   uint64
	pub func([]engine.Event)
}

func (j *tap) Append(batch []engine.Event) (uint64, error) {
	j.mu.Lock()
	j.n += uint64(len(batch))
	n, pub := j.n, j.pub
	j.mu.Unlock()
	if pub != nil {
		pub(batch)
	}
	return n, nil
}

// fakeAuth maps API keys to principals; revoke removes one.
type fakeAuth struct {
	mu sync.Mutex
	m  map[string]api.Principal
}

func (f *fakeAuth) revoke(key string) {
	f.mu.Lock()
	delete(f.m, key)
	f.mu.Unlock()
}

func (f *fakeAuth) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	f.mu.Lock()
	p, ok := f.m[string(ctx.Request.Header.Peek("X-Api-Key"))]
	f.mu.Unlock()
	if !ok {
		return p, api.NewError(api.CodeUnauthorized, "invalid API key")
	}
	return p, nil
}

type rig struct {
	eng    *engine.Engine
	hub    *ws.Hub
	server *ws.Server
	addr   string
	keys   []string // one per merchant
	accts  []engine.AccountID
	auth   *fakeAuth
}

func newRig(t *testing.T, merchants int, cfg ws.Config) *rig {
	return newRigClock(t, merchants, cfg, nil)
}

// newRigClock is newRig with the hub reading time from now (nil: time.Now).
func newRigClock(t *testing.T, merchants int, cfg ws.Config, now func() time.Time) *rig {
	t.Helper()
	j := &tap{}
	eng, err := engine.New(engine.Config{Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rig{eng: eng, auth: &fakeAuth{m: map[string]api.Principal{}}}
	for i := 0; i < merchants; i++ {
		id := uuid.New()
		key := fmt.Sprintf("svc_sk_test_key%d", i)
		r.auth.m[key] = api.Principal{MerchantID: id, Environment: api.Sandbox, Method: api.ByAPIKey}
		r.keys = append(r.keys, key)
		r.accts = append(r.accts, engine.AccountID(id))
		for k, a := range []engine.Asset{engine.NGN, engine.USDT, engine.USDC} {
			var tid engine.TransferID
			tid[0], tid[1], tid[2] = byte(i), byte(i>>8), byte(k+1)
			if res, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: r.accts[i], Asset: a, Amount: 1 << 52, TransferID: tid}); err != nil || res.Code != engine.OK {
				t.Fatalf("credit: %v %v", res.Code, err)
			}
		}
	}
	hub := ws.NewHub(ws.HubConfig{Env: api.Sandbox, Exchange: eng, FlushEvery: 5 * time.Millisecond, TickerEvery: 100 * time.Millisecond, Now: now})
	j.mu.Lock()
	j.pub = hub.Publish
	j.mu.Unlock()
	if err := hub.Seed(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hubDone := make(chan struct{})
	go func() { defer close(hubDone); hub.Run(ctx) }()
	r.hub = hub

	cfg.Hubs = map[api.Environment]*ws.Hub{api.Sandbox: hub}
	cfg.Auth = r.auth
	r.server = ws.NewServer(cfg)
	if err := r.server.Start(); err != nil {
		t.Fatal(err)
	}
	rt := router.New()
	protect := func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			p, err := r.auth.Authenticate(ctx)
			if err != nil {
				api.Fail(ctx, err)
				return
			}
			api.SetPrincipal(ctx, p)
			next(ctx)
		}
	}
	r.server.Register(rt, protect)
	market.New(map[api.Environment]market.Source{api.Sandbox: hub}, nil, nil).Register(rt, protect)
	srv := &fasthttp.Server{Handler: rt.Handler}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	r.addr = ln.Addr().String()
	t.Cleanup(func() {
		r.server.Close()
		cancel()
		<-hubDone
		_ = srv.Shutdown()
		eng.Stop()
	})
	return r
}

func (r *rig) url() string { return "ws://" + r.addr + "/v1/ws?environment=sandbox" }

func (r *rig) dial(t *testing.T, key string) *ws.Client {
	t.Helper()
	c, err := ws.Dial(r.url(), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get calls a REST route and decodes data.
func (r *rig) get(t *testing.T, key, path string, data any) int {
	t.Helper()
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + r.addr + path)
	req.Header.Set("X-Api-Key", key)
	if err := fasthttp.DoTimeout(req, resp, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(resp.Body(), &env); err != nil {
		t.Fatalf("%s: %s", path, resp.Body())
	}
	if data != nil && resp.StatusCode() == 200 {
		if err := json.Unmarshal(env.Data, data); err != nil {
			t.Fatalf("%s: %v: %s", path, err, env.Data)
		}
	}
	return resp.StatusCode()
}

type restBook struct {
	Symbol    string      `json:"symbol"`
	Bids      [][2]string `json:"bids"`
	Asks      [][2]string `json:"asks"`
	Timestamp int64       `json:"timestamp"`
	Sequence  uint64      `json:"sequence"`
}

// next reads messages until one satisfies ok (or fails the test after a while).
func next(t *testing.T, c *ws.Client, ok func(*ws.Message) bool) *ws.Message {
	t.Helper()
	_ = c.Conn().SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.Conn().SetReadDeadline(time.Time{})
	for {
		m, err := c.Next()
		if err != nil {
			t.Fatalf("waiting for a message: %v", err)
		}
		if ok(m) {
			return m
		}
	}
}

func ofType(typ string) func(*ws.Message) bool {
	return func(m *ws.Message) bool { return m.Type == typ }
}
