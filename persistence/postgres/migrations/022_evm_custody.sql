-- 022: EVM custody (issue 31, payments/providers/evm): deposit addresses derived per
-- reference, the chain watcher's cursor, recent blocks and observed token transfers, and
-- on-chain sends whose nonce and signed transaction are stored before they are broadcast.
-- No key material is ever stored here: keys live in the signer (a file keystore).

-- Deposit addresses issued, so every watcher knows the set it watches. The address is the
-- same on every EVM chain for a reference (derived from the reference alone).
create table evm_addresses (
    address     text primary key,              -- lowercase 0x + 40 hex digits
    reference   text not null unique,          -- merchant:<id>, customer:<id>:<asset>, offramp:<id>
    created_at  timestamptz not null
);
create index evm_addresses_created on evm_addresses (created_at);

-- Where each chain's watcher is: the last block it processed.
create table evm_cursors (
    chain         text primary key,
    block_number  bigint not null,
    block_hash    text not null,
    updated_at    timestamptz not null
);

-- The recent blocks the watcher processed (their parent hashes detect reorganisations).
create table evm_blocks (
    chain         text not null,
    block_number  bigint not null,
    block_hash    text not null,
    parent_hash   text not null,
    primary key (chain, block_number)
);

-- Token transfers to our deposit addresses, each recorded once per (tx hash, ordinal): the
-- ordinal is the log's place among the transaction's Transfer logs of our tokens, which stays
-- the same when a reorganisation puts the transaction in another block (the log index may not).
create table evm_transfers (
    id                uuid primary key,
    chain             text not null,
    tx_hash           text not null,
    ordinal           integer not null,
    log_index         integer not null,         -- in the block it was last seen in
    block_number      bigint not null,
    block_hash        text not null,
    token             text not null,            -- the token contract
    asset             text not null,            -- USDT, USDC
    from_address      text not null,
    to_address        text not null,
    reference         text not null,            -- the deposit address's reference
    value             numeric(78, 0) not null,  -- in the token's base units, exact
    amount            bigint not null,          -- in the asset's minor units (micro-units)
    status            text not null check (status in ('SEEN', 'CREDITED', 'DROPPED', 'REORGED_AFTER_CREDIT')),
    partner_event_id  uuid,                     -- the notification it became
    seen_at           timestamptz not null,
    credited_at       timestamptz,
    dropped_at        timestamptz,
    constraint evm_transfers_once unique (chain, tx_hash, ordinal)
);
create index evm_transfers_open on evm_transfers (chain, block_number) where status = 'SEEN';
create index evm_transfers_alerts on evm_transfers (dropped_at) where status = 'REORGED_AFTER_CREDIT';

-- The next nonce of each sending address per chain (the hot wallet, deposit addresses that
-- sweep), taken under a row lock so two sends never share one.
create table evm_nonces (
    chain       text not null,
    address     text not null,
    next_nonce  bigint not null,
    primary key (chain, address)
);

-- Sends: withdrawals and settlements from the hot wallet, sweeps, gas top-ups.
create table evm_sends (
    chain           text not null,
    reference       text not null,             -- withdrawal:<id>, deposit:<id>, sweep:..., topup:...
    kind            text not null check (kind in ('SEND', 'SWEEP', 'TOPUP')),
    asset           text not null,             -- USDT, USDC, or the chain's native coin for TOPUP
    token           text not null,             -- the token contract ('' for TOPUP)
    from_address    text not null,
    signer_key      text not null,             -- the signer's name of the sending key (hot, deposit:<reference>)
    to_address      text not null,
    value           numeric(78, 0) not null,   -- token base units (wei for TOPUP)
    nonce           bigint,                    -- null while WAITING
    status          text not null check (status in ('WAITING', 'SIGNED', 'CONFIRMED', 'FAILED')),
    tx_hash         text,                      -- the newest signed version
    mined_tx_hash   text,                      -- the version the chain included
    block_number    bigint,
    failure_reason  text,
    last_error      text,
    created_at      timestamptz not null,
    updated_at      timestamptz not null,
    signed_at       timestamptz,
    confirmed_at    timestamptz,
    primary key (chain, reference)
);
create index evm_sends_open on evm_sends (chain, created_at) where status in ('WAITING', 'SIGNED');

-- Every signed version of a send (a replacement at the same nonce adds one), stored before
-- it is broadcast: after a crash the stored bytes are broadcast again, never re-signed anew.
create table evm_send_txs (
    chain       text not null,
    tx_hash     text not null,
    reference   text not null,
    raw         bytea not null,
    fee_cap     numeric(78, 0) not null,
    tip_cap     numeric(78, 0) not null,
    created_at  timestamptz not null,
    primary key (chain, tx_hash),
    foreign key (chain, reference) references evm_sends (chain, reference)
);
