-- Issue 19 item 4: a hosted KYC flow keeps the merchant's redirect_url, so the sandbox
-- provider's page can send the customer back once the outcome is in (a live provider gets
-- it with the session).
alter table kyc_verifications add column redirect_url text;
