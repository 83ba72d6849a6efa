package providers

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// Chain is a blockchain network (spec "Shared enumerations").
type Chain string

const (
	Aptos    Chain = "APTOS"
	Base     Chain = "BASE"
	Celo     Chain = "CELO"
	Ethereum Chain = "ETHEREUM"
	Polygon  Chain = "POLYGON"
	Solana   Chain = "SOLANA"
	Tron     Chain = "TRON"
	Arbitrum Chain = "ARBITRUM"
	Optimism Chain = "OPTIMISM"
)

// WalletChains are the chains of withdrawals, offramps, customer crypto wallets and funding.
var WalletChains = []Chain{Aptos, Base, Celo, Ethereum, Polygon, Solana, Tron}

// RecipientChains are the chains of crypto recipients.
var RecipientChains = []Chain{Ethereum, Base, Polygon, Arbitrum, Optimism, Celo}

// ChainNames returns the names of chains (for enum validation messages).
func ChainNames(chains []Chain) []string {
	out := make([]string, len(chains))
	for i, c := range chains {
		out[i] = string(c)
	}
	return out
}

// In reports whether c is one of chains.
func (c Chain) In(chains []Chain) bool {
	for _, x := range chains {
		if x == c {
			return true
		}
	}
	return false
}

// Family is the address format of a chain.
type Family string

const (
	EVM          Family = "evm"    // 0x + 40 hex digits
	SolanaFamily Family = "solana" // base58 of 32 bytes
	TronFamily   Family = "tron"   // base58check of 0x41 + 20 bytes (T...)
	AptosFamily  Family = "aptos"  // 0x + 64 hex digits
)

// Family returns the chain's address family; "" for an unknown chain.
func (c Chain) Family() Family {
	switch c {
	case Base, Celo, Ethereum, Polygon, Arbitrum, Optimism:
		return EVM
	case Solana:
		return SolanaFamily
	case Tron:
		return TronFamily
	case Aptos:
		return AptosFamily
	}
	return ""
}

// ValidateAddress checks addr has the format of chain's addresses: 0x + 40 hex digits for
// EVM chains, whose letters, when in mixed case, must be the EIP-55 checksum (all lower or
// all upper case carries no checksum and is accepted), base58 of a 32-byte key for Solana, base58check
// of a 0x41-prefixed 21-byte address for Tron, 0x + 64 hex digits for Aptos. The error is a
// phrase fit for a field error.
func ValidateAddress(chain Chain, addr string) error {
	switch chain.Family() {
	case EVM:
		if !hexAddress(addr, 40) {
			return fmt.Errorf("must be a %s address: 0x followed by 40 hex digits", chain)
		}
		if digits := addr[2:]; strings.ToLower(digits) != digits && strings.ToUpper(digits) != digits &&
			common.HexToAddress(addr).Hex()[2:] != digits {
			return fmt.Errorf("has a wrong EIP-55 checksum (mixed case that is not %s): a mistyped address; check it, or send it in lower case", common.HexToAddress(addr).Hex())
		}
	case AptosFamily:
		if !hexAddress(addr, 64) {
			return errors.New("must be an APTOS address: 0x followed by 64 hex digits")
		}
	case SolanaFamily:
		b, err := base58Decode(addr)
		if err != nil || len(b) != 32 || len(addr) < 32 || len(addr) > 44 {
			return errors.New("must be a SOLANA address: base58 of 32 bytes")
		}
	case TronFamily:
		b, err := base58Decode(addr)
		if err != nil || len(b) != 25 || b[0] != 0x41 || !bytes.Equal(checksum(b[:21]), b[21:]) {
			return errors.New("must be a TRON address: base58check starting with T")
		}
	default:
		return fmt.Errorf("unknown chain %q", chain)
	}
	return nil
}

func hexAddress(s string, digits int) bool {
	if len(s) != 2+digits || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

const b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var b58Index = func() [256]int {
	var t [256]int
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(b58); i++ {
		t[b58[i]] = i
	}
	return t
}()

func base58Decode(s string) ([]byte, error) {
	if s == "" || len(s) > 64 {
		return nil, errors.New("bad length")
	}
	n := new(big.Int)
	radix := big.NewInt(58)
	zeros := 0
	for i := 0; i < len(s) && s[i] == '1'; i++ {
		zeros++
	}
	for i := 0; i < len(s); i++ {
		d := b58Index[s[i]]
		if d < 0 {
			return nil, errors.New("not base58")
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}

func base58Encode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, b58[mod.Int64()])
	}
	for i := 0; i < len(b) && b[i] == 0; i++ {
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

func checksum(b []byte) []byte {
	h1 := sha256.Sum256(b)
	h2 := sha256.Sum256(h1[:])
	return h2[:4]
}
