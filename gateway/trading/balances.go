package trading

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

type balanceBody struct {
	Asset     string `json:"asset"`
	Available string `json:"available"`
	Locked    string `json:"locked"`
	Total     string `json:"total"`
}

// balances answers from the engine's memory, which is the truth for trading accounts.
func (h *Handlers) balances(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	var bs engine.Balances
	if r, ok := ex.(balancesReader); ok {
		c, cancel := engineCtx(ctx) // the request's deadline less the margin for the answer
		var err error
		bs, err = r.BalancesContext(c, engine.AccountID(p.MerchantID))
		cancel()
		if err != nil {
			api.Fail(ctx, engineError(err)) // a remote engine that did not answer: 503, never zeros
			return
		}
	} else {
		bs = ex.Balances(engine.AccountID(p.MerchantID))
	}
	out := make([]balanceBody, 0, engine.NumAssets)
	for _, a := range tradingAssets {
		b := bs[a]
		out = append(out, balanceBody{
			Asset:     a.String(),
			Available: engine.FormatAmount(a, b.Available),
			Locked:    engine.FormatAmount(a, b.Locked),
			Total:     engine.FormatAmount(a, b.Available+b.Locked),
		})
	}
	api.Array(ctx, out, nil)
}

// balancesReader is an Exchange whose balance read can fail (a remote engine,
// enginerpc.Client); an in-process engine's cannot.
type balancesReader interface {
	BalancesContext(ctx context.Context, acct engine.AccountID) (engine.Balances, error)
}

var tradingAssets = []engine.Asset{engine.NGN, engine.USDT, engine.USDC, engine.USD}

type fundRequest struct {
	Asset  string `json:"asset"`
	Amount string `json:"amount"`
}

// sandboxFund credits test funds to the caller's sandbox trading account.
func (h *Handlers) sandboxFund(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	if p.Environment != api.Sandbox {
		api.Fail(ctx, api.NewError(api.CodeSandboxOnly, "sandbox funding needs a test key (svc_sk_test_)"))
		return
	}
	var req fundRequest
	if err := api.Decode(ctx, &req); err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	asset, ok := engine.ParseAsset(req.Asset)
	if req.Asset == "" {
		v.Add("asset", "is required")
	} else if !ok {
		v.Add("asset", "must be one of NGN, USDT, USDC, USD")
	}
	var amount int64
	if ok {
		a, err := engine.ParseAmount(asset, req.Amount)
		if err != nil {
			v.Add("amount", decimalMessage(err, asset.DisplayDecimals()))
		}
		amount = a
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	transfer := uuid.Must(uuid.NewV7())
	cmd := engine.Command{Kind: engine.CmdCredit, Account: engine.AccountID(p.MerchantID), Asset: asset, Amount: amount,
		TransferID: engine.TransferID(transfer), Time: h.now().UnixNano()}
	res, err := h.submit(ctx, ex, &cmd)
	if err != nil {
		api.Fail(ctx, engineError(err))
		return
	}
	if err := resultError(res.Code); err != nil {
		api.Fail(ctx, err)
		return
	}
	b := ex.Balances(cmd.Account)[asset]
	api.Created(ctx, map[string]any{
		"transfer_id": transfer.String(),
		"asset":       asset.String(),
		"amount":      engine.FormatAmount(asset, amount),
		"balance": balanceBody{Asset: asset.String(), Available: engine.FormatAmount(asset, b.Available),
			Locked: engine.FormatAmount(asset, b.Locked), Total: engine.FormatAmount(asset, b.Available+b.Locked)},
		"created_at": FormatTime(time.Unix(0, cmd.Time)),
	})
}
