package signer

import (
	"context"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

func TestKeystoreFileRoundTripAndDeterministicAddresses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "custody.json")
	const pass = "correct horse battery staple"
	if err := Create(path, pass, Light); err != nil {
		t.Fatal(err)
	}
	if err := Create(path, pass, Light); err == nil {
		t.Fatal("Create overwrote an existing keystore file")
	}
	body, _ := os.ReadFile(path)
	if strings.Contains(string(body), pass) {
		t.Fatal("the passphrase is in the file")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("keystore file mode %v, want 0600", st.Mode().Perm())
	}
	if _, err := Open(path, "wrong passphrase!!"); !errors.Is(err, ErrBadPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	a, err := Open(path, pass)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, pass) // another node, or after a restart
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	seen := map[common.Address]Key{}
	for _, k := range []Key{KeyHot, Deposit("merchant:1"), Deposit("customer:1:USDT"), Deposit("customer:1:USDC"), Deposit("offramp:1")} {
		x, err := a.Address(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		y, _ := b.Address(ctx, k)
		if x != y {
			t.Fatalf("%s: %s on one node, %s on another", k, x, y)
		}
		if other, dup := seen[x]; dup {
			t.Fatalf("%s and %s share address %s", k, other, x)
		}
		seen[x] = k
	}
	if s := a.String(); strings.Contains(s, "master") && len(s) > 40 {
		t.Fatalf("String shows too much: %q", s)
	}
}

func TestSignTxRecoversToTheKeysAddress(t *testing.T) {
	ks, err := FromSecret(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	chain := big.NewInt(1337)
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: chain, Nonce: 3, GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(2), Gas: 21000, To: &to})
	for _, k := range []Key{KeyHot, Deposit("offramp:x")} {
		stx, err := ks.SignTx(ctx, k, tx, chain)
		if err != nil {
			t.Fatal(err)
		}
		from, err := types.Sender(types.LatestSignerForChainID(chain), stx)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ks.Address(ctx, k)
		if from != want {
			t.Fatalf("%s signed as %s, want %s", k, from, want)
		}
	}
	if _, err := ks.Address(ctx, ""); err == nil {
		t.Fatal("an empty key name was accepted")
	}
}
