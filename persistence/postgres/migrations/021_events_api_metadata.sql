-- Issue 30: the merchant's events API, webhook secret rotation with overlap, and metadata.

-- GET /v1/events filters by type within a tenant, newest first.
create index events_tenant_type on events (merchant_id, environment, type, created_at desc);

-- Rotation with overlap: the secret replaced by the last rotation stays valid (deliveries are
-- signed with both) until previous_secret_expires_at.
alter table webhook_endpoints
    add column previous_secret_enc        bytea,
    add column previous_secret_expires_at timestamptz;

-- Metadata: the merchant's own string keys and values (at most 50 keys, keys up to 40
-- characters, values up to 500), returned on the object and in its webhooks. The GIN
-- indexes (jsonb_path_ops) serve the lists' metadata[key]=value filter (containment, @>).
alter table customers      add column metadata jsonb not null default '{}';
alter table onramps        add column metadata jsonb not null default '{}';
alter table offramps       add column metadata jsonb not null default '{}';
alter table withdrawals    add column metadata jsonb not null default '{}';
alter table transfers      add column metadata jsonb not null default '{}';
alter table recipients     add column metadata jsonb not null default '{}';
alter table invoices       add column metadata jsonb not null default '{}';
alter table products       add column metadata jsonb not null default '{}';
alter table checkout_links add column metadata jsonb not null default '{}';
alter table trading_orders add column metadata jsonb not null default '{}';
create index customers_metadata      on customers      using gin (metadata jsonb_path_ops);
create index onramps_metadata        on onramps        using gin (metadata jsonb_path_ops);
create index offramps_metadata       on offramps       using gin (metadata jsonb_path_ops);
create index withdrawals_metadata    on withdrawals    using gin (metadata jsonb_path_ops);
create index transfers_metadata      on transfers      using gin (metadata jsonb_path_ops);
create index recipients_metadata     on recipients     using gin (metadata jsonb_path_ops);
create index invoices_metadata       on invoices       using gin (metadata jsonb_path_ops);
create index products_metadata       on products       using gin (metadata jsonb_path_ops);
create index checkout_links_metadata on checkout_links using gin (metadata jsonb_path_ops);
