package withdrawals_test

import (
	"context"
	"fmt"
	"testing"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/withdrawals/moneyouttest"
	"svc/payments/providers"
)

// BenchmarkWithdrawalCreate is idempotent withdrawal creation end to end: HTTP through the
// real gateway (auth, idempotency middleware), the withdrawal row, its processing job, the
// ledger hold (merchant available -> pending, both rows locked) and the stored idempotent
// response, in one transaction. Every request carries its own X-Idempotency-Key. The
// merchants=N variants spread the load over N merchants (the hold serialises one merchant's
// withdrawals on its two balance rows). Reports creates/s and latency percentiles.
//
//	go test ./gateway/withdrawals -run '^$' -bench WithdrawalCreate -benchtime 4000x
func BenchmarkWithdrawalCreate(b *testing.B) {
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
	body := body("0.01", providers.Base, evm)
	const clients = 32
	post := func(c int, i int64) gatewaytest.Response {
		key := fmt.Sprintf("bench-%d", i)
		if i < 0 {
			key = fmt.Sprintf("warm-%d-%d", c, (-i-1)%4)
		}
		return r.Srv.Do(b, "POST", "/v1/payments/withdrawals", keys[c%len(keys)], body, "X-Idempotency-Key", key)
	}
	gatewaytest.WarmUp(b, clients, post)
	gatewaytest.Load(b, clients, post)
	var n int
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from withdrawals`).Scan(&n)
	if n != b.N+4*clients {
		b.Fatalf("%d withdrawals for %d requests", n, b.N+4*clients)
	}
	r.Verify(b)
}
