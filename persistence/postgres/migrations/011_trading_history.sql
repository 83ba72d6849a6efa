-- Trading history written by the projector (issue 21).
--
-- Fills and cancels of resting orders UPDATE their rows. With no indexed column changed
-- and free room on the page, PostgreSQL updates a row in place (a heap-only tuple): no
-- index entry is written and the old version is pruned without VACUUM. The index on
-- (merchant, status) made every status change a full update of every index, so it goes;
-- a status filter walks the merchant's newest-first index instead (open orders are also
-- in the engine's memory).
drop index if exists trading_orders_merchant_status;
alter table trading_orders set (fillfactor = 80);

-- Lookups by client order id (GET/DELETE /v1/trading/orders/by-client-id/{id}) once the
-- engine has forgotten the order. Partial: orders without one cost nothing.
create index trading_orders_client on trading_orders (environment, merchant_id, client_order_id, created_at desc)
    where client_order_id is not null;
