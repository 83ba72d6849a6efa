-- Money out (issue 9): withdrawals (USDT to an external wallet), offramps (crypto received at
-- a deposit address, converted to NGN and paid to a bank, or credited internally) with their
-- NGN payouts, recipients (saved destinations) and transfers (NGN or USD to a bank account).
-- Amounts are bigint minor units (USDT/USDC 10^-6, NGN kobo, USD cents); prices are kobo per
-- one unit of the crypto asset, as in 007. Every row carries merchant_id and environment.

create table withdrawals (
    id                   uuid primary key,
    merchant_id          uuid not null,
    environment          text not null check (environment in ('sandbox', 'live')),
    amount               bigint not null check (amount > 0),            -- USDT micro-units
    token                text not null check (token = 'USDT'),
    chain                text not null,
    destination_address  text not null,
    status               text not null check (status in ('PENDING', 'SUBMITTED', 'SETTLED', 'FAILED')),
    tx_hash              text,
    failure_reason       text,
    created_at           timestamptz not null,
    updated_at           timestamptz not null,
    submitted_at         timestamptz,
    settled_at           timestamptz,
    check ((status = 'SETTLED') = (settled_at is not null))
);
create index withdrawals_tenant on withdrawals (merchant_id, environment, created_at desc, id desc);

create table offramps (
    id                   uuid primary key,
    merchant_id          uuid not null,
    environment          text not null check (environment in ('sandbox', 'live')),
    type                 text not null check (type in ('TEMPORARY', 'PERMANENT')),
    status               text not null check (status in ('ACTIVE', 'INACTIVE', 'EXPIRED')),
    customer_id          uuid not null,
    chain                text not null,
    asset                text not null check (asset in ('USDT', 'USDC')),
    deposit_address      text not null,
    settlement_mode      text not null check (settlement_mode in ('INTERNAL_BALANCE', 'NGN_PAYOUT')),
    rate_id              uuid references rate_quotes (id),
    price                bigint check (price is null or price > 0),     -- locked kobo per unit (NGN_PAYOUT)
    bank_account_name    text,
    bank_account_number  text,
    bank_code            text,
    expires_at           timestamptz,                                   -- TEMPORARY only
    created_at           timestamptz not null,
    updated_at           timestamptz not null,
    check ((type = 'TEMPORARY') = (expires_at is not null)),
    check ((settlement_mode = 'NGN_PAYOUT') = (rate_id is not null and price is not null
        and bank_account_name is not null and bank_account_number is not null and bank_code is not null))
);
create index offramps_tenant on offramps (merchant_id, environment, created_at desc, id desc);
create index offramps_address on offramps (deposit_address);

-- An offramp's crypto deposit is a CRYPTO_DEPOSIT row of deposits (007) with offramp_id set;
-- its settlement mode is the offramp's, so NGN_PAYOUT joins the modes deposits accept.
alter table deposits drop constraint deposits_settlement_mode_check;
alter table deposits add constraint deposits_settlement_mode_check
    check (settlement_mode in ('ONCHAIN', 'INTERNAL_BALANCE', 'NGN_PAYOUT'));
create index deposits_offramp on deposits (offramp_id) where offramp_id is not null;

-- An NGN payout to a bank account from an offramp's converted deposit.
create table payouts (
    id                   uuid primary key,
    merchant_id          uuid not null,
    environment          text not null check (environment in ('sandbox', 'live')),
    source_type          text not null check (source_type in ('offramp')),
    source_id            uuid not null,                                 -- the offramp
    deposit_id           uuid not null references deposits (id),
    customer_id          uuid not null,
    amount               bigint not null check (amount > 0),            -- NGN kobo
    currency             text not null check (currency = 'NGN'),
    status               text not null check (status in ('PROCESSING', 'SETTLED', 'FAILED')),
    bank_code            text not null,
    account_number       text not null,
    account_name         text not null,
    provider_reference   text,
    failure_reason       text,
    created_at           timestamptz not null,
    updated_at           timestamptz not null,
    settled_at           timestamptz,
    constraint payouts_deposit unique (deposit_id)
);
create index payouts_source on payouts (source_id, created_at desc);

create table recipients (
    id           uuid primary key,
    merchant_id  uuid not null,
    environment  text not null check (environment in ('sandbox', 'live')),
    type         text not null check (type in ('BANK_ACCOUNT', 'CRYPTO_ADDRESS', 'US_BANK_ACCOUNT', 'SWIFT_BANK_ACCOUNT')),
    customer_id  uuid,
    details      jsonb not null,                                        -- the type's object, as validated
    created_at   timestamptz not null,
    deleted_at   timestamptz,
    check (type in ('BANK_ACCOUNT', 'CRYPTO_ADDRESS') or customer_id is not null)
);
create index recipients_tenant on recipients (merchant_id, environment, created_at desc, id desc) where deleted_at is null;

create table transfers (
    id                   uuid primary key,
    merchant_id          uuid not null,
    environment          text not null check (environment in ('sandbox', 'live')),
    currency             text not null check (currency in ('NGN', 'USD')),
    amount               bigint not null check (amount > 0),            -- kobo or cents
    reference            text not null,
    rail                 text not null check (rail in ('NGN', 'US_ACH', 'US_WIRE', 'SWIFT')),
    recipient_id         uuid references recipients (id),
    destination_type     text not null check (destination_type in ('BANK_ACCOUNT', 'US_BANK_ACCOUNT', 'SWIFT_BANK_ACCOUNT')),
    destination          jsonb not null,
    customer_id          uuid,                                          -- on_behalf_of
    source_asset         text not null check (source_asset = 'USDT'),
    source_amount        bigint not null check (source_amount > 0),     -- USDT micro-units debited
    price                bigint not null check (price > 0),             -- kobo (NGN) or cents (USD) per USDT
    status               text not null check (status in ('PROCESSING', 'SETTLED', 'FAILED')),
    provider_reference   text,
    failure_reason       text,
    created_at           timestamptz not null,
    updated_at           timestamptz not null,
    settled_at           timestamptz,
    constraint transfers_reference unique (merchant_id, environment, reference)
);
create index transfers_tenant on transfers (merchant_id, environment, created_at desc, id desc);
