-- The treasury (issue 27): each environment's conversion desk executes on its own book what
-- the ledger's system:fx accounts promise. Written by payments/treasury only.

-- One row per conversion posted against system:fx, written in the same transaction as the
-- posting: qty is what the treasury must buy (+) or sell (-) on the book, in minor units of
-- asset (minus the change of system:fx in asset); ngn is the change of system:fx in NGN
-- (kobo). reference is the posting's business step, so a replayed step records nothing twice.
create table treasury_intents (
    id           bigserial primary key,
    environment  text not null check (environment in ('sandbox', 'live')),
    asset        text not null check (asset in ('NGN', 'USD', 'USDT', 'USDC')),
    qty          bigint not null,
    ngn          bigint not null,
    reference    text not null,
    created_at   timestamptz not null default now(),
    constraint treasury_intents_reference unique (environment, reference)
);
create index treasury_intents_env_asset on treasury_intents (environment, asset);

-- One row per hedge order, written before the order is submitted (status placing), so a
-- restart finds it and settles it by its id instead of placing a second one. id is the
-- engine's order id; the client order id is 'treasury-' || id. qty is signed like an
-- intent's (+ buy, - sell), minor units of asset; filled likewise once done; ngn is the
-- change of the treasury's NGN balance in the engine's units (1e-4 NGN).
create table treasury_orders (
    id            uuid primary key,
    environment   text not null check (environment in ('sandbox', 'live')),
    asset         text not null,
    qty           bigint not null,
    limit_price   bigint not null,
    status        text not null check (status in ('placing', 'done')),
    filled        bigint not null default 0,
    ngn           bigint not null default 0,
    base_before   bigint not null,
    ngn_before    bigint not null,
    outcome       text not null default '',
    created_at    timestamptz not null default now(),
    done_at       timestamptz
);
create index treasury_orders_env on treasury_orders (environment, asset, status);

-- Credits into the treasury's engine account (its inventory), by engine transfer id: a
-- restart re-submits each and the engine applies it once.
create table treasury_funding (
    id           uuid primary key,
    environment  text not null check (environment in ('sandbox', 'live')),
    asset        text not null,
    amount       bigint not null check (amount > 0), -- engine units of asset
    created_at   timestamptz not null default now()
);

-- The limits each environment's treasury runs with, written at start, for `svc treasury`.
create table treasury_limits (
    environment  text not null,
    asset        text not null,
    open_limit   bigint not null, -- minor units of asset
    updated_at   timestamptz not null default now(),
    primary key (environment, asset)
);

-- A quote the band cannot price comes from the treasury (source 'treasury').
alter table rate_quotes drop constraint rate_quotes_source_check,
    add constraint rate_quotes_source_check check (source in ('orderbook', 'treasury', 'reference'));

-- What system:fx held before the treasury existed is its opening position: hedged like any
-- conversion, so the ledger and the treasury reconcile from the first day.
insert into treasury_intents (environment, asset, qty, ngn, reference)
select environment, asset,
       case when asset = 'NGN' then 0 else -sum(balance) end,
       case when asset = 'NGN' then sum(balance) else 0 end,
       'opening:' || asset
from ledger_accounts
where owner_type = 'system' and purpose = 'fx'
group by environment, asset
having sum(balance) <> 0;
