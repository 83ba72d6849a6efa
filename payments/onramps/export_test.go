package onramps

// ExpireDueSQL is the sweep's statement, for the test that reads its plan.
const ExpireDueSQL = expireDue
