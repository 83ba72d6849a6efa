-- The engine lease expires on the database's clock (issue 29). The advisory lock of 014
-- is no longer used: a lock lives as long as its session, and a holder cut off from the
-- database by a network partition keeps its session (and the lock) until TCP gives up,
-- hours later, so no standby could take over. Now the holder renews expires_at every
-- TTL/3 and a contender takes the lease once expires_at has passed on this server's clock;
-- the holder stops acknowledging a margin before that on its own monotonic clock
-- (package persistence/lease, docs/cluster.md "The guarantee").
alter table engine_leases add column expires_at timestamptz not null default now();
update engine_leases set expires_at = coalesce(released_at, now());

-- Every term, for operators and for the partition checker (no two terms acknowledge at
-- once): one row per acquisition, never updated but for the end of a clean release.
create table engine_lease_terms (
    environment text not null check (environment in ('sandbox', 'live')),
    epoch       bigint not null check (epoch > 0),
    holder      text not null,
    acquired_at timestamptz not null,
    primary key (environment, epoch)
);
comment on table engine_leases is 'epoch, holder and expiry (on this server''s clock) of each environment''s engine lease';
