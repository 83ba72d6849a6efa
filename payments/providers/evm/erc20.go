package evm

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// erc20ABI is the part of ERC-20 the custody uses.
const erc20ABI = `[
 {"type":"function","name":"transfer","stateMutability":"nonpayable","inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"who","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"decimals","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint8"}]},
 {"type":"event","name":"Transfer","anonymous":false,"inputs":[{"name":"from","type":"address","indexed":true},{"name":"to","type":"address","indexed":true},{"name":"value","type":"uint256","indexed":false}]}
]`

// transferTopic is topic 0 of ERC-20 Transfer(address,address,uint256).
var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

func (c *Custody) tokenBalance(ctx context.Context, t Token, who common.Address) (*big.Int, error) {
	data, err := c.erc20.Pack("balanceOf", who)
	if err != nil {
		return nil, err
	}
	out, err := c.client.CallContract(ctx, ethereum.CallMsg{To: &t.Contract, Data: data}, nil)
	if err != nil {
		return nil, c.unavailable("token balance", err)
	}
	vals, err := c.erc20.Unpack("balanceOf", out)
	if err != nil || len(vals) != 1 {
		return nil, fmt.Errorf("evm custody: %s balanceOf answered %x: %v", t.Asset, out, err)
	}
	v, ok := vals[0].(*big.Int)
	if !ok {
		return nil, fmt.Errorf("evm custody: %s balanceOf answered %T", t.Asset, vals[0])
	}
	return v, nil
}
