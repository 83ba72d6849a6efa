-- Identity and access (gateway/auth): merchants, one-time codes, refresh-token families,
-- API keys, per-environment merchant KYC, and the mail outbox (payments/providers/mail).

create table merchants (
    id                     uuid primary key,
    email                  text not null,
    password_hash          text not null,
    business_name          text not null,
    first_name             text not null,
    last_name              text not null,
    phone                  text not null default '',
    website                text not null default '',
    country                text not null default '',
    address                text not null default '',
    email_verified_at      timestamptz,
    -- null: the server's default (--rate-limit-default)
    rate_limit_per_minute  integer check (rate_limit_per_minute is null or rate_limit_per_minute > 0),
    suspended              boolean not null default false,
    ip_whitelist_enabled   boolean not null default false,
    ip_whitelist_required  boolean not null default false,
    ip_whitelist           cidr[] not null default '{}',
    created_at             timestamptz not null default now(),
    updated_at             timestamptz not null default now()
);
create unique index merchants_email_key on merchants (lower(email));

-- KYC of the merchant itself, per environment: sandbox submissions are approved at once.
create table merchant_kyc (
    merchant_id   uuid not null references merchants (id) on delete cascade,
    environment   text not null check (environment in ('sandbox', 'live')),
    status        text not null check (status in ('PENDING', 'APPROVED', 'REJECTED')),
    details       jsonb not null default '{}',
    submitted_at  timestamptz not null default now(),
    reviewed_at   timestamptz,
    primary key (merchant_id, environment)
);

-- One-time codes (email verification, password reset): 6 digits, stored as an HMAC only.
create table one_time_codes (
    id           uuid primary key,
    merchant_id  uuid not null references merchants (id) on delete cascade,
    purpose      text not null check (purpose in ('verify_email', 'reset_password')),
    code_hash    bytea not null,
    attempts     integer not null default 0,
    expires_at   timestamptz not null,
    consumed_at  timestamptz,
    created_at   timestamptz not null default now()
);
create index one_time_codes_merchant on one_time_codes (merchant_id, purpose, created_at desc);

-- Refresh tokens: opaque, stored as SHA-256, rotated on every use. A family is one login;
-- presenting a rotated token again revokes the whole family.
create table refresh_tokens (
    id           uuid primary key,
    family_id    uuid not null,
    merchant_id  uuid not null references merchants (id) on delete cascade,
    token_hash   bytea not null unique,
    expires_at   timestamptz not null,
    rotated_at   timestamptz,
    revoked_at   timestamptz,
    created_at   timestamptz not null default now()
);
create index refresh_tokens_family on refresh_tokens (family_id);
create index refresh_tokens_merchant on refresh_tokens (merchant_id) where revoked_at is null;

-- API keys: only the SHA-256 of the key and its first 20 characters are kept.
create table api_keys (
    id            uuid primary key,
    merchant_id   uuid not null references merchants (id) on delete cascade,
    environment   text not null check (environment in ('sandbox', 'live')),
    name          text not null check (char_length(name) between 1 and 100),
    key_prefix    text not null,
    key_hash      bytea not null unique,
    is_active     boolean not null default true,
    revoked_at    timestamptz,
    last_used_at  timestamptz,
    created_at    timestamptz not null default now()
);
create index api_keys_merchant on api_keys (merchant_id, environment, created_at desc);

-- Mail kept when no SMTP server is configured, so a local user can read it (svc mail outbox).
create table mail_outbox (
    id          uuid primary key,
    to_addr     text not null,
    subject     text not null,
    body        text not null,
    created_at  timestamptz not null default now()
);
create index mail_outbox_to on mail_outbox (lower(to_addr), created_at desc);
