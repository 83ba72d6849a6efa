-- Issue 27: the operator funds the live treasury's and the live market maker's engine
-- accounts (`svc treasury fund`): each row is one funding, credited to the account's
-- engine balance by the process that runs the engine (its id is the engine transfer id, so
-- a credit repeated after a restart is applied once). Sandbox rows (top-ups with sandbox
-- money) are the treasury's, as before.
alter table treasury_funding add column account text not null default 'treasury'
    check (account in ('treasury', 'market-maker'));
-- The operator's reference: the same command run twice funds once.
alter table treasury_funding add column reference text;
create unique index treasury_funding_reference on treasury_funding (environment, reference) where reference is not null;
