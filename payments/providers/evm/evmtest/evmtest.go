// Package evmtest runs a real Ethereum node for the chain tests: geth in --dev mode (built
// by the project's script .ci/geth from the go-ethereum module go.mod pins, cached under
// .data/tools), listening for JSON-RPC on 127.0.0.1 at a free port, mining a block a second.
// It also deploys TestToken (TestToken.sol, compiled bytecode beside it), the ERC-20 that
// stands for USDT and USDC. The adapter under test talks JSON-RPC to it exactly as to a
// production node.
package evmtest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"svc/testport"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

//go:embed TestToken.abi
var tokenABI string

//go:embed TestToken.bin
var tokenBin string

// TokenABI is TestToken's ABI.
func TokenABI() abi.ABI {
	a, err := abi.JSON(strings.NewReader(tokenABI))
	if err != nil {
		panic(err)
	}
	return a
}

// DevChainID is geth --dev's chain id.
const DevChainID = 1337

var gethOnce sync.Once
var gethPath, gethWhy string

// Geth finds the geth binary through .ci/geth (building it on first use); "" with the
// reason when it cannot.
func Geth() (string, string) {
	gethOnce.Do(func() {
		if p := os.Getenv("SVC_GETH"); p != "" {
			gethPath = p
			return
		}
		root, err := repoRoot()
		if err != nil {
			gethWhy = err.Error()
			return
		}
		script := filepath.Join(root, ".ci", "geth")
		if out, err := exec.Command(script, "path").Output(); err == nil {
			gethPath = strings.TrimSpace(string(out))
			return
		}
		var stderr bytes.Buffer
		cmd := exec.Command(script)
		cmd.Stderr = &stderr
		_ = cmd.Run()
		if out, err := exec.Command(script, "path").Output(); err == nil {
			gethPath = strings.TrimSpace(string(out))
			return
		}
		gethWhy = ".ci/geth could not provide geth: " + strings.TrimSpace(stderr.String())
	})
	return gethPath, gethWhy
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Node is a running geth --dev.
type Node struct {
	t       testing.TB
	bin     string
	dir     string
	port    int
	cmd     *exec.Cmd
	log     *os.File
	URL     string
	RPC     *rpc.Client
	Client  *ethclient.Client
	Dev     common.Address // the prefunded, unlocked developer account
	Period  int
	stopped bool
	nonce   *uint64 // the developer account's next nonce while Start sends without waiting
}

// Start runs a node for t (stopped at cleanup); it skips t, saying why, only when geth
// cannot be had.
func Start(t testing.TB) *Node {
	t.Helper()
	bin, why := Geth()
	if bin == "" {
		t.Skip("no geth for the chain tests: " + why)
	}
	n := &Node{t: t, bin: bin, dir: t.TempDir(), port: testport.Free(t), Period: 1} // Restart binds it again: below the ephemeral range (testport)
	n.URL = fmt.Sprintf("http://127.0.0.1:%d", n.port)
	n.start()
	t.Cleanup(n.Stop)
	return n
}

func (n *Node) start() {
	t := n.t
	logf, err := os.OpenFile(filepath.Join(n.dir, "geth.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	n.log = logf
	n.cmd = exec.Command(n.bin, "--dev", "--dev.period", fmt.Sprint(n.Period), "--datadir", filepath.Join(n.dir, "data"),
		"--http", "--http.addr", "127.0.0.1", "--http.port", fmt.Sprint(n.port), "--http.api", "eth,net,web3,debug,txpool",
		"--authrpc.port", fmt.Sprint(testport.Free(t)), "--port", "0", "--nodiscover", "--maxpeers", "0", "--ipcdisable",
		"--verbosity", "2", "--rpc.txfeecap", "0")
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("start geth: %v", err)
	}
	n.stopped = false
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := rpc.Dial(n.URL)
		if err == nil {
			var accts []common.Address
			if err = c.Call(&accts, "eth_accounts"); err == nil && len(accts) > 0 {
				n.RPC, n.Client, n.Dev = c, ethclient.NewClient(c), accts[0]
				return
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			body, _ := os.ReadFile(filepath.Join(n.dir, "geth.log"))
			t.Fatalf("geth did not answer on %s within 60 s: %v\n%s", n.URL, err, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop stops the node (its chain is kept in its data folder for Restart).
func (n *Node) Stop() {
	if n.stopped || n.cmd == nil {
		return
	}
	n.stopped = true
	if n.RPC != nil {
		n.RPC.Close()
	}
	_ = n.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = n.cmd.Process.Kill()
		<-done
	}
	n.log.Close()
}

// Restart starts the node again on the same port and data.
func (n *Node) Restart() {
	n.Stop()
	n.start()
}

// Log is the node's output so far (for failure messages).
func (n *Node) Log() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "geth.log"))
	return string(b)
}

func (n *Node) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// SendFromDev sends a transaction from the developer account and waits for its receipt;
// it answers the transaction hash and whether it succeeded.
func (n *Node) SendFromDev(to *common.Address, value *big.Int, data []byte) (common.Hash, bool) {
	n.t.Helper()
	n.nonce = nil // the node assigns it again
	ctx, cancel := n.ctx()
	defer cancel()
	arg := map[string]any{"from": n.Dev, "gas": hexutil.Uint64(3_000_000)}
	if to != nil {
		arg["to"] = *to
	}
	if value != nil {
		arg["value"] = (*hexutil.Big)(value)
	}
	if data != nil {
		arg["data"] = hexutil.Bytes(data)
	}
	var h common.Hash
	if err := n.RPC.CallContext(ctx, &h, "eth_sendTransaction", arg); err != nil {
		n.t.Fatalf("eth_sendTransaction: %v", err)
	}
	return h, n.Wait(h)
}

// Wait waits for a transaction's receipt; true when it succeeded.
func (n *Node) Wait(h common.Hash) bool {
	n.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := n.ctx()
		rc, err := n.Client.TransactionReceipt(ctx, h)
		cancel()
		if err == nil {
			return rc.Status == 1
		}
		time.Sleep(200 * time.Millisecond)
	}
	n.t.Fatalf("transaction %s not mined within 60 s", h.Hex())
	return false
}

// Fund sends wei of the native coin from the developer account to addr.
func (n *Node) Fund(addr common.Address, wei *big.Int) {
	n.t.Helper()
	if _, ok := n.SendFromDev(&addr, wei, nil); !ok {
		n.t.Fatalf("funding %s failed", addr.Hex())
	}
}

// Ether is x ETH in wei.
func Ether(x int64) *big.Int { return new(big.Int).Mul(big.NewInt(x), big.NewInt(1e18)) }

// DeployToken deploys a TestToken and answers its address.
func (n *Node) DeployToken(name, symbol string, decimals uint8) common.Address {
	n.t.Helper()
	a := TokenABI()
	args, err := a.Pack("", name, symbol, decimals)
	if err != nil {
		n.t.Fatal(err)
	}
	code := append(common.FromHex(strings.TrimSpace(tokenBin)), args...)
	h, ok := n.SendFromDev(nil, nil, code)
	if !ok {
		n.t.Fatal("token deployment reverted")
	}
	ctx, cancel := n.ctx()
	defer cancel()
	rc, err := n.Client.TransactionReceipt(ctx, h)
	if err != nil {
		n.t.Fatal(err)
	}
	return rc.ContractAddress
}

// Call sends a token call from the developer account (mint, transfer, setBlocked) and
// answers its hash and success.
func (n *Node) Call(token common.Address, method string, args ...any) (common.Hash, bool) {
	n.t.Helper()
	data, err := TokenABI().Pack(method, args...)
	if err != nil {
		n.t.Fatal(err)
	}
	return n.SendFromDev(&token, nil, data)
}

// Start sends a token call from the developer account without waiting for it (the nonce
// is the node's); Wait for its hash.
func (n *Node) Start(token common.Address, method string, args ...any) common.Hash {
	n.t.Helper()
	data, err := TokenABI().Pack(method, args...)
	if err != nil {
		n.t.Fatal(err)
	}
	ctx, cancel := n.ctx()
	defer cancel()
	if n.nonce == nil {
		pn, err := n.Client.PendingNonceAt(ctx, n.Dev)
		if err != nil {
			n.t.Fatal(err)
		}
		n.nonce = &pn
	}
	var h common.Hash
	arg := map[string]any{"from": n.Dev, "to": token, "gas": hexutil.Uint64(3_000_000), "data": hexutil.Bytes(data),
		"nonce": hexutil.Uint64(*n.nonce)}
	*n.nonce++
	if err := n.RPC.CallContext(ctx, &h, "eth_sendTransaction", arg); err != nil {
		n.t.Fatalf("eth_sendTransaction: %v", err)
	}
	return h
}

// TokenBalance is who's balance of token.
func (n *Node) TokenBalance(token, who common.Address) *big.Int {
	n.t.Helper()
	a := TokenABI()
	data, _ := a.Pack("balanceOf", who)
	ctx, cancel := n.ctx()
	defer cancel()
	var out hexutil.Bytes
	if err := n.RPC.CallContext(ctx, &out, "eth_call", map[string]any{"to": token, "data": hexutil.Bytes(data)}, "latest"); err != nil {
		n.t.Fatal(err)
	}
	return new(big.Int).SetBytes(out)
}

// Head is the node's head block number.
func (n *Node) Head() uint64 {
	n.t.Helper()
	ctx, cancel := n.ctx()
	defer cancel()
	h, err := n.Client.BlockNumber(ctx)
	if err != nil {
		n.t.Fatal(err)
	}
	return h
}

// SetHead rewinds the node's chain to block num (debug_setHead): mining on from there
// gives a real reorganisation.
func (n *Node) SetHead(num uint64) {
	n.t.Helper()
	ctx, cancel := n.ctx()
	defer cancel()
	if err := n.RPC.CallContext(ctx, nil, "debug_setHead", hexutil.EncodeUint64(num)); err != nil {
		n.t.Fatalf("debug_setHead: %v", err)
	}
}

// WaitHead waits until the node's head reaches num.
func (n *Node) WaitHead(num uint64) {
	n.t.Helper()
	deadline := time.Now().Add(time.Duration(num-min(num, n.Head())+30) * 2 * time.Second)
	for n.Head() < num {
		if time.Now().After(deadline) {
			n.t.Fatalf("head stuck at %d, waiting for %d", n.Head(), num)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
