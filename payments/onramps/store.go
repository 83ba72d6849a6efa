package onramps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/money"
	"svc/persistence/postgres"
)

const columns = `id, merchant_id, environment, type, status, customer_id, bank_code, account_number, bank_name,
	account_name, amount, price, rate_id, settlement_mode, settlement_asset, settlement_chain, destination_address,
	reference, expires_at, created_at, updated_at, metadata`

// InsertTx writes onramp o in the caller's transaction; false when its account number is
// already taken at its bank. This package is the only writer of the onramps table (issue
// 32): payments/virtualaccounts issues its PERMANENT accounts through InsertTx.
func InsertTx(ctx context.Context, tx pgx.Tx, o Onramp) (bool, error) { return insert(ctx, tx, o) }

// insert writes o; false when its account number is already taken at its bank.
func insert(ctx context.Context, tx pgx.Tx, o Onramp) (bool, error) {
	var amount, price *int64
	if o.Amount != nil {
		amount = &o.Amount.Minor
	}
	if o.Price > 0 {
		price = &o.Price
	}
	tag, err := tx.Exec(ctx, `insert into onramps (`+columns+`)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
		on conflict on constraint onramps_account_key do nothing`,
		o.ID, o.Tenant.MerchantID, o.Tenant.Environment, o.Type, o.Status, o.CustomerID, o.BankCode, o.AccountNumber,
		o.BankName, o.AccountName, amount, price, o.RateID, o.Settlement.Mode, string(o.Settlement.Asset),
		postgres.NullIfEmpty(o.Settlement.Chain), postgres.NullIfEmpty(o.Settlement.DestinationAddress), postgres.NullIfEmpty(o.Reference),
		o.ExpiresAt, o.CreatedAt, o.UpdatedAt, o.Metadata.OrEmpty())
	if err != nil {
		return false, fmt.Errorf("insert onramp: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func scan(row pgx.Row) (Onramp, error) {
	var (
		o                  Onramp
		amount, price      *int64
		asset              string
		chain, dest, refer *string
	)
	err := row.Scan(&o.ID, &o.Tenant.MerchantID, &o.Tenant.Environment, &o.Type, &o.Status, &o.CustomerID, &o.BankCode,
		&o.AccountNumber, &o.BankName, &o.AccountName, &amount, &price, &o.RateID, &o.Settlement.Mode, &asset,
		&chain, &dest, &refer, &o.ExpiresAt, &o.CreatedAt, &o.UpdatedAt, &o.Metadata)
	if errors.Is(err, pgx.ErrNoRows) {
		return Onramp{}, ErrNotFound
	}
	if err != nil {
		return Onramp{}, fmt.Errorf("read onramp: %w", err)
	}
	o.Settlement.Asset = money.Asset(asset)
	if amount != nil {
		a := money.New(money.NGN, *amount)
		o.Amount = &a
	}
	o.Price, o.Reference = postgres.OrZero(price), postgres.OrZero(refer)
	o.Settlement.Chain, o.Settlement.DestinationAddress = postgres.OrZero(chain), postgres.OrZero(dest)
	return o, nil
}

func get(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, lock bool) (Onramp, error) {
	sql := `select ` + columns + ` from onramps where id = $1 and merchant_id = $2 and environment = $3`
	if lock {
		sql += ` for update`
	}
	return scan(q.QueryRow(ctx, sql, id, t.MerchantID, t.Environment))
}

// getByAccount reads, FOR UPDATE in tx, the onramp behind virtual account (bank code,
// account number) of environment env, whichever merchant's.
func getByAccount(ctx context.Context, tx pgx.Tx, bankCode, account, env string) (Onramp, error) {
	return scan(tx.QueryRow(ctx, `select `+columns+` from onramps where bank_code = $1 and account_number = $2 and environment = $3
		for update`, bankCode, account, env))
}

// statusClause selects the status as reads report it (StatusAt): an ACTIVE onramp past
// expires_at is EXPIRED.
func statusClause(status string, now time.Time, args *[]any) string {
	*args = append(*args, now)
	n := len(*args)
	switch status {
	case Active:
		return fmt.Sprintf(` and status = 'ACTIVE' and (expires_at is null or expires_at > $%d)`, n)
	case Expired:
		return fmt.Sprintf(` and (status = 'EXPIRED' or (status = 'ACTIVE' and expires_at <= $%d))`, n)
	case Inactive:
		*args = (*args)[:n-1]
		return ` and status = 'INACTIVE'`
	}
	*args = (*args)[:n-1]
	return ""
}

func list(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter, now time.Time) ([]Onramp, int64, error) {
	args := []any{t.MerchantID, t.Environment}
	where := ` where merchant_id = $1 and environment = $2` + statusClause(f.Status, now, &args)
	if f.Metadata != nil { // containment, served by onramps_metadata (GIN)
		args = append(args, f.Metadata.JSON())
		where += fmt.Sprintf(` and metadata @> $%d::jsonb`, len(args))
	}
	return postgres.Page(ctx, q, "onramps", `select count(*) from onramps`+where,
		`select `+columns+` from onramps`+where+` order by created_at desc, id desc`, args, f.Limit, (f.Page-1)*f.Limit, scan)
}
