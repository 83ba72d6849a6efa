package main

import (
	"bytes"
	"context"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"

	"svc/engine"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/providers/evm"
	"svc/payments/providers/evm/evmtest"
	"svc/payments/providers/evm/signer"
	"svc/persistence/journal/journaltest"
	"svc/persistence/postgres/pgtest"
)

// A custody loop blocked where no context reaches (crediting a deposit in the engine, its
// journal stalled: Submit takes no context) does not hold svcd's shutdown past its
// deadline: stop returns by then and logs the chain it abandoned. Before, it waited for the
// loops without a deadline. The chain is real (geth --dev, a token contract, a deposit
// paid to a custody address); the notifier credits the deposit in a real engine, as
// svcd's does through the inbound path and the deposits.
func TestCustodyStopIsBoundedByTheShutdownDeadline(t *testing.T) {
	pool, _ := pgtest.New(t)
	eng, sj := journaltest.StartEngine(t, nil)
	t.Cleanup(sj.Release) // before the engine's stop: it stops only once its journal answers
	node := evmtest.Start(t)
	token := node.DeployToken("Tether USD", "USDT", 6)
	ks, err := signer.FromSecret([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	notified := make(chan struct{}, 1)
	credit := evm.NotifierFunc(func(_ context.Context, d evm.Deposit) (uuid.UUID, error) {
		select {
		case notified <- struct{}{}:
		default:
		}
		_, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: engine.AccountID(uuid.New()), Asset: engine.USDT, Amount: d.Amount.Minor,
			Time: time.Now().UnixNano()})
		return uuid.New(), err
	})
	cu, err := evm.New(pool, evm.Config{Chain: providers.Base, RPCURL: node.URL, ChainID: evmtest.DevChainID, Confirmations: 1,
		Tokens: []evm.Token{{Asset: money.USDT, Contract: token, Decimals: 6}}, Signer: ks, Notifier: credit,
		PollEvery: 100 * time.Millisecond, ReplaceAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cu.Poll(ctx); err != nil { // the cursor starts at the head
		t.Fatal(err)
	}
	addr, err := cu.DepositAddress(ctx, providers.AddressRequest{Reference: "merchant:" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT})
	if err != nil {
		t.Fatal(err)
	}
	sj.Hold()
	p := &custodyParts{chains: []*evm.Custody{cu}}
	p.start(ctx)
	node.Call(token, "mint", node.Dev, big.NewInt(25_000_000))
	if _, ok := node.Call(token, "transfer", common.HexToAddress(addr.Address), big.NewInt(25_000_000)); !ok {
		t.Fatal("the deposit reverted")
	}
	select { // the watcher credits the deposit: the engine holds it
	case <-sj.Waiting():
	case <-time.After(30 * time.Second):
		select {
		case <-notified:
			t.Fatal("the deposit was notified but never reached the engine's journal")
		default:
			t.Fatal("the watcher never notified the deposit")
		}
	}

	stopBounded(t, p.stop, p.loops, sj.Release, "custody BASE")
	cu.Close()
}

// stopBounded runs stop with a 300ms shutdown deadline while its loops are blocked in the
// engine, and fails the test unless it returns promptly and logs the loops named want as
// abandoned. The test owns what svcd abandons to its exit: once release lets the engine
// answer, the loops (their context cancelled by stop) must end before the test's database
// goes.
func stopBounded(t *testing.T, stop func(context.Context, *slog.Logger), loops []namedLoop, release func(), want ...string) {
	t.Helper()
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); stop(ctx, slog.New(slog.NewTextHandler(&logs, nil))) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stop waited past the shutdown deadline for loops blocked in the engine")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("stop took %s with a 300ms deadline", took)
	}
	for _, w := range append([]string{"abandoned"}, want...) {
		if !strings.Contains(logs.String(), w) {
			t.Fatalf("the log does not name the abandoned loops (%q): %s", w, logs.String())
		}
	}
	release()
	for _, l := range loops {
		select {
		case <-l.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not end once the engine answered", l.name)
		}
	}
}
