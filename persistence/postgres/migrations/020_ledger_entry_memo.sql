-- Issue 22: the deposit steps of a batch post the owners' side in one ledger transaction per
-- merchant (payments/deposits batch.go). Each of its entries keeps the business step it
-- belongs to (the deposit's own reference, kind and description), so a customer's ledger
-- still shows "Deposit ... settled" per deposit, not the batch. Null: the transaction's.
alter table ledger_entries add column reference text;
alter table ledger_entries add column kind text;
alter table ledger_entries add column description text;
