package transfers_test

import (
	"fmt"
	"testing"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/withdrawals/moneyouttest"
)

// BenchmarkTransferCreate is idempotent transfer creation end to end at 32 clients: HTTP
// through the real gateway (auth, the idempotency middleware with Idempotency-Key), the NGN
// price from the engine's book, the transfer row, the ledger hold of its USDT source
// (merchant available -> pending), transfer.created with its delivery jobs, the payout job
// and the stored response, in one transaction. The merchants=N variants spread the load
// over N merchants (the hold serialises one merchant's transfers on its two balance rows).
// Reports creates/s and latency percentiles; `svc ledger verify` (r.Verify) must stay clean.
//
//	go test ./gateway/transfers -run '^$' -bench TransferCreate -benchtime 1000x
func BenchmarkTransferCreate(b *testing.B) {
	for _, merchants := range []int{1, 16} {
		b.Run(fmt.Sprintf("merchants=%d", merchants), func(b *testing.B) { benchCreate(b, merchants) })
	}
}

func benchCreate(b *testing.B, merchants int) {
	r := moneyouttest.New(b, moneyouttest.Options{})
	keys := []string{r.M.SandboxKey}
	r.Fund(b, r.M.ID, "sandbox", "1000000")
	for len(keys) < merchants {
		m := authtest.New(b, r.Pool)
		r.Fund(b, m.ID, "sandbox", "1000000")
		keys = append(keys, m.SandboxKey)
	}
	body := func(ref string) map[string]any {
		return map[string]any{"currency": "NGN", "amount": "1000", "reference": ref, "destination": dest("BANK_ACCOUNT", domestic("0123456789"))}
	}
	const clients = 32
	post := func(c int, i int64) gatewaytest.Response {
		ref := fmt.Sprintf("bench-%d", i)
		if i < 0 {
			ref = fmt.Sprintf("warm-%d-%d", c, (-i-1)%4)
		}
		return r.Srv.Do(b, "POST", "/v1/payments/transfers", keys[c%len(keys)], body(ref), "Idempotency-Key", ref)
	}
	gatewaytest.WarmUp(b, clients, post)
	gatewaytest.Load(b, clients, post)
	r.Verify(b)
}
