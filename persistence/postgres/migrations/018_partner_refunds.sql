-- 018: money that arrived through a bank partner for no active account (an unknown virtual
-- account, or an onramp no longer ACTIVE) is returned to its sender by a durable job
-- (payments/partners): one refund per partner notification, kept for the operator.
create table partner_refunds (
    id                  uuid primary key,
    partner_event_id    uuid not null references partner_events (id),
    provider            text not null,                 -- paystack, sandbox-bank
    environment         text not null check (environment in ('sandbox', 'live')),
    merchant_id         uuid,                          -- the inactive onramp's merchant; null for an unknown account
    onramp_id           uuid,
    bank_code           text not null,
    account_number      text not null,                 -- the account the money was sent to
    provider_reference  text not null,                 -- the partner's reference of the inbound charge
    currency            text not null check (currency = 'NGN'),
    amount              bigint not null check (amount > 0),  -- kobo, the whole amount received
    sender_name         text,
    reason              text not null,                 -- why it is returned (for the sender and the operator)
    status              text not null check (status in ('PENDING', 'SUBMITTED', 'REFUNDED', 'FAILED')),
    provider_refund_id  text,                          -- the partner's id of the refund
    failure_reason      text,
    last_error          text,                          -- the last attempt's error (the job retries)
    attempts            integer not null default 0,
    created_at          timestamptz not null,
    updated_at          timestamptz not null,
    refunded_at         timestamptz,
    constraint partner_refunds_event unique (partner_event_id)
);
create index partner_refunds_open on partner_refunds (created_at) where status in ('PENDING', 'SUBMITTED');
comment on table partner_refunds is 'money returned to senders through the bank partner (payments/partners): PENDING -> SUBMITTED -> REFUNDED, or FAILED for the operator';
