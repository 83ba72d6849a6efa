-- Operator actions (svc CLI): who did what, when, why. Append-only.
create table audit_log (
    id          uuid primary key,
    actor       text not null,
    action      text not null,
    subject     text not null,
    reason      text not null default '',
    detail      jsonb not null default '{}',
    created_at  timestamptz not null default now()
);
create index audit_log_subject on audit_log (subject, created_at);
