// Package evm is the live chain custodian for EVM chains (issue 31): one Custody per
// configured chain (ETHEREUM, BASE, POLYGON, CELO, ARBITRUM, OPTIMISM) behind
// providers.Custody, talking JSON-RPC to a node through go-ethereum's ethclient.
//
// It owns the evm_* tables (migration 022): the deposit addresses it issued (keys derived
// per reference by the signer, package signer), the watcher's cursor, recent blocks and the
// token transfers it observed, and the sends it signed. It owns no money: a confirmed
// transfer becomes a custody notification (Notifier) that payments/partners credits as it
// credits every other partner's, and a send's outcome goes back to its caller (withdrawals,
// deposits) as providers.SendResult.
//
// The three loops of Run:
//
//   - the watcher follows new blocks, reads ERC-20 Transfer logs of the configured token
//     contracts (one filter per block range, recipients matched in a set, so 100,000 watched
//     addresses cost a map lookup each), records each transfer once, detects reorganisations
//     by parent hash, and notifies a transfer once it has the chain's confirmations;
//   - the sender rebroadcasts every signed, unconfirmed send and replaces one stuck below the
//     market fee at the same nonce;
//   - the sweeper moves deposit addresses' tokens above a threshold to the hot wallet, topping
//     them up with gas first.
package evm
