-- Partners' notifications (issue 19): every signed notification a partner posts to
-- POST /v1/partners/{provider}/events, kept raw for audit (headers and the exact body the
-- signature covers) and processed once by a durable job (payments/partners). The partner's
-- own event id is the idempotency key: a repeat finds its row and changes nothing.
-- A body with a forged or missing signature is never stored.
create table partner_events (
    id            uuid primary key,
    provider      text not null,                 -- paystack, sandbox-bank, sandbox-custody
    event_id      text not null,                 -- the partner's id of the notification
    environment   text not null check (environment in ('sandbox', 'live')),
    event_type    text not null,
    headers       jsonb not null,                -- as received, credentials and cookies dropped
    body          bytea not null,                -- the exact bytes the signature covers
    remote_addr   text not null,
    status        text not null check (status in ('RECEIVED', 'PROCESSED', 'IGNORED', 'REJECTED', 'MALFORMED')),
    outcome       text,                          -- what processing did, or why it could not (for people)
    deposit_id    uuid,                          -- the deposit an inbound transfer created
    received_at   timestamptz not null,
    processed_at  timestamptz,
    constraint partner_events_key unique (provider, event_id)
);
create index partner_events_open on partner_events (received_at) where status = 'RECEIVED';
comment on table partner_events is 'partners'' signed notifications, raw, for audit; processed once each (payments/partners)';
