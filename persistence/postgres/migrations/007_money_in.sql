-- Money in (issue 8, items 5-8): rate quotes, onramps (NGN bank accounts that convert to
-- USDT/USDC), deposits into them, and transfers between the merchant's payments balance and
-- its trading balance. Amounts are bigint minor units (NGN kobo; USDT/USDC 10^-6). Prices are
-- kobo per one unit of the crypto asset (NGN with 2 places, like the order books' ticks).

-- A quote of GET /payments/rates. Locked at most once (used_at), only before expires_at.
create table rate_quotes (
    id           uuid primary key,
    merchant_id  uuid not null,
    environment  text not null check (environment in ('sandbox', 'live')),
    asset        text not null check (asset in ('USDT', 'USDC', 'USD')),
    side         text not null check (side in ('buy', 'sell')),
    price        bigint not null check (price > 0),   -- kobo per unit of asset
    source       text not null check (source in ('orderbook', 'reference')),
    expires_at   timestamptz not null,
    used_at      timestamptz,
    used_by      text,                                -- what locked it, e.g. onramp:<id>
    created_at   timestamptz not null
);
create index rate_quotes_expiry on rate_quotes (expires_at);

create table onramps (
    id                   uuid primary key,
    merchant_id          uuid not null,
    environment          text not null check (environment in ('sandbox', 'live')),
    type                 text not null check (type in ('TEMPORARY', 'PERMANENT')),
    status               text not null check (status in ('ACTIVE', 'EXPIRED', 'INACTIVE')),
    customer_id          uuid,
    bank_code            text not null,
    account_number       text not null check (account_number ~ '^[0-9]{10}$'),
    bank_name            text not null,
    account_name         text not null,
    amount               bigint check (amount is null or amount > 0),   -- kobo, TEMPORARY only
    price                bigint check (price is null or price > 0),     -- locked kobo per asset unit, TEMPORARY only
    rate_id              uuid references rate_quotes (id),
    settlement_mode      text not null check (settlement_mode in ('ONCHAIN', 'INTERNAL_BALANCE')),
    settlement_asset     text not null check (settlement_asset in ('USDT', 'USDC')),
    settlement_chain     text,
    destination_address  text,
    reference            text,                                          -- payment reference (e.g. a checkout payment)
    expires_at           timestamptz,
    created_at           timestamptz not null,
    updated_at           timestamptz not null,
    constraint onramps_account_key unique (bank_code, account_number),
    check ((type = 'TEMPORARY') = (expires_at is not null and amount is not null and price is not null)),
    check (type = 'TEMPORARY' or customer_id is not null),
    check ((settlement_mode = 'ONCHAIN') = (settlement_chain is not null and destination_address is not null))
);
create index onramps_tenant on onramps (merchant_id, environment, created_at desc, id desc);
-- One active PERMANENT account per customer (spec "Customer").
create unique index onramps_permanent_customer on onramps (merchant_id, environment, customer_id)
    where type = 'PERMANENT' and status = 'ACTIVE';
create index onramps_expiring on onramps (expires_at) where status = 'ACTIVE' and type = 'TEMPORARY';

create table deposits (
    id                   uuid primary key,
    merchant_id          uuid not null,
    environment          text not null check (environment in ('sandbox', 'live')),
    type                 text not null check (type in ('NGN_DEPOSIT', 'CRYPTO_DEPOSIT')),
    status               text not null check (status in ('PENDING_FX', 'PENDING_WITHDRAWAL', 'SETTLED', 'FAILED', 'FLAGGED', 'REVERSED')),
    onramp_id            uuid references onramps (id),
    offramp_id           uuid,
    customer_id          uuid,
    amount               bigint not null check (amount > 0),             -- received, in currency's minor unit
    currency             text not null,
    flag                 boolean not null default false,                 -- held for compliance review at the FX step
    settlement_mode      text not null check (settlement_mode in ('ONCHAIN', 'INTERNAL_BALANCE')),
    asset                text not null check (asset in ('USDT', 'USDC')),
    chain                text,
    destination_address  text,
    price                bigint,                                         -- kobo per asset unit applied
    settled_amount       bigint,                                         -- asset minor units, once converted
    tx_hash              text,
    payment_reference    text not null,
    failure_reason       text,
    created_at           timestamptz not null,
    updated_at           timestamptz not null,
    settled_at           timestamptz
);
create index deposits_tenant on deposits (merchant_id, environment, created_at desc, id desc);
create index deposits_onramp on deposits (onramp_id);

-- Transfers between the merchant's payments USDT balance (ledger) and its trading balance
-- (engine), both ways. The engine applies the credit/debit with the transfer's id as its
-- TransferID, so re-submitting after a crash is a no-op.
create table merchant_balance_transfers (
    id              uuid primary key,
    merchant_id     uuid not null,
    environment     text not null check (environment in ('sandbox', 'live')),
    direction       text not null check (direction in ('to_trading', 'to_payments')),
    asset           text not null check (asset = 'USDT'),
    amount          bigint not null check (amount > 0),
    status          text not null check (status in ('PENDING', 'COMPLETED', 'FAILED')),
    failure_reason  text,
    created_at      timestamptz not null,
    updated_at      timestamptz not null,
    completed_at    timestamptz
);
create index merchant_balance_transfers_tenant on merchant_balance_transfers (merchant_id, environment, created_at desc, id desc);
