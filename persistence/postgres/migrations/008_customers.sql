-- Customers and KYC (issue 8). Customers are per merchant and environment; the email is
-- unique within them (stored lower-cased). A customer's NGN virtual accounts are onramps
-- (007); balances and the customer ledger are ledger accounts (006).
create table customers (
    id           uuid primary key,
    merchant_id  uuid not null,
    environment  text not null check (environment in ('sandbox', 'live')),
    email        text not null,
    first_name   text not null check (length(first_name) between 1 and 400),
    last_name    text not null check (length(last_name) between 1 and 400),
    kyc_tier     text not null default 'TIER_0' check (kyc_tier in ('TIER_0', 'TIER_1', 'TIER_2')),
    created_at   timestamptz not null,
    updated_at   timestamptz not null,
    constraint customers_email unique (merchant_id, environment, email)
);
create index customers_tenant on customers (merchant_id, environment, id);

-- Every verification submitted or started. The BVN is kept only as its last 4 digits and a
-- SHA-256 hash; the tier 2 profile as submitted (it is the merchant's KYC record).
create table kyc_verifications (
    id                 uuid primary key,
    merchant_id        uuid not null,
    environment        text not null check (environment in ('sandbox', 'live')),
    customer_id        uuid not null references customers (id),
    tier               integer not null check (tier in (1, 2)),
    kind               text not null check (kind in ('submission', 'hosted')),
    status             text not null check (status in ('PENDING', 'VERIFIED', 'REJECTED')),
    reason             text,
    bvn_last4          text,
    bvn_hash           bytea,
    profile            jsonb,
    provider_reference text,
    verification_url   text,
    expires_at         timestamptz,
    created_at         timestamptz not null
);
create index kyc_verifications_customer on kyc_verifications (customer_id, created_at desc);

create table customer_wallets (
    id           uuid primary key,
    merchant_id  uuid not null,
    environment  text not null check (environment in ('sandbox', 'live')),
    customer_id  uuid not null references customers (id),
    chain        text not null,
    asset        text not null check (asset in ('USDC', 'USDT')),
    address      text not null,
    label        text,
    created_at   timestamptz not null,
    constraint customer_wallets_unique unique (customer_id, chain, asset, address)
);
create index customer_wallets_customer on customer_wallets (customer_id, created_at);

-- A crypto funding request: where the customer sends an asset on a chain to fund their
-- balance (a deposit address from the custody provider, stable per customer, chain, asset).
create table crypto_funding_requests (
    id              uuid primary key,
    merchant_id     uuid not null,
    environment     text not null check (environment in ('sandbox', 'live')),
    customer_id     uuid not null references customers (id),
    chain           text not null,
    asset           text not null check (asset in ('USDC', 'USDT')),
    amount          bigint check (amount is null or amount > 0),
    deposit_address text not null,
    status          text not null check (status in ('PENDING', 'COMPLETED', 'EXPIRED')),
    expires_at      timestamptz not null,
    created_at      timestamptz not null
);
create index crypto_funding_requests_customer on crypto_funding_requests (customer_id, created_at desc);
