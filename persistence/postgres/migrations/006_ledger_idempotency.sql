-- Ledger (issue 8): double entry. An account is one balance of one asset for one purpose of
-- one owner (the merchant, one of its customers, or the system side of its books) in one
-- environment. Entries are signed minor units (+ raises the balance, - lowers it); every
-- ledger transaction's entries sum to zero per asset. The balance row is updated in the same
-- transaction as its entries, under a row lock, and CHECKed here: only system accounts and
-- receivable-type accounts may go negative, whatever SQL is run.
create table ledger_accounts (
    id             uuid primary key,
    merchant_id    uuid not null,
    environment    text not null check (environment in ('sandbox', 'live')),
    owner_type     text not null check (owner_type in ('merchant', 'customer', 'system')),
    owner_id       uuid not null,
    asset          text not null check (asset in ('NGN', 'USD', 'USDT', 'USDC')),
    purpose        text not null check (purpose ~ '^[a-z][a-z0-9_]{0,39}$'),
    allow_negative boolean not null,
    balance        bigint not null default 0,
    last_seq       bigint not null default 0,
    created_at     timestamptz not null default now(),
    updated_at     timestamptz not null default now(),
    constraint ledger_accounts_key unique (merchant_id, environment, owner_type, owner_id, asset, purpose),
    constraint ledger_accounts_non_negative check (balance >= 0 or allow_negative),
    constraint ledger_accounts_negative_allowed_only check (
        not allow_negative or owner_type = 'system' or purpose like 'receivable%')
);
create index ledger_accounts_owner on ledger_accounts (merchant_id, environment, owner_type, owner_id);

-- reference is the caller's external reference (e.g. "deposit:<id>:settle"): a second post
-- with the same reference is a replay, never a second movement. postings_hash detects a
-- reuse of a reference for different postings.
create table ledger_transactions (
    id            uuid primary key,
    merchant_id   uuid not null,
    environment   text not null check (environment in ('sandbox', 'live')),
    reference     text not null check (length(reference) between 1 and 200),
    kind          text not null default '',
    description   text not null default '',
    postings_hash bytea not null,
    metadata      jsonb not null default '{}',
    created_at    timestamptz not null default now(),
    constraint ledger_transactions_reference unique (merchant_id, environment, reference)
);

-- seq numbers an account's entries 1, 2, 3... in the order they were applied (under the
-- account's row lock), and balance_after is the running balance, so `svc ledger verify` can
-- check the chain and the entry list pages stably.
create table ledger_entries (
    id             uuid primary key,
    transaction_id uuid not null references ledger_transactions (id),
    account_id     uuid not null references ledger_accounts (id),
    asset          text not null,
    amount         bigint not null check (amount <> 0),
    seq            bigint not null,
    balance_after  bigint not null,
    created_at     timestamptz not null default now(),
    constraint ledger_entries_seq unique (account_id, seq)
);
create index ledger_entries_transaction on ledger_entries (transaction_id);

-- Idempotency keys (DESIGN.md section 4): one row per merchant, environment and key, written
-- in the same transaction as the change the request made, with the response to replay.
create table idempotency_keys (
    merchant_id    uuid not null,
    environment    text not null check (environment in ('sandbox', 'live')),
    key            text not null,
    request_hash   bytea not null,
    method         text not null,
    path           text not null,
    status_code    integer not null,
    content_type   text not null,
    response_body  bytea not null,
    created_at     timestamptz not null default now(),
    expires_at     timestamptz not null,
    primary key (merchant_id, environment, key)
);
create index idempotency_keys_expiry on idempotency_keys (expires_at);
