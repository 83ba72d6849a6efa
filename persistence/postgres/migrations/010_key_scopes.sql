-- API key scopes (issue 15): what a key may do. Every existing key keeps all four, so
-- nothing that worked stops working; a key created with fewer is refused (403
-- INSUFFICIENT_SCOPE) on routes outside them.
alter table api_keys add column scopes text[] not null default '{read,trade,payments,withdraw}'
    check (scopes <@ array['read', 'trade', 'payments', 'withdraw']::text[] and cardinality(scopes) > 0);
