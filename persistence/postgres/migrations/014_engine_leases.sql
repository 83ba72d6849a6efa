-- One engine writes each environment's journal (issue 18). The engine holds a session-level
-- advisory lock on a dedicated connection (package persistence/lease); this table keeps the
-- epoch, raised on every acquisition and stamped on every journal record so readers drop
-- what a deposed engine still wrote, and who holds it, for the message a contender prints.
create table engine_leases (
    environment text primary key check (environment in ('sandbox', 'live')),
    epoch       bigint not null check (epoch > 0),
    holder      text not null,
    acquired_at timestamptz not null default now(),
    -- set by a clean release: the next holder need not wait out the old one's lease
    released_at timestamptz
);
comment on table engine_leases is 'epoch and holder of each environment''s engine lease (the lock itself is a PostgreSQL advisory lock)';
