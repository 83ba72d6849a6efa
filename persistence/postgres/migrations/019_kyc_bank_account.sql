-- Issue 19: live KYC through the API. A tier 1 hosted verification started with a bank
-- account (Paystack customer identification checks the BVN against an account in the
-- customer's name) keeps, for audit, which bank and the account number's last 4 digits only:
-- the clear number goes to the KYC provider and is never stored (as the BVN: bvn_last4 and
-- bvn_hash).
alter table kyc_verifications add column bank_code text;
alter table kyc_verifications add column account_last4 text;
