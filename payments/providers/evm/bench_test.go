package evm

import (
	"context"
	"crypto/rand"
	"math/big"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/providers/evm/evmtest"
	"svc/payments/providers/evm/signer"
	"svc/persistence/postgres/pgtest"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func randomAddress() common.Address {
	var a common.Address
	_, _ = rand.Read(a[:])
	return a
}

// BenchmarkWatcher measures the watcher catching up over blocks full of Transfer logs of a
// watched token while SVC_CUSTODY_BENCH_ADDRESSES deposit addresses are watched (default
// 2,000; the figure in bench/RESULTS.md uses 100,000) and SVC_CUSTODY_BENCH_LOGS logs were
// emitted (default 400; half to watched addresses, half to others). Each iteration rewinds
// the cursor and reads the same blocks again: header batch, one log filter per range,
// recipients matched in the set, transfers, blocks and cursor stored, credits recorded.
//
// scan: confirmations never reached, so nothing is credited (reading and recording only);
// scan+credit: one confirmation, every transfer to a watched address also credited (marked
// CREDITED; no notifier).
func BenchmarkWatcher(b *testing.B) {
	b.Run("scan", func(b *testing.B) { benchWatcher(b, 1<<40) })
	b.Run("scan+credit", func(b *testing.B) { benchWatcher(b, 1) })
}

func benchWatcher(b *testing.B, confirmations uint64) {
	nAddr, nLogs := envInt("SVC_CUSTODY_BENCH_ADDRESSES", 2_000), envInt("SVC_CUSTODY_BENCH_LOGS", 400)
	node := evmtest.Start(b)
	pool, _ := pgtest.New(b)
	token := node.DeployToken("Tether USD", "USDT", 6)
	ks, _ := signer.FromSecret([]byte("0123456789abcdef0123456789abcdef"))
	c, err := New(pool, Config{Chain: providers.Base, RPCURL: node.URL, ChainID: evmtest.DevChainID, Confirmations: confirmations,
		Tokens: []Token{{Asset: money.USDT, Contract: token, Decimals: 6}}, Signer: ks})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	watched := make([]common.Address, nAddr)
	rows := make([][]any, nAddr)
	now := time.Now().UTC()
	for i := range watched {
		watched[i] = randomAddress()
		rows[i] = []any{lower(watched[i]), "merchant:" + uuid.NewString(), now}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"evm_addresses"}, []string{"address", "reference", "created_at"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Poll(ctx); err != nil { // cursor at the head, the address set loaded
		b.Fatal(err)
	}
	cur, _, _ := c.loadCursor(ctx)
	const perTx = 25 // within the 3M gas of the developer account's calls
	var last common.Hash
	for sent := 0; sent < nLogs; sent += perTx {
		to := make([]common.Address, 0, perTx)
		for i := sent; i < min(nLogs, sent+perTx); i++ {
			if i%2 == 0 {
				to = append(to, watched[(i/2)%nAddr])
			} else {
				to = append(to, randomAddress())
			}
		}
		last = node.Start(token, "mintMany", to, big.NewInt(1_000_000))
	}
	if !node.Wait(last) {
		b.Fatal("mintMany reverted")
	}
	head := node.Head()
	blocks := head - cur.Number
	b.ResetTimer()
	var spent time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, q := range []string{`delete from evm_transfers where $1::bigint >= 0`, `delete from evm_blocks where block_number > $1`} {
			if _, err := pool.Exec(ctx, q, int64(cur.Number)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := pool.Exec(ctx, `update evm_cursors set block_number = $1, block_hash = $2`, int64(cur.Number), cur.Hash.Hex()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		began := time.Now()
		for {
			caught, err := c.Poll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if h := c.Health(); caught && h.Cursor >= head {
				break
			}
		}
		spent += time.Since(began)
	}
	var seen int
	_ = pool.QueryRow(ctx, `select count(*) from evm_transfers`).Scan(&seen)
	if seen != (nLogs+1)/2 {
		b.Fatalf("recorded %d transfers, want %d", seen, (nLogs+1)/2)
	}
	secs := spent.Seconds() / float64(b.N)
	b.ReportMetric(float64(blocks)/secs, "blocks/s")
	b.ReportMetric(float64(nLogs)/secs, "logs/s")
	b.ReportMetric(float64(c.Watched()), "watched")
}

// BenchmarkSends measures sends from the hot wallet one after another: each records the
// send, takes the nonce under its lock, checks the funds, signs, stores the signed bytes and
// broadcasts (what a withdrawal's first step costs), then waits for all to be mined.
func BenchmarkSends(b *testing.B) {
	node := evmtest.Start(b)
	pool, _ := pgtest.New(b)
	token := node.DeployToken("Tether USD", "USDT", 6)
	ks, _ := signer.FromSecret([]byte("0123456789abcdef0123456789abcdef"))
	c, err := New(pool, Config{Chain: providers.Base, RPCURL: node.URL, ChainID: evmtest.DevChainID, Confirmations: 1,
		Tokens: []Token{{Asset: money.USDT, Contract: token, Decimals: 6}}, Signer: ks})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	hot, _ := c.HotWallet(ctx)
	node.Fund(hot, evmtest.Ether(100))
	node.Call(token, "mint", hot, big.NewInt(int64(b.N)*1_000_000))
	b.ResetTimer()
	var last string
	for i := 0; i < b.N; i++ {
		res, err := c.Send(ctx, providers.SendRequest{Reference: "bench:" + uuid.NewString(), Chain: providers.Base, Asset: money.USDT,
			To: randomAddress().Hex(), Amount: money.New(money.USDT, 1_000_000)})
		if err != nil {
			b.Fatal(err)
		}
		last = res.TxHash
	}
	b.StopTimer()
	if !node.Wait(common.HexToHash(last)) {
		b.Fatal("the last send reverted")
	}
}
