package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"

	"svc/gateway/auth/authtest"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers/evm/evmtest"
	"svc/payments/providers/evm/signer"
	"svc/payments/providers/paystack/paystacktest"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// liveChain is svcd in live mode with the EVM custody on BASE over a real geth --dev node
// (a TestToken standing for USDT) and the Paystack contract server for NGN.
type liveChain struct {
	*liveSvcd
	node  *evmtest.Node
	token common.Address
	hot   common.Address
}

// custodyFiles writes a keystore and a custody configuration for BASE over node with token as
// USDT (2 confirmations) into dir, and answers their paths and the keystore's passphrase.
func custodyFiles(t *testing.T, dir string, node *evmtest.Node, token common.Address) (cfgPath, ks, pass string) {
	t.Helper()
	ks, pass = filepath.Join(dir, "custody.json"), "a long test passphrase"
	if err := signer.Create(ks, pass, signer.Light); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"chains": []map[string]any{{"chain": "BASE", "rpc_url": node.URL, "chain_id": evmtest.DevChainID,
		"confirmations": 2, "poll_every": "200ms", "tokens": []map[string]any{{"asset": "USDT", "contract": token.Hex(), "decimals": 6}}}}})
	cfgPath = filepath.Join(dir, "custody-config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, ks, pass
}

func startLiveChain(t *testing.T) *liveChain {
	t.Helper()
	node := evmtest.Start(t)
	token := node.DeployToken("Tether USD", "USDT", 6)
	cfgPath, ks, pass := custodyFiles(t, t.TempDir(), node, token)
	sv := startLiveSvcdWith(t, "sk_test_contract_0123456789", strings.Repeat("ab", 32),
		[]string{"--custody-config", cfgPath, "--custody-keystore", ks}, map[string]string{"SVC_CUSTODY_PASSPHRASE": pass})
	k, err := signer.Open(ks, pass)
	if err != nil {
		t.Fatal(err)
	}
	hot, _ := k.Address(context.Background(), signer.KeyHot)
	if strings.Contains(sv.out.String(), pass) {
		t.Fatal("svcd logged the keystore passphrase")
	}
	return &liveChain{liveSvcd: sv, node: node, token: token, hot: hot}
}

// pay sends value (micro-USDT) from the node's developer account to addr: a real token transfer.
func (lc *liveChain) pay(t *testing.T, addr string, value int64) {
	t.Helper()
	lc.node.Call(lc.token, "mint", lc.node.Dev, big.NewInt(value))
	if _, ok := lc.node.Call(lc.token, "transfer", common.HexToAddress(addr), big.NewInt(value)); !ok {
		t.Fatal("payment reverted")
	}
}

