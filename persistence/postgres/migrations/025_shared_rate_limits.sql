-- One rate limit across gateways (issue 29): each merchant's requests per window, counted in
-- one row that every gateway reserves allowances from (package gateway/ratelimit, Shared).
-- A gateway takes a chunk of the window's limit at a time and spends it from memory, so a
-- request costs no round trip here; used never exceeds the limit. Unlogged: a crash loses
-- at most the current minute's counts, which only lets that minute start afresh.
create unlogged table rate_limit_windows (
    key          text not null,
    window_start timestamptz not null,
    used         bigint not null check (used >= 0),
    last_grant   bigint not null, -- what the latest reservation got (its RETURNING)
    primary key (key, window_start)
);
comment on table rate_limit_windows is 'per-window request counts shared by every gateway (gateway/ratelimit.Shared); rows older than a few windows are deleted';
