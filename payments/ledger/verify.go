package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Violation is one broken invariant found by Verify.
type Violation struct {
	Check   string // which invariant (see Verify)
	Subject string // "transaction <id>", "account <id>", "entry <id>"
	Detail  string
}

func (v Violation) String() string { return v.Check + ": " + v.Subject + ": " + v.Detail }

// Verify checks every invariant of the ledger in one consistent snapshot (a read-only,
// repeatable-read transaction, so it can run beside live traffic) and returns every
// violation found; none means the books are sound. The checks:
//
//   - zero_sum: each transaction's entries sum to zero per asset;
//   - has_entries: each transaction has at least two entries;
//   - entry_asset: each entry is in its account's asset;
//   - entry_tenant: each entry's account belongs to its transaction's merchant and environment;
//   - balance_sum: each account's balance equals the sum of its entries;
//   - sequence: each account's entries are numbered 1..last_seq without gaps, and each entry's
//     balance_after is the running sum up to it;
//   - non_negative: no account below zero unless it allows negative balances;
//   - negative_flag: only system and receivable accounts allow negative balances.
func Verify(ctx context.Context, pool *pgxpool.Pool) ([]Violation, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("ledger verify: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))

	checks := []struct {
		name, subject, sql string
	}{
		{"zero_sum", "transaction", `select transaction_id::text, format('entries in %s sum to %s (minor units)', asset, sum(amount))
			from ledger_entries group by transaction_id, asset having sum(amount) <> 0`},
		{"has_entries", "transaction", `select t.id::text, format('%s entries', count(e.id))
			from ledger_transactions t left join ledger_entries e on e.transaction_id = t.id
			group by t.id having count(e.id) < 2`},
		{"entry_asset", "entry", `select e.id::text, format('entry in %s on an account in %s', e.asset, a.asset)
			from ledger_entries e join ledger_accounts a on a.id = e.account_id where e.asset <> a.asset`},
		{"entry_tenant", "entry", `select e.id::text, format('account of merchant %s/%s in a transaction of %s/%s',
				a.merchant_id, a.environment, t.merchant_id, t.environment)
			from ledger_entries e join ledger_accounts a on a.id = e.account_id
			join ledger_transactions t on t.id = e.transaction_id
			where a.merchant_id <> t.merchant_id or a.environment <> t.environment`},
		{"balance_sum", "account", `select a.id::text, format('balance %s, entries sum to %s', a.balance, coalesce(sum(e.amount), 0))
			from ledger_accounts a left join ledger_entries e on e.account_id = a.id
			group by a.id having a.balance <> coalesce(sum(e.amount), 0)`},
		{"sequence", "account", `select a.id::text, format('last_seq %s, %s entries numbered %s..%s',
				a.last_seq, count(e.id), coalesce(min(e.seq), 0), coalesce(max(e.seq), 0))
			from ledger_accounts a left join ledger_entries e on e.account_id = a.id
			group by a.id
			having a.last_seq <> count(e.id) or coalesce(min(e.seq), 1) <> 1 or coalesce(max(e.seq), 0) <> a.last_seq`},
		{"sequence", "entry", `select id::text, format('balance_after %s, running sum %s', balance_after, running)
			from (select id, balance_after, sum(amount) over (partition by account_id order by seq) as running
			      from ledger_entries) s
			where balance_after <> running`},
		{"non_negative", "account", `select id::text, format('%s %s %s balance %s', owner_type, purpose, asset, balance)
			from ledger_accounts where balance < 0 and not allow_negative`},
		{"negative_flag", "account", `select id::text, format('%s account %s allows negative balances', owner_type, purpose)
			from ledger_accounts where allow_negative and owner_type <> 'system' and purpose not like 'receivable%'`},
	}
	var out []Violation
	for _, c := range checks {
		rows, err := tx.Query(ctx, c.sql)
		if err != nil {
			return nil, fmt.Errorf("ledger verify %s: %w", c.name, err)
		}
		for rows.Next() {
			var id, detail string
			if err := rows.Scan(&id, &detail); err != nil {
				rows.Close()
				return nil, fmt.Errorf("ledger verify %s: %w", c.name, err)
			}
			out = append(out, Violation{Check: c.name, Subject: c.subject + " " + id, Detail: detail})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("ledger verify %s: %w", c.name, err)
		}
	}
	return out, nil
}

// Stats counts what Verify looked at (for a report).
type Stats struct {
	Accounts, Transactions, Entries int64
}

// Count returns the number of accounts, transactions and entries.
func Count(ctx context.Context, pool *pgxpool.Pool) (Stats, error) {
	var s Stats
	err := pool.QueryRow(ctx, `select (select count(*) from ledger_accounts), (select count(*) from ledger_transactions),
		(select count(*) from ledger_entries)`).Scan(&s.Accounts, &s.Transactions, &s.Entries)
	return s, err
}
