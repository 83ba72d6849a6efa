-- Issue 30: metadata on trading orders. The column exists since 021 ('{}' for none); the
-- orders list's metadata[key]=value filter (containment, @>) is served by this GIN index.
-- Partial: most orders carry none, and those cost the index nothing.
create index trading_orders_metadata on trading_orders using gin (metadata jsonb_path_ops)
    where metadata <> '{}'::jsonb;
