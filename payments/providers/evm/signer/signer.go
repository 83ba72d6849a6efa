// Package signer owns the keys of the EVM custody adapter (payments/providers/evm): one
// interface, Signer, that gives the address of a key and signs transactions with it, so a
// hardware security module or a cloud KMS can replace the file keystore without the adapter
// changing; and Keystore, the file implementation.
//
// Keys are named, never handed out: KeyHot is the hot wallet that pays withdrawals and gas
// top-ups; Deposit(reference) is the key of the deposit address issued under a reference
// (merchant:<id>, customer:<id>:<asset>, offramp:<id>). Every key is derived from one master
// secret with HKDF-SHA256 (RFC 5869) over its name, so the same reference gives the same
// address after a restart and on every node, and backing up the one encrypted file backs up
// every address. The master secret is encrypted at rest (Web3 Secret Storage: scrypt and
// AES-128-CTR with a MAC, go-ethereum's keystore), with a passphrase svcd reads from the
// environment; it is never logged, never stored in PostgreSQL, never in an error.
package signer

import (
	"context"
	"crypto/ecdsa"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Key names a key of the signer.
type Key string

// KeyHot is the hot wallet: it pays withdrawals and settlements and tops deposit addresses
// up with gas for their sweeps.
const KeyHot Key = "hot"

// Deposit is the key of the deposit address issued under reference.
func Deposit(reference string) Key { return Key("deposit:" + reference) }

// Signer holds keys and signs with them. Implementations are safe for concurrent use and
// never reveal a private key.
type Signer interface {
	// Address is the address of key k.
	Address(ctx context.Context, k Key) (common.Address, error)
	// SignTx signs tx with key k for chainID (EIP-155/EIP-1559 signer of that chain).
	SignTx(ctx context.Context, k Key, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error)
}

// ErrBadPassphrase: the keystore file does not open with the passphrase given.
var ErrBadPassphrase = errors.New("signer: the keystore passphrase is wrong")

// fileKind marks our keystore files.
const fileKind = "svc-evm-master-secret"

type file struct {
	Kind    string              `json:"kind"`
	Version int                 `json:"version"`
	Crypto  keystore.CryptoJSON `json:"crypto"`
}

// Strength is the scrypt cost of a new keystore file.
type Strength int

const (
	// Standard is go-ethereum's standard scrypt cost (N=2^18): about a second to open.
	Standard Strength = iota
	// Light is the light cost (N=2^12), for tests only.
	Light
)

// Create writes a new keystore file at path holding a fresh random master secret,
// encrypted under passphrase. It refuses to overwrite an existing file (a new master secret
// means new deposit addresses: the old ones' funds would be out of reach).
func Create(path, passphrase string, s Strength) error {
	if len(passphrase) < 12 {
		return errors.New("signer: the keystore passphrase must have at least 12 characters")
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("signer: random master secret: %w", err)
	}
	n, p := keystore.StandardScryptN, keystore.StandardScryptP
	if s == Light {
		n, p = keystore.LightScryptN, keystore.LightScryptP
	}
	c, err := keystore.EncryptDataV3(secret, []byte(passphrase), n, p)
	if err != nil {
		return fmt.Errorf("signer: encrypt the master secret: %w", err)
	}
	body, err := json.MarshalIndent(file{Kind: fileKind, Version: 1, Crypto: c}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("signer: create keystore file: %w", err)
	}
	if _, err := f.Write(append(body, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("signer: write keystore file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Keystore is the file Signer: the master secret decrypted in memory, keys derived on use
// and kept in a cache (a deposit key is derived once per process).
type Keystore struct {
	master []byte
	mu     sync.Mutex
	keys   map[Key]*ecdsa.PrivateKey
}

var _ Signer = (*Keystore)(nil)

// Open decrypts the keystore file at path with passphrase.
//
// Errors: ErrBadPassphrase; a missing or malformed file (the error names the path, never the
// passphrase).
func Open(path, passphrase string) (*Keystore, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signer: read keystore file: %w", err)
	}
	var f file
	if err := json.Unmarshal(body, &f); err != nil || f.Kind != fileKind || f.Version != 1 {
		return nil, fmt.Errorf("signer: %s is not an svc EVM keystore file (create one with `svc custody keystore create`)", path)
	}
	secret, err := keystore.DecryptDataV3(f.Crypto, passphrase)
	if errors.Is(err, keystore.ErrDecrypt) {
		return nil, ErrBadPassphrase
	}
	if err != nil {
		return nil, fmt.Errorf("signer: decrypt %s: %w", path, err)
	}
	if len(secret) != 32 {
		return nil, fmt.Errorf("signer: %s holds a master secret of %d bytes, want 32", path, len(secret))
	}
	return &Keystore{master: secret, keys: map[Key]*ecdsa.PrivateKey{}}, nil
}

// FromSecret is a Keystore over a master secret already in memory (tests and benchmarks).
func FromSecret(secret []byte) (*Keystore, error) {
	if len(secret) != 32 {
		return nil, errors.New("signer: the master secret must be 32 bytes")
	}
	return &Keystore{master: append([]byte(nil), secret...), keys: map[Key]*ecdsa.PrivateKey{}}, nil
}

// String never shows the secret.
func (k *Keystore) String() string { return "signer.Keystore{...}" }

// key derives (or finds) the private key named k: HKDF-SHA256 of the master secret with the
// name as info; the rare output that is not a valid secp256k1 scalar is derived again with a
// counter.
func (k *Keystore) key(name Key) (*ecdsa.PrivateKey, error) {
	if name == "" || strings.ContainsRune(string(name), 0) {
		return nil, errors.New("signer: empty or invalid key name")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if p, ok := k.keys[name]; ok {
		return p, nil
	}
	for i := 0; i < 16; i++ {
		info := fmt.Sprintf("svc evm key v1\x00%s\x00%d", name, i)
		b, err := hkdf.Key(sha256.New, k.master, nil, info, 32)
		if err != nil {
			return nil, err
		}
		p, err := crypto.ToECDSA(b)
		if err != nil {
			continue // out of range (probability about 2^-128)
		}
		if len(k.keys) > 1<<20 { // bound the cache; keys are cheap to derive again
			k.keys = map[Key]*ecdsa.PrivateKey{}
		}
		k.keys[name] = p
		return p, nil
	}
	return nil, errors.New("signer: could not derive a key")
}

// Address is the address of key name.
func (k *Keystore) Address(_ context.Context, name Key) (common.Address, error) {
	p, err := k.key(name)
	if err != nil {
		return common.Address{}, err
	}
	return crypto.PubkeyToAddress(p.PublicKey), nil
}

// SignTx signs tx with key name for chainID.
func (k *Keystore) SignTx(_ context.Context, name Key, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error) {
	p, err := k.key(name)
	if err != nil {
		return nil, err
	}
	return types.SignTx(tx, types.LatestSignerForChainID(chainID), p)
}

// Secret derives a 32-byte secret for purpose from the master secret (HKDF-SHA256, apart
// from every key): the same on every node, never stored. svcd signs the custody watcher's
// notifications with one.
func (k *Keystore) Secret(purpose string) ([]byte, error) {
	return hkdf.Key(sha256.New, k.master, nil, "svc secret v1\x00"+purpose, 32)
}
