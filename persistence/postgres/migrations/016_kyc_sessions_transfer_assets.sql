-- Issue 19 items 4 and 5.
--
-- Hosted KYC sessions complete: the provider's callback (the sandbox page's approve or
-- reject) finds the verification by its session reference, once per environment, and
-- stamps when it completed.
alter table kyc_verifications add column completed_at timestamptz;
create unique index kyc_verifications_session on kyc_verifications (environment, provider_reference)
    where kind = 'hosted' and provider_reference is not null;

-- Every asset moves between the payments and trading balances, not only USDT.
alter table merchant_balance_transfers drop constraint merchant_balance_transfers_asset_check;
alter table merchant_balance_transfers add constraint merchant_balance_transfers_asset_check
    check (asset in ('NGN', 'USDT', 'USDC', 'USD'));
