-- Events and webhooks (issue 7). An event is a row written in the same transaction as the
-- change it reports; each delivery to an endpoint is a river job enqueued in that transaction.
-- Every table carries merchant_id and environment, and every query filters by both.
create table events (
    id          uuid primary key,
    merchant_id uuid not null,
    environment text not null check (environment in ('sandbox', 'live')),
    type        text not null,
    data        jsonb not null default '{}',
    created_at  timestamptz not null default now()
);
create index events_tenant on events (merchant_id, environment, created_at desc);

-- Endpoints are soft-deleted (deleted_at) so logs and pending jobs can still name them.
-- events = '{}' subscribes to every event. secret_enc is AES-256-GCM of the whsec_ secret
-- (version byte, nonce, ciphertext; the endpoint id is the additional data).
create table webhook_endpoints (
    id              uuid primary key,
    merchant_id     uuid not null,
    environment     text not null check (environment in ('sandbox', 'live')),
    url             text not null,
    events          text[] not null default '{}',
    is_active       boolean not null default true,
    disabled_reason text,
    secret_enc      bytea not null,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    deleted_at      timestamptz
);
create index webhook_endpoints_tenant on webhook_endpoints (merchant_id, environment, created_at)
    where deleted_at is null;

-- One row per delivery attempt (and per test send). status_code is null when no HTTP
-- response came back (refused, timeout, TLS failure).
create table webhook_logs (
    id           uuid primary key,
    merchant_id  uuid not null,
    environment  text not null check (environment in ('sandbox', 'live')),
    endpoint_id  uuid not null references webhook_endpoints (id),
    endpoint_url text not null,
    event_id     uuid,
    event        text not null,
    payload      jsonb not null,
    status_code  integer,
    success      boolean not null,
    error        text,
    duration_ms  integer not null,
    attempt      integer not null,
    test         boolean not null default false,
    created_at   timestamptz not null default now()
);
create index webhook_logs_tenant on webhook_logs (merchant_id, environment, created_at desc, id desc);
create index webhook_logs_endpoint on webhook_logs (endpoint_id, created_at desc);
