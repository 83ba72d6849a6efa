-- Read model of the exchange, written only by the projector from the journal
-- (persistence/projection). The engine's memory is the truth; these tables are history.

create table trading_orders (
    environment      text not null check (environment in ('sandbox', 'live')),
    id               uuid not null,
    merchant_id      uuid not null,
    symbol           text not null,
    side             text not null check (side in ('buy', 'sell')),
    type             text not null check (type in ('limit', 'market')),
    time_in_force    text not null,
    post_only        boolean not null default false,
    client_order_id  text,
    price            bigint not null default 0,        -- price units of the pair (0 for market)
    quantity         bigint not null,                  -- lots of the pair
    quote_quantity   bigint not null default 0,        -- quote units, market buy by amount
    filled           bigint not null default 0,
    status           text not null check (status in ('OPEN', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED')),
    cancel_reason    text,
    created_at       timestamptz not null,
    updated_at       timestamptz not null,
    journal_offset   bigint not null,
    primary key (environment, id)
);
create index trading_orders_merchant on trading_orders (environment, merchant_id, created_at desc, id desc);
create index trading_orders_merchant_status on trading_orders (environment, merchant_id, status, created_at desc);

-- One row per side of each fill: the taker's and the maker's view.
create table trading_trades (
    environment   text not null,
    id            uuid not null,          -- the trade (shared by both sides)
    liquidity     text not null check (liquidity in ('maker', 'taker')),
    merchant_id   uuid not null,
    order_id      uuid not null,
    symbol        text not null,
    side          text not null check (side in ('buy', 'sell')),
    price         bigint not null,
    quantity      bigint not null,
    notional      bigint not null,        -- quote units
    seq           bigint not null,        -- the symbol's event sequence
    created_at    timestamptz not null,
    primary key (environment, id, liquidity)
);
create index trading_trades_merchant on trading_trades (environment, merchant_id, created_at desc, id desc);
create index trading_trades_order on trading_trades (environment, order_id);
create index trading_trades_symbol on trading_trades (environment, symbol, created_at);

-- How far each environment's projector has applied its journal; updated in the same
-- transaction as the rows, so a replay after a crash neither skips nor repeats.
create table projection_positions (
    name        text primary key,
    "offset"    bigint not null,
    updated_at  timestamptz not null default now()
);
