-- Housekeeping (issue 15): the periodic purge blanks outbox bodies after 24 hours and
-- deletes outbox rows after 30 days, by creation time (rate_quotes and idempotency_keys
-- already have their expiry indexes).
create index mail_outbox_created on mail_outbox (created_at);
