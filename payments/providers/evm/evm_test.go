package evm

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/providers/evm/evmtest"
	"svc/payments/providers/evm/signer"
	"svc/persistence/postgres/pgtest"
)

// rig is a node, a token for USDT, a database and a custody over them.
type rig struct {
	t      *testing.T
	node   *evmtest.Node
	pool   *pgxpool.Pool
	token  common.Address
	signer *signer.Keystore
	notes  *notes
}

type notes struct {
	mu sync.Mutex
	ds []Deposit
}

func (n *notes) Notify(_ context.Context, d Deposit) (uuid.UUID, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ds = append(n.ds, d)
	return uuid.New(), nil
}

func (n *notes) all() []Deposit {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Deposit(nil), n.ds...)
}

func newRig(t *testing.T) *rig {
	t.Helper()
	node := evmtest.Start(t)
	pool, _ := pgtest.New(t)
	ks, err := signer.FromSecret([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, node: node, pool: pool, token: node.DeployToken("Tether USD", "USDT", 6), signer: ks, notes: &notes{}}
}

func (r *rig) custody(url string, confirmations uint64, tweak ...func(*Config)) *Custody {
	r.t.Helper()
	cfg := Config{Chain: providers.Base, RPCURL: url, ChainID: evmtest.DevChainID, Confirmations: confirmations,
		Tokens: []Token{{Asset: money.USDT, Contract: r.token, Decimals: 6}}, Signer: r.signer, Notifier: r.notes,
		PollEvery: 200 * time.Millisecond, ReplaceAfter: time.Hour}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := New(r.pool, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(c.Close)
	return c
}

// pollUntil polls c until cond holds (or fails the test after d).
func pollUntil(t *testing.T, c *Custody, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if _, err := c.Poll(context.Background()); err != nil {
			t.Logf("poll: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// payer is an outside key that pays deposits with its own signed transactions.
type payer struct {
	key  *ecdsa.PrivateKey
	addr common.Address
}

// depositAddress polls c once (its cursor starts at the head) and answers a new USDT deposit
// address on BASE for a reference of owner ("merchant", "offramp").
func (r *rig) depositAddress(c *Custody, owner string) string {
	r.t.Helper()
	ctx := context.Background()
	if _, err := c.Poll(ctx); err != nil {
		r.t.Fatal(err)
	}
	a, err := c.DepositAddress(ctx, providers.AddressRequest{Reference: owner + ":" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT})
	if err != nil {
		r.t.Fatal(err)
	}
	return a.Address
}

func (r *rig) payer(usdt int64) payer {
	k, _ := crypto.GenerateKey()
	p := payer{key: k, addr: crypto.PubkeyToAddress(k.PublicKey)}
	r.node.Fund(p.addr, evmtest.Ether(1))
	r.node.Call(r.token, "mint", p.addr, big.NewInt(usdt))
	return p
}

// pay signs and broadcasts a token transfer from p (nonce given), without waiting.
func (r *rig) pay(p payer, nonce uint64, to common.Address, value int64, tip int64) common.Hash {
	r.t.Helper()
	data, _ := evmtest.TokenABI().Pack("transfer", to, big.NewInt(value))
	return r.sendRaw(p, nonce, &r.token, nil, data, tip)
}

func (r *rig) sendRaw(p payer, nonce uint64, to *common.Address, value *big.Int, data []byte, tip int64) common.Hash {
	r.t.Helper()
	chain := big.NewInt(evmtest.DevChainID)
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: chain, Nonce: nonce, GasTipCap: big.NewInt(tip), GasFeeCap: big.NewInt(50_000_000_000),
		Gas: 400_000, To: to, Value: value, Data: data})
	stx, err := types.SignTx(tx, types.LatestSignerForChainID(chain), p.key)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.node.Client.SendTransaction(ctx, stx); err != nil {
		r.t.Fatal(err)
	}
	return stx.Hash()
}

func (r *rig) status(txHash common.Hash) string {
	var s string
	err := r.pool.QueryRow(context.Background(), `select status from evm_transfers where lower(tx_hash) = lower($1)`, txHash.Hex()).Scan(&s)
	if err != nil {
		return ""
	}
	return s
}

func TestLiveChainDepositCreditedOnceAfterConfirmations(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.custody(r.node.URL, 3)
	ctx := context.Background()
	addr := r.depositAddress(c, "offramp")
	// Another node (or a restart) gives the same address.
	again, err := r.custody(r.node.URL, 3).DepositAddress(ctx, providers.AddressRequest{Reference: addrRef(t, r, addr), Chain: providers.Base, Asset: money.USDT})
	if err != nil || again.Address != addr {
		t.Fatalf("same reference, another address: %v %v", again, err)
	}
	if addr != common.HexToAddress(addr).Hex() {
		t.Fatalf("address %s is not EIP-55", addr)
	}
	p := r.payer(100_000_000)
	h := r.pay(p, 0, common.HexToAddress(addr), 25_500_000, 1)
	if !r.node.Wait(h) {
		t.Fatal("payment reverted")
	}
	pollUntil(t, c, 30*time.Second, "the transfer recorded", func() bool { return r.status(h) != "" })
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	rc, _ := r.node.Client.TransactionReceipt(ctx2, h)
	cancel()
	mined := rc.BlockNumber.Uint64()
	if r.node.Head() < mined+2 && len(r.notes.all()) != 0 {
		t.Fatal("credited before its confirmations")
	}
	pollUntil(t, c, 30*time.Second, "the deposit credited", func() bool { return len(r.notes.all()) == 1 })
	d := r.notes.all()[0]
	if d.Amount != money.New(money.USDT, 25_500_000) || d.TxHash != strings.ToLower(h.Hex()) || d.Address != addr ||
		d.EventID != "evm:BASE:"+strings.ToLower(h.Hex())+":0" || d.BlockNumber != mined {
		t.Fatalf("deposit %+v", d)
	}
	if r.node.Head() < mined+2 {
		t.Fatalf("credited at head %d, mined in %d with 3 confirmations", r.node.Head(), mined)
	}
	// More rounds, and a restarted custody over the same database: nothing twice.
	c2 := r.custody(r.node.URL, 3)
	for i := 0; i < 5; i++ {
		if _, err := c2.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if n := len(r.notes.all()); n != 1 {
		t.Fatalf("%d notifications, want 1", n)
	}
	if got := testutil.ToFloat64(c.cfg.Metrics.Credited.WithLabelValues("BASE")); got != 1 {
		t.Fatalf("credited metric %v", got)
	}
}

func addrRef(t *testing.T, r *rig, addr string) string {
	var ref string
	if err := r.pool.QueryRow(context.Background(), `select reference from evm_addresses where address = lower($1)`, addr).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// reorgOut rewinds the node below the block of h and spends the payer's nonce on another
// transaction, so the transfer cannot come back: a real reorganisation that removes it.
func (r *rig) reorgOut(p payer, h common.Hash) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	rc, err := r.node.Client.TransactionReceipt(ctx, h)
	cancel()
	if err != nil {
		r.t.Fatal(err)
	}
	r.node.SetHead(rc.BlockNumber.Uint64() - 1)
	// The same nonce, a much higher tip: replaces the transfer if the pool took it back. The
	// pool learns of the rewind on its own time: until then it says the nonce is too low.
	chain := big.NewInt(evmtest.DevChainID)
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: chain, Nonce: 0, GasTipCap: big.NewInt(2_000_000_000), GasFeeCap: big.NewInt(50_000_000_000),
		Gas: 21_000, To: &p.addr, Value: big.NewInt(0)})
	stx, err := types.SignTx(tx, types.LatestSignerForChainID(chain), p.key)
	if err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := r.node.Client.SendTransaction(ctx, stx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("replacing the reorganised transfer: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestLiveChainReorgBeforeConfirmationsCreditsNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.custody(r.node.URL, 6)
	ctx := context.Background()
	addr := r.depositAddress(c, "merchant")
	p := r.payer(10_000_000)
	h := r.pay(p, 0, common.HexToAddress(addr), 10_000_000, 1)
	r.node.Wait(h)
	pollUntil(t, c, 30*time.Second, "the transfer seen", func() bool { return r.status(h) == "SEEN" })
	head := r.node.Head()
	r.reorgOut(p, h)
	r.node.WaitHead(head + 8) // past the confirmations the transfer would have had
	pollUntil(t, c, 30*time.Second, "the transfer dropped", func() bool { return r.status(h) == "DROPPED" })
	for i := 0; i < 5; i++ {
		_, _ = c.Poll(ctx)
	}
	if n := len(r.notes.all()); n != 0 {
		t.Fatalf("a reorganised transfer was credited: %+v", r.notes.all())
	}
	if testutil.ToFloat64(c.cfg.Metrics.Reorgs.WithLabelValues("BASE")) < 1 {
		t.Fatal("no reorganisation counted")
	}
}

func TestLiveChainDeepReorgOfACreditRaisesAnAlert(t *testing.T) {
	t.Parallel()
	deepReorgOfACredit(t, false)
}

// The rewind's transaction aborted once (a serialization failure raised by a trigger, as a
// deadlock would) and rerun by postgres.InTx: the credit is still alerted once, the metric
// 1, not the aborted run's rows counted again.
func TestLiveChainDeepReorgAlertedOnceWhenTheRewindIsRerun(t *testing.T) {
	t.Parallel()
	deepReorgOfACredit(t, true)
}

func deepReorgOfACredit(t *testing.T, abortFirstRewind bool) {
	r := newRig(t)
	c := r.custody(r.node.URL, 1)
	ctx := context.Background()
	addr := r.depositAddress(c, "merchant")
	p := r.payer(10_000_000)
	h := r.pay(p, 0, common.HexToAddress(addr), 7_000_000, 1)
	r.node.Wait(h)
	pollUntil(t, c, 30*time.Second, "the deposit credited", func() bool { return len(r.notes.all()) == 1 })
	if abortFirstRewind {
		// The rewind's last write (its cursor moved back) aborts the first time, after its
		// transfers were marked and read; a sequence, not rolled back with the aborted
		// transaction, counts the writes.
		if _, err := r.pool.Exec(ctx, `create sequence rewind_writes;
			create function abort_first_rewind() returns trigger language plpgsql as $$ begin
				if nextval('rewind_writes') = 1 then
					raise exception 'aborted by the test' using errcode = 'serialization_failure';
				end if;
				return new;
			end $$;
			create trigger abort_first_rewind before update on evm_cursors for each row
				when (new.block_number < old.block_number) execute function abort_first_rewind()`); err != nil {
			t.Fatal(err)
		}
	}
	r.reorgOut(p, h)
	r.node.WaitHead(r.node.Head() + 3)
	pollUntil(t, c, 30*time.Second, "the alert", func() bool { return r.status(h) == "REORGED_AFTER_CREDIT" })
	alerts, err := Alerts(ctx, r.pool)
	if err != nil || len(alerts) != 1 || !strings.EqualFold(alerts[0].TxHash, h.Hex()) {
		t.Fatalf("alerts %+v %v", alerts, err)
	}
	if testutil.ToFloat64(c.cfg.Metrics.ReorgedCredits.WithLabelValues("BASE")) != 1 {
		t.Fatal("alert metric not raised")
	}
	if abortFirstRewind {
		var writes int64
		if err := r.pool.QueryRow(ctx, `select last_value from rewind_writes`).Scan(&writes); err != nil || writes < 2 {
			t.Fatalf("the rewind's cursor written %d times (%v): the test never aborted it", writes, err)
		}
	}
	if n := len(r.notes.all()); n != 1 {
		t.Fatalf("%d notifications, want 1", n)
	}
}

// hot funds the hot wallet with gas and usdt.
func (r *rig) hot(c *Custody, usdt int64) common.Address {
	hot, err := c.HotWallet(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	r.node.Fund(hot, evmtest.Ether(1))
	if usdt > 0 {
		r.node.Call(r.token, "mint", hot, big.NewInt(usdt))
	}
	return hot
}

// sendUntil asks Send again until the send is no longer SUBMITTED.
func sendUntil(t *testing.T, c *Custody, req providers.SendRequest) providers.SendResult {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := c.Send(context.Background(), req)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		if res.Status != providers.SendSubmitted {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("send %s still submitted", req.Reference)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func TestLiveChainSendConfirmedOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.custody(r.node.URL, 2)
	r.hot(c, 50_000_000)
	dest := common.HexToAddress("0x1111111111111111111111111111111111111111")
	req := providers.SendRequest{Reference: "withdrawal:" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT,
		To: strings.ToLower(dest.Hex()), Amount: money.New(money.USDT, 12_340_000)}
	first, err := c.Send(context.Background(), req)
	if err != nil || first.Status != providers.SendSubmitted || first.TxHash == "" {
		t.Fatalf("first send: %+v %v", first, err)
	}
	res := sendUntil(t, c, req)
	if res.Status != providers.SendConfirmed || res.TxHash != first.TxHash {
		t.Fatalf("send ended %+v (first %s)", res, first.TxHash)
	}
	// A restart asks again: the same answer, nothing sent twice.
	again, err := r.custody(r.node.URL, 2).Send(context.Background(), req)
	if err != nil || again != res {
		t.Fatalf("asked again: %+v %v", again, err)
	}
	if got := r.node.TokenBalance(r.token, dest); got.Int64() != 12_340_000 {
		t.Fatalf("destination holds %s", got)
	}
	// The same reference with another amount is refused.
	req.Amount = money.New(money.USDT, 1)
	if _, err := c.Send(context.Background(), req); err == nil {
		t.Fatal("the same reference sent another amount")
	}
}

func TestLiveChainRevertedSendFails(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.custody(r.node.URL, 1)
	r.hot(c, 50_000_000)
	dest := common.HexToAddress("0x2222222222222222222222222222222222222222")
	r.node.Call(r.token, "setBlocked", dest, true)
	res := sendUntil(t, c, providers.SendRequest{Reference: "withdrawal:" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT,
		To: dest.Hex(), Amount: money.New(money.USDT, 1_000_000)})
	if res.Status != providers.SendFailed || !strings.Contains(res.FailureReason, "reverted") || res.TxHash == "" {
		t.Fatalf("send to a blocked address: %+v", res)
	}
}

func TestLiveChainUnderfundedHotWalletWaits(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.custody(r.node.URL, 1)
	r.hot(c, 0) // gas, no tokens
	req := providers.SendRequest{Reference: "withdrawal:" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT,
		To: "0x3333333333333333333333333333333333333333", Amount: money.New(money.USDT, 5_000_000)}
	_, err := c.Send(context.Background(), req)
	var u *providers.UnavailableError
	if !errors.As(err, &u) || !strings.Contains(u.Reason, "needs") {
		t.Fatalf("underfunded send: %v", err)
	}
	var status string
	_ = r.pool.QueryRow(context.Background(), `select status from evm_sends where reference = $1`, req.Reference).Scan(&status)
	if status != "WAITING" {
		t.Fatalf("underfunded send is %q, want WAITING", status)
	}
	if testutil.ToFloat64(c.cfg.Metrics.Underfunded.WithLabelValues("BASE", "USDT")) != 1 {
		t.Fatal("underfunded alert metric not raised")
	}
	hot, _ := c.HotWallet(context.Background())
	r.node.Call(r.token, "mint", hot, big.NewInt(5_000_000))
	if res := sendUntil(t, c, req); res.Status != providers.SendConfirmed {
		t.Fatalf("funded send: %+v", res)
	}
}

// TestLiveChainCrashAfterSigningSendsOnce: the first process signs and stores the send but
// its broadcast never reaches the node (it dies right after the commit); the next process
// broadcasts the stored transaction: one transfer, the same hash.
func TestLiveChainCrashAfterSigningSendsOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	target, _ := url.Parse(r.node.URL)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if strings.Contains(string(body), "eth_sendRawTransaction") {
			http.Error(w, "the process died", http.StatusBadGateway)
			return
		}
		out, err := http.Post(target.String(), "application/json", strings.NewReader(string(body)))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer out.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, out.Body)
	}))
	defer proxy.Close()
	dying := r.custody(proxy.URL, 1)
	r.hot(dying, 9_000_000)
	dest := common.HexToAddress("0x4444444444444444444444444444444444444444")
	req := providers.SendRequest{Reference: "withdrawal:" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT,
		To: dest.Hex(), Amount: money.New(money.USDT, 9_000_000)}
	first, err := dying.Send(context.Background(), req)
	if err != nil || first.TxHash == "" {
		t.Fatalf("first send: %+v %v", first, err)
	}
	time.Sleep(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, _, err = r.node.Client.TransactionByHash(ctx, common.HexToHash(first.TxHash))
	cancel()
	if err == nil {
		t.Fatal("the node has a transaction the dying process never broadcast")
	}
	res := sendUntil(t, r.custody(r.node.URL, 1), req)
	if res.Status != providers.SendConfirmed || res.TxHash != first.TxHash {
		t.Fatalf("after the restart: %+v, first %s", res, first.TxHash)
	}
	if got := r.node.TokenBalance(r.token, dest); got.Int64() != 9_000_000 {
		t.Fatalf("destination holds %s", got)
	}
}

func TestLiveChainStuckSendReplacedAtTheSameNonce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.custody(r.node.URL, 1, func(cfg *Config) { cfg.MaxFeeCap = big.NewInt(1); cfg.MinTip = big.NewInt(1) })
	r.hot(c, 3_000_000)
	req := providers.SendRequest{Reference: "withdrawal:" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT,
		To: "0x5555555555555555555555555555555555555555", Amount: money.New(money.USDT, 3_000_000)}
	stuck, err := c.Send(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // blocks pass; a fee cap of 1 wei is below any base fee
	if res, _ := c.Send(context.Background(), req); res.Status != providers.SendSubmitted || res.TxHash != stuck.TxHash {
		t.Fatalf("stuck send: %+v", res)
	}
	// The operator raises the cap; the stuck version has waited long enough.
	c.cfg.MaxFeeCap, c.cfg.ReplaceAfter = nil, time.Millisecond
	res := sendUntil(t, c, req)
	if res.Status != providers.SendConfirmed || res.TxHash == stuck.TxHash {
		t.Fatalf("replaced send: %+v (stuck %s)", res, stuck.TxHash)
	}
	var versions, nonce int
	_ = r.pool.QueryRow(context.Background(), `select count(*), min(s.nonce) from evm_send_txs t join evm_sends s using (chain, reference)
		where reference = $1`, req.Reference).Scan(&versions, &nonce)
	if versions < 2 || nonce != 0 {
		t.Fatalf("%d versions at nonce %d", versions, nonce)
	}
}

func TestLiveChainNodeOutageResumesWithoutGap(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stops the node for 30 s")
	}
	r := newRig(t)
	c := r.custody(r.node.URL, 1)
	ctx := context.Background()
	if _, err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	var addrs []common.Address
	for i := 0; i < 3; i++ {
		a, _ := c.DepositAddress(ctx, providers.AddressRequest{Reference: "customer:" + uuid.NewString() + ":USDT", Chain: providers.Base, Asset: money.USDT})
		addrs = append(addrs, common.HexToAddress(a.Address))
	}
	p := r.payer(100_000_000)
	// Paid while the watcher is not looking (the process down), over several blocks.
	for i, a := range addrs[:2] {
		r.node.Wait(r.pay(p, uint64(i), a, int64(1_000_000*(i+1)), 1))
	}
	r.node.Stop()
	if _, err := c.Poll(ctx); err == nil || c.Health().Up {
		t.Fatalf("a stopped node polled fine: %+v", c.Health())
	}
	time.Sleep(30 * time.Second)
	r.node.Restart()
	r.node.Wait(r.pay(p, 2, addrs[2], 3_000_000, 1))
	pollUntil(t, c, 60*time.Second, "three deposits", func() bool { return len(r.notes.all()) >= 3 })
	for i := 0; i < 3; i++ {
		_, _ = c.Poll(ctx)
	}
	got := map[int64]int{}
	for _, d := range r.notes.all() {
		got[d.Amount.Minor]++
	}
	if len(r.notes.all()) != 3 || got[1_000_000] != 1 || got[2_000_000] != 1 || got[3_000_000] != 1 {
		t.Fatalf("deposits after the outage: %+v", r.notes.all())
	}
	if !c.Health().Up {
		t.Fatalf("health after the restart: %+v", c.Health())
	}
}

func TestLiveChainSweepTopsUpGasAndSweepsToTheHotWallet(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.custody(r.node.URL, 1, func(cfg *Config) { cfg.Tokens[0].SweepThreshold = money.New(money.USDT, 5_000_000) })
	hot := r.hot(c, 0)
	ctx := context.Background()
	addr := common.HexToAddress(r.depositAddress(c, "merchant"))
	p := r.payer(20_000_000)
	r.node.Wait(r.pay(p, 0, addr, 8_000_000, 1))
	pollUntil(t, c, 30*time.Second, "the deposit credited", func() bool { return len(r.notes.all()) == 1 })
	deadline := time.Now().Add(60 * time.Second)
	for r.node.TokenBalance(r.token, hot).Int64() != 8_000_000 {
		if err := c.Sweep(ctx); err != nil {
			t.Logf("sweep: %v", err)
		}
		_ = c.followOpen(ctx)
		if time.Now().After(deadline) {
			t.Fatalf("not swept: hot wallet holds %s, deposit address %s", r.node.TokenBalance(r.token, hot), r.node.TokenBalance(r.token, addr))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got := r.node.TokenBalance(r.token, addr); got.Sign() != 0 {
		t.Fatalf("deposit address still holds %s", got)
	}
	bals, err := c.BalancesOf(ctx, hot)
	if err != nil || bals.Tokens[money.USDT] != money.New(money.USDT, 8_000_000) {
		t.Fatalf("hot wallet balances %+v %v", bals, err)
	}
}