// TestLiveChainFundingWithdrawalAndRefusals runs the live crypto flows through svcd over a
// real node: the merchant's funding address credited after confirmations
// (merchant.balance.credited), a customer's funding request completed
// (customer.balance.credited), a withdrawal sent from the hot wallet, confirmed and SETTLED
// with its tx_hash (withdrawal.completed), and the bad inputs refused with nothing written.
func TestLiveChainFundingWithdrawalAndRefusals(t *testing.T) {
	lc := startLiveChain(t)
	c := client{t: t, base: lc.base}
	m := authtest.New(t, lc.pool)
	c.must(201, "POST", "/v1/webhooks/endpoints", m.LiveKey, map[string]any{"url": lc.hookURL + "/hooks"}, nil)

	// Merchant funding: only the configured chain is offered in live.
	var funding struct {
		Addresses []struct{ Chain, Asset, Address string } `json:"addresses"`
	}
	c.must(200, "GET", "/v1/payments/merchant/funding", m.LiveKey, nil, &funding)
	if len(funding.Addresses) != 1 || funding.Addresses[0].Chain != "BASE" || funding.Addresses[0].Asset != "USDT" {
		t.Fatalf("live funding addresses %+v", funding.Addresses)
	}
	lc.pay(t, funding.Addresses[0].Address, 100_000_000)
	balance := func() string {
		var b struct {
			Available string `json:"available"`
		}
		_, raw := c.do("GET", "/v1/payments/merchant/balance", m.LiveKey, nil)
		_ = json.Unmarshal(raw, &b)
		return b.Available
	}
	eventually(t, "the merchant's funding credited", func() bool { return balance() == "100.000000" })
	eventually(t, "merchant.balance.credited", func() bool { return lc.hooks.has("merchant.balance.credited") })

	// Customer funding.
	var cust struct {
		ID string `json:"id"`
	}
	c.must(201, "POST", "/v1/customers", m.LiveKey, map[string]string{"email": "ada@example.com", "first_name": "Ada", "last_name": "Obi"}, &cust)
	var fr struct {
		ID             string `json:"id"`
		DepositAddress string `json:"deposit_address"`
		Status         string `json:"status"`
	}
	c.must(201, "POST", "/v1/customers/"+cust.ID+"/crypto-funding", m.LiveKey, map[string]string{"chain": "BASE", "asset": "USDT", "amount": "12.5"}, &fr)
	lc.pay(t, fr.DepositAddress, 12_500_000)
	eventually(t, "customer.balance.credited", func() bool { return lc.hooks.has("customer.balance.credited") })
	var status string
	eventually(t, "the funding request completed", func() bool {
		_ = lc.pool.QueryRow(context.Background(), `select status from crypto_funding_requests where id = $1`, fr.ID).Scan(&status)
		return status == "COMPLETED"
	})

	// A withdrawal from the hot wallet (funded by the operator: gas and tokens).
	lc.node.Fund(lc.hot, evmtest.Ether(1))
	lc.node.Call(lc.token, "mint", lc.hot, big.NewInt(1_000_000_000))
	dest := "0x52908400098527886e0f7030069857d2e4169ee7"
	var w struct {
		ID     string  `json:"id"`
		Status string  `json:"status"`
		TxHash *string `json:"tx_hash"`
	}
	c.must(201, "POST", "/v1/payments/withdrawals", m.LiveKey, map[string]string{"amount_usd": "25.5", "token": "USDT", "chain": "BASE",
		"destination_address": dest}, &w)
	eventually(t, "the withdrawal SETTLED", func() bool {
		c.must(200, "GET", "/v1/payments/withdrawals/"+w.ID, m.LiveKey, nil, &w)
		return w.Status == "SETTLED"
	})
	if w.TxHash == nil || !strings.HasPrefix(*w.TxHash, "0x") {
		t.Fatalf("settled withdrawal without a tx hash: %+v", w)
	}
	if got := lc.node.TokenBalance(lc.token, common.HexToAddress(dest)); got.Int64() != 25_500_000 {
		t.Fatalf("destination holds %s", got)
	}
	eventually(t, "withdrawal.completed", func() bool { return lc.hooks.has("withdrawal.completed") })
	if balance() != "74.500000" {
		t.Fatalf("balance after the withdrawal %s", balance())
	}

	// Bad inputs: 400 field errors or 503 up front, nothing written.
	var before int
	_ = lc.pool.QueryRow(context.Background(), `select count(*) from withdrawals`).Scan(&before)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   any
		status int
		want   string
	}{
		{"wrong EIP-55 checksum", "POST", "/v1/payments/withdrawals", map[string]string{"amount_usd": "1", "token": "USDT", "chain": "BASE",
			"destination_address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"}, 400, "EIP-55"},
		{"more decimals than the token", "POST", "/v1/payments/withdrawals", map[string]string{"amount_usd": "1.1234567", "token": "USDT",
			"chain": "BASE", "destination_address": dest}, 400, "amount"},
		{"a chain without a custodian", "POST", "/v1/payments/withdrawals", map[string]string{"amount_usd": "1", "token": "USDT", "chain": "TRON",
			"destination_address": "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"}, 503, "PROVIDER_UNAVAILABLE"},
		{"customer funding on SOLANA", "POST", "/v1/customers/" + cust.ID + "/crypto-funding", map[string]string{"chain": "SOLANA", "asset": "USDT"},
			503, "PROVIDER_UNAVAILABLE"},
		{"offramp on TRON", "POST", "/v1/payments/offramps", map[string]any{"type": "PERMANENT", "customer": map[string]any{"customer_id": cust.ID},
			"chain": "TRON", "asset": "USDT", "settlement": map[string]any{"mode": "INTERNAL_BALANCE"}}, 503, "PROVIDER_UNAVAILABLE"},
		{"ONCHAIN onramp to APTOS", "POST", "/v1/payments/onramps", map[string]any{"type": "TEMPORARY", "amount": "20000",
			"settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT", "chain": "APTOS", "destination_address": "0x" + strings.Repeat("ab", 32)}},
			503, "PROVIDER_UNAVAILABLE"},
	} {
		code, raw := c.do(tc.method, tc.path, m.LiveKey, tc.body)
		if code != tc.status || !strings.Contains(string(raw), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, code, raw, tc.status, tc.want)
		}
	}
	var after, offramps, onramps int
	_ = lc.pool.QueryRow(context.Background(), `select count(*) from withdrawals`).Scan(&after)
	_ = lc.pool.QueryRow(context.Background(), `select count(*) from offramps where environment = 'live'`).Scan(&offramps)
	_ = lc.pool.QueryRow(context.Background(), `select count(*) from onramps where environment = 'live'`).Scan(&onramps)
	if after != before || offramps != 0 || onramps != 0 {
		t.Fatalf("refused requests wrote rows: withdrawals %d -> %d, offramps %d, onramps %d", before, after, offramps, onramps)
	}

	// The node goes down: /ready says so (degraded) and stays 200; svcd serves the rest.
	lc.node.Stop()
	eventually(t, "/ready shows the chain down", func() bool {
		resp, err := http.Get(lc.base + "/ready")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Checks map[string]string `json:"checks"`
			} `json:"data"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode == 200 && strings.HasPrefix(body.Data.Checks["custody"], "degraded: BASE node down")
	})
	c.must(200, "GET", "/v1/payments/withdrawals/"+w.ID, m.LiveKey, nil, &w)
}

// TestLiveChainOfframpPaidOutInNGN: an offramp's deposit address on BASE receives a real
// token transfer; after the confirmations the watcher's notification settles the offramp,
// whose NGN payout goes out through Paystack (the contract server) and completes on its
// transfer.success notification: payout.completed and offramp.completed reach the merchant.
func TestLiveChainOfframpPaidOutInNGN(t *testing.T) {
	lc := startLiveChain(t)
	c := client{t: t, base: lc.base}
	m := authtest.New(t, lc.pool)
	lc.ps.AddAccount("058", "0123456789", "ADA OBI")
	c.must(201, "POST", "/v1/webhooks/endpoints", m.LiveKey, map[string]any{"url": lc.hookURL + "/hooks"}, nil)
	var o struct {
		ID             string `json:"id"`
		DepositAddress string `json:"deposit_address"`
	}
	code, raw := c.do("GET", "/v1/payments/rates?from=USDT&to=NGN&side=sell", m.LiveKey, nil)
	var rates []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &rates); code != 200 || err != nil || len(rates) == 0 {
		t.Fatalf("live sell rate: %d %s", code, raw)
	}
	c.must(201, "POST", "/v1/payments/offramps", m.LiveKey, map[string]any{"type": "TEMPORARY",
		"customer": map[string]any{"email": "ada@example.com", "first_name": "Ada", "last_name": "Obi"}, "chain": "BASE", "asset": "USDT",
		"settlement": map[string]any{"mode": "NGN_PAYOUT", "rate_id": rates[0].ID, "destination_bank": map[string]any{"account_name": "Ada Obi",
			"account_number": "0123456789", "bank_code": "058"}}}, &o)
	if common.HexToAddress(o.DepositAddress).Hex() != o.DepositAddress {
		t.Fatalf("offramp deposit address %q is not an EIP-55 address", o.DepositAddress)
	}
	lc.pay(t, o.DepositAddress, 20_000_000)
	var payout string
	eventually(t, "Paystack holds the offramp's payout", func() bool {
		for _, tr := range lc.ps.Transfers() {
			payout = tr.Reference
			return true
		}
		return false
	})
	done, err := lc.ps.Finish(payout, "success", "")
	if err != nil {
		t.Fatal(err)
	}
	if status, err := paystacktest.Deliver(context.Background(), http.DefaultClient, lc.base+"/v1/partners/paystack/events", done); err != nil || status != 200 {
		t.Fatalf("transfer.success: %d %v", status, err)
	}
	eventually(t, "payout.completed and offramp.completed", func() bool {
		return lc.hooks.has("payout.completed") && lc.hooks.has("offramp.completed")
	})
	var deposits int
	_ = lc.pool.QueryRow(context.Background(), `select count(*) from deposits where offramp_id = $1`, o.ID).Scan(&deposits)
	if deposits != 1 || len(lc.ps.Transfers()) != 1 {
		t.Fatalf("%d deposits, %d payouts for one transfer", deposits, len(lc.ps.Transfers()))
	}
}

// TestLiveChainSIGKILLDuringSendsSendsOnce: svcd (a real process) is SIGKILLed as soon as the
// first of five live withdrawals has its transaction signed and stored, and started again;
// every withdrawal ends SETTLED and each destination holds exactly its amount: no send went
// out twice, none was lost (the stored transaction was broadcast again, or found mined).
func TestLiveChainSIGKILLDuringSendsSendsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds svcd")
	}
	node := evmtest.Start(t)
	token := node.DeployToken("Tether USD", "USDT", 6)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	buildBinaries(t, bin)
	cfgPath, ks, pass := custodyFiles(t, dir, node, token)
	pool, dbURL := pgtest.New(t)
	args := []string{"--database-url", dbURL, "--demo", "--access-log=false", "--log-format", "text", "--journal", "file",
		"--journal-dir", filepath.Join(dir, "journal"), "--snapshot-dir", filepath.Join(dir, "snapshots"), "--shutdown-timeout", "5s",
		"--custody-config", cfgPath, "--custody-keystore", ks}
	p := &svcdProc{t: t, bin: filepath.Join(bin, "svcd"), args: args, env: append(baseEnv(), "SVC_CUSTODY_PASSPHRASE="+pass)}
	t.Cleanup(func() {
		if p.cmd != nil {
			p.kill()
		}
		if t.Failed() {
			p.dumpLog()
		}
	})
	p.start()
	k, _ := signer.Open(ks, pass)
	hot, _ := k.Address(context.Background(), signer.KeyHot)
	node.Fund(hot, evmtest.Ether(1))
	node.Call(token, "mint", hot, big.NewInt(1_000_000_000))
	m := authtest.New(t, pool)
	ctx := context.Background()
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m.ID, Environment: "live", Reference: "test:fund", Kind: "test.fund",
			Description: "test funds", Postings: ledger.Move(ledger.System(ledger.External), ledger.Merchant(m.ID, ledger.Available), money.New(money.USDT, 500_000_000))})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	base, _ := p.current()
	c := client{t: t, base: base}
	var ids []string
	dests := map[common.Address]int64{}
	for i := 1; i <= 5; i++ {
		dest := common.BigToAddress(big.NewInt(int64(0x5000 + i)))
		var w struct {
			ID string `json:"id"`
		}
		c.must(201, "POST", "/v1/payments/withdrawals", m.LiveKey, map[string]string{"amount_usd": fmt.Sprintf("%d.25", i), "token": "USDT",
			"chain": "BASE", "destination_address": strings.ToLower(dest.Hex())}, &w)
		ids = append(ids, w.ID)
		dests[dest] = int64(i)*1_000_000 + 250_000
	}
	eventually(t, "a send signed and stored", func() bool {
		var n int
		_ = pool.QueryRow(ctx, `select count(*) from evm_sends where status <> 'WAITING'`).Scan(&n)
		return n > 0
	})
	p.kill()
	var signed int
	_ = pool.QueryRow(ctx, `select count(*) from evm_sends where status <> 'WAITING'`).Scan(&signed)
	t.Logf("killed with %d of 5 sends signed", signed)
	// A job that was running when the process died waits for river's rescuer
	// (RescueStuckJobsAfter, 1 h by default) before it runs again; do now what it does then,
	// so the test need not wait an hour. The custody's own loop needs no such help: it
	// broadcasts the stored transactions at start (the log shows them confirmed at once).
	if _, err := pool.Exec(ctx, `update river_job set state = 'retryable', scheduled_at = now() where state = 'running'`); err != nil {
		t.Fatal(err)
	}
	p.start()
	base, _ = p.current()
	c = client{t: t, base: base}
	for _, id := range ids {
		eventually(t, "withdrawal "+id+" SETTLED after the restart", func() bool {
			var w struct {
				Status string `json:"status"`
			}
			c.must(200, "GET", "/v1/payments/withdrawals/"+id, m.LiveKey, nil, &w)
			return w.Status == "SETTLED"
		})
	}
	for dest, want := range dests {
		if got := node.TokenBalance(token, dest); got.Int64() != want {
			t.Errorf("%s holds %s, want %d", dest.Hex(), got, want)
		}
	}
	nonce, err := node.Client.NonceAt(ctx, hot, nil)
	if err != nil || nonce != 5 {
		t.Fatalf("the hot wallet sent %d transactions (%v), want 5", nonce, err)
	}
}
