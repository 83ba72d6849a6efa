package trading

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

// Countdown limits: 0 turns it off; otherwise between a second and a day.
const (
	minCountdown = time.Second
	maxCountdown = 24 * time.Hour
	// ClockEvery is how often RunClock tells the engines the time: a countdown fires at
	// most this long after its deadline (plus the engine's latency).
	ClockEvery = 100 * time.Millisecond
)

type countdownRequest struct {
	Symbol      string `json:"symbol"`
	CountdownMS *int64 `json:"countdown_ms"`
}

type countdownBody struct {
	Symbol      string  `json:"symbol"`
	CountdownMS int64   `json:"countdown_ms"`
	CancelAt    *string `json:"cancel_at"` // null: off
}

// countdownCancelAll answers POST /v1/trading/orders/countdown-cancel-all: unless renewed
// within countdown_ms, every open order of the account on the symbol is cancelled
// (cancel_reason COUNTDOWN); 0 turns it off. The countdown is an engine command, so it
// is journaled and survives a restart of the gateway or the engine.
func (h *Handlers) countdownCancelAll(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	var req countdownRequest
	if err := api.Decode(ctx, &req); err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	if req.Symbol == "" {
		v.Add("symbol", "is required")
	} else if _, ok := ex.Pair(req.Symbol); !ok {
		v.Add("symbol", "must be one of "+symbolList(ex))
	}
	var d time.Duration
	switch {
	case req.CountdownMS == nil:
		v.Add("countdown_ms", "is required (0 turns the countdown off)")
	case *req.CountdownMS != 0 && (*req.CountdownMS < minCountdown.Milliseconds() || *req.CountdownMS > maxCountdown.Milliseconds()):
		v.Add("countdown_ms", "must be 0 (off) or between 1000 and 86400000")
	default:
		d = time.Duration(*req.CountdownMS) * time.Millisecond
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	now := h.now()
	cmd := engine.Command{Kind: engine.CmdCountdown, Account: engine.AccountID(p.MerchantID), Symbol: req.Symbol,
		Amount: int64(d), Time: now.UnixNano()}
	res, err := h.submit(ctx, ex, &cmd)
	if err != nil {
		api.Fail(ctx, engineError(err))
		return
	}
	if err := resultError(res.Code); err != nil {
		api.Fail(ctx, err)
		return
	}
	body := countdownBody{Symbol: req.Symbol, CountdownMS: d.Milliseconds()}
	if d > 0 {
		s := FormatTime(now.Add(d))
		body.CancelAt = &s
	}
	api.OK(ctx, body)
}

// RunClock tells ex's symbols the time (clock; nil means time.Now) every ClockEvery until
// ctx is done, so countdowns fire: the engine reads no clock. svcd runs it beside each
// engine; a second clock on the same engine is harmless (a tick fires only what is due).
func RunClock(ctx context.Context, ex Exchange, clock Clock) {
	if clock == nil {
		clock = time.Now
	}
	t := time.NewTicker(ClockEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			Tick(ex, clock())
		}
	}
}

// Tick tells every symbol of ex the time now.
func Tick(ex Exchange, now time.Time) {
	for _, p := range ex.Pairs() {
		// An engine that cannot take it now (busy, stopped) gets the next tick.
		_, _ = ex.Submit(&engine.Command{Kind: engine.CmdTick, Symbol: p.Symbol, Time: now.UnixNano()})
	}
}

// Tick runs one clock step on every exchange of h at h's clock (tests).
func (h *Handlers) Tick() {
	for _, ex := range h.exchanges {
		if ex != nil {
			Tick(ex, h.now())
		}
	}
}

// CancelOrders cancels orders ids of p's account (cancel-on-disconnect of a WebSocket
// session: reason DISCONNECT) and returns how many it cancelled once every cancel is
// durable. Orders already closed or unknown are skipped. It does not authenticate or
// spend rate limit: the session that placed them was authenticated. The first engine
// error (busy, unavailable) is returned after the rest were tried.
func (h *Handlers) CancelOrders(p api.Principal, ids []uuid.UUID) (int, error) {
	ex := h.exchanges[p.Environment]
	if ex == nil {
		return 0, api.Errorf(api.CodeEngineUnavailable, "the %s exchange is not running", p.Environment)
	}
	var (
		mu        sync.Mutex
		cancelled int
		first     error
		wg        sync.WaitGroup
		next      = make(chan uuid.UUID)
	)
	for w := 0; w < min(8, len(ids)); w++ { // a few at a time: their journal waits overlap
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				res, err := ex.Submit(&engine.Command{Kind: engine.CmdCancel, Account: engine.AccountID(p.MerchantID),
					OrderID: engine.OrderID(id), Reason: engine.ReasonDisconnect, Time: h.now().UnixNano()})
				mu.Lock()
				if err != nil && first == nil {
					first = engineError(err)
				} else if err == nil && res.Code == engine.OK {
					cancelled++
				}
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	return cancelled, first
}

// Lease arms (d > 0) or clears (d 0) the engine countdown owned by owner (a WebSocket
// session's id) on each of symbols (every pair when empty) for p's account: the stand-in
// for the session's cancel-on-disconnect should its gateway die. Like CancelOrders it
// does not authenticate; the session was.
func (h *Handlers) Lease(p api.Principal, owner uuid.UUID, symbols []string, d time.Duration) error {
	ex := h.exchanges[p.Environment]
	if ex == nil {
		return api.Errorf(api.CodeEngineUnavailable, "the %s exchange is not running", p.Environment)
	}
	if len(symbols) == 0 {
		for _, pc := range ex.Pairs() {
			symbols = append(symbols, pc.Symbol)
		}
	}
	now := h.now().UnixNano()
	for _, sym := range symbols {
		res, err := ex.Submit(&engine.Command{Kind: engine.CmdCountdown, Account: engine.AccountID(p.MerchantID), Symbol: sym,
			TransferID: engine.TransferID(owner), Amount: int64(d), Time: now})
		if err != nil {
			return engineError(err)
		}
		if err := resultError(res.Code); err != nil {
			return err
		}
	}
	return nil
}
