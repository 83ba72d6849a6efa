-- Commerce (issue 10): products, invoices with their line items and per-tenant numbering,
-- checkout links and the payments made through them. Amounts are integers in the currency's
-- minor unit (NGN and USD: 2 places). A percentage rate is in units of 0.0001 percent
-- (7.5% = 75000); a fixed tax or discount is an amount in minor units.

create table products (
    id              uuid primary key,
    merchant_id     uuid not null references merchants (id) on delete cascade,
    environment     text not null check (environment in ('sandbox', 'live')),
    name            text not null check (char_length(name) between 1 and 255),
    description     text check (description is null or char_length(description) <= 2000),
    type            text not null check (type in ('physical', 'digital', 'service')),
    price           bigint not null check (price > 0),
    currency        text not null check (currency in ('NGN', 'USD')),
    status          text not null check (status in ('active', 'inactive', 'archived')),
    stock_quantity  bigint check (stock_quantity is null or stock_quantity >= 0), -- null: unlimited
    image_urls      text[] not null default '{}' check (cardinality(image_urls) <= 10),
    tax_type        text not null check (tax_type in ('none', 'percentage', 'fixed')),
    tax_rate        bigint not null default 0 check (tax_rate >= 0),
    discount_type   text not null check (discount_type in ('none', 'percentage', 'fixed')),
    discount        bigint not null default 0 check (discount >= 0),
    created_at      timestamptz not null,
    updated_at      timestamptz not null
);
create index products_tenant on products (merchant_id, environment, created_at desc, id desc);

-- The last invoice number given per tenant. The creating transaction increments it with
-- the row locked, so numbers are consecutive and a rolled-back creation frees its number.
create table invoice_counters (
    merchant_id  uuid not null references merchants (id) on delete cascade,
    environment  text not null check (environment in ('sandbox', 'live')),
    last_number  bigint not null,
    primary key (merchant_id, environment)
);

create table invoices (
    id              uuid primary key,
    merchant_id     uuid not null references merchants (id) on delete cascade,
    environment     text not null check (environment in ('sandbox', 'live')),
    number          bigint not null,
    title           text not null check (char_length(title) between 1 and 255),
    customer_name   text not null check (char_length(customer_name) between 1 and 255),
    customer_email  text not null,
    customer_id     uuid,
    currency        text not null check (currency in ('NGN', 'USD')),
    status          text not null check (status in ('draft', 'pending', 'paid', 'overdue', 'canceled')),
    total_amount    bigint not null default 0 check (total_amount >= 0),
    issue_date      date not null,
    due_date        date,
    notes           text check (notes is null or char_length(notes) <= 2000),
    paid_at         timestamptz,
    sent_at         timestamptz,
    created_at      timestamptz not null,
    updated_at      timestamptz not null,
    constraint invoices_number_key unique (merchant_id, environment, number),
    check ((status = 'paid') = (paid_at is not null))
);
create index invoices_tenant on invoices (merchant_id, environment, created_at desc, id desc);

-- Line items of invoices and of one-time checkout links share one shape.
create table invoice_line_items (
    id               uuid primary key,
    invoice_id       uuid not null references invoices (id) on delete cascade,
    position         integer not null,
    description      text not null check (char_length(description) between 1 and 500),
    quantity         bigint not null check (quantity > 0),
    unit_price       bigint not null check (unit_price >= 0),
    product_id       uuid references products (id) on delete set null,
    tax_type         text not null check (tax_type in ('none', 'percentage', 'fixed')),
    tax_rate         bigint not null default 0,
    discount_type    text not null check (discount_type in ('none', 'percentage', 'fixed')),
    discount         bigint not null default 0,
    subtotal         bigint not null,
    discount_amount  bigint not null,
    tax_amount       bigint not null,
    total            bigint not null,
    created_at       timestamptz not null
);
create index invoice_line_items_invoice on invoice_line_items (invoice_id, position);

create table checkout_links (
    id               uuid primary key,
    merchant_id      uuid not null references merchants (id) on delete cascade,
    environment      text not null check (environment in ('sandbox', 'live')),
    slug             text not null check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and char_length(slug) between 3 and 100),
    title            text not null check (char_length(title) between 1 and 255),
    description      text check (description is null or char_length(description) <= 2000),
    type             text not null check (type in ('one_time', 'invoice')),
    amount           bigint check (amount is null or amount > 0),  -- one_time links; null for invoice links
    currency         text not null check (currency in ('NGN', 'USD')),
    status           text not null check (status in ('active', 'inactive')),
    redirect_url     text,
    success_message  text check (success_message is null or char_length(success_message) <= 500),
    invoice_id       uuid references invoices (id) on delete set null,
    payments_count   integer not null default 0,
    created_at       timestamptz not null,
    updated_at       timestamptz not null,
    deleted_at       timestamptz,
    check ((type = 'one_time') = (amount is not null))
);
-- Slugs are the public address: unique across every tenant, and never reused (a deleted
-- link's address answers "removed" rather than someone else's page).
create unique index checkout_links_slug_key on checkout_links (slug);
create index checkout_links_tenant on checkout_links (merchant_id, environment, created_at desc, id desc) where deleted_at is null;
create index checkout_links_invoice on checkout_links (invoice_id) where invoice_id is not null;

create table checkout_link_items (
    id               uuid primary key,
    link_id          uuid not null references checkout_links (id) on delete cascade,
    position         integer not null,
    description      text not null,
    quantity         bigint not null check (quantity > 0),
    unit_price       bigint not null check (unit_price >= 0),
    product_id       uuid references products (id) on delete set null,
    tax_type         text not null,
    tax_rate         bigint not null default 0,
    discount_type    text not null,
    discount         bigint not null default 0,
    subtotal         bigint not null,
    discount_amount  bigint not null,
    tax_amount       bigint not null,
    total            bigint not null,
    created_at       timestamptz not null
);
create index checkout_link_items_link on checkout_link_items (link_id, position);

-- One attempt to pay a link: a TEMPORARY onramp created for the amount. It completes when a
-- deposit into that onramp settles (in the deposit's transaction).
create table checkout_payments (
    id              uuid primary key,
    link_id         uuid not null references checkout_links (id) on delete cascade,
    merchant_id     uuid not null,
    environment     text not null check (environment in ('sandbox', 'live')),
    invoice_id      uuid,
    amount          bigint not null,       -- in the link's currency
    currency        text not null,
    onramp_id       text not null,
    amount_ngn      bigint not null,       -- what the payer transfers (kobo)
    rate            text,                  -- NGN per unit of currency, locked (USD links)
    account_number  text not null,
    bank_name       text not null,
    account_name    text not null,
    expires_at      timestamptz not null,
    status          text not null check (status in ('awaiting', 'completed', 'failed')),
    deposit_id      text,
    failure_reason  text,
    completed_at    timestamptz,
    created_at      timestamptz not null
);
create unique index checkout_payments_onramp on checkout_payments (onramp_id);
create index checkout_payments_link on checkout_payments (link_id, created_at desc);
