// SPDX-License-Identifier: MIT
// TestToken stands for USDT and USDC in the chain tests (payments/providers/evm): a plain
// ERC-20 whose mint is open to anyone (test money) and whose transfers to a blocked address
// revert, as USDT's and USDC's blacklists do, so a reverted send can be tested.
// Compiled with solc 0.8.28 (npm solc, optimizer on, 200 runs): TestToken.bin and
// TestToken.abi beside this file; `go generate` is not used because no compiler is assumed.
pragma solidity ^0.8.20;

contract TestToken {
    string public name;
    string public symbol;
    uint8 public decimals;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public blocked;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
    }

    function mint(address to, uint256 value) external {
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    // mintMany mints value to each of to: one Transfer log per recipient (the watcher's
    // benchmark makes thousands of logs with a few transactions).
    function mintMany(address[] calldata to, uint256 value) external {
        for (uint256 i = 0; i < to.length; i++) {
            balanceOf[to[i]] += value;
            emit Transfer(address(0), to[i], value);
        }
        totalSupply += value * to.length;
    }

    function setBlocked(address who, bool on) external {
        blocked[who] = on;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 a = allowance[from][msg.sender];
        require(a >= value, "allowance");
        allowance[from][msg.sender] = a - value;
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) internal {
        require(!blocked[to] && !blocked[from], "blocked");
        uint256 b = balanceOf[from];
        require(b >= value, "balance");
        balanceOf[from] = b - value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
