-- BVN digests are HMAC-SHA256 under a server secret from now on (issue 15; svcd
-- --bvn-hmac-key). A bare SHA-256 of an 11-digit BVN is reversed by trying every number, so
-- the digests already stored are as sensitive as the BVNs themselves and cannot be re-keyed
-- without them: they are dropped. Nothing reads them (the last 4 digits stay for display);
-- a customer who verifies again gets a keyed digest.
update kyc_verifications set bvn_hash = null where bvn_hash is not null;
comment on column kyc_verifications.bvn_hash is 'HMAC-SHA256 of the BVN under the server BVN key; never a bare hash';
