package offramps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

// cols reads an offramp with its status as of $clock (the parameter named by the caller).
func cols(clock string) string {
	return `id, merchant_id, environment, type,
	case when status = 'ACTIVE' and expires_at is not null and expires_at <= ` + clock + ` then 'EXPIRED' else status end,
	customer_id, chain, asset, deposit_address, settlement_mode, rate_id, coalesce(price, 0),
	bank_account_name, bank_account_number, bank_code, expires_at, created_at, updated_at, metadata`
}

func scan(row pgx.Row) (Offramp, error) {
	var (
		o                       Offramp
		chain, asset            string
		bankName, bankNo, bankC *string
	)
	err := row.Scan(&o.ID, &o.Tenant.MerchantID, &o.Tenant.Environment, &o.Type, &o.Status, &o.CustomerID, &chain, &asset,
		&o.DepositAddress, &o.Settlement.Mode, &o.Settlement.RateID, &o.Settlement.Price, &bankName, &bankNo, &bankC,
		&o.ExpiresAt, &o.CreatedAt, &o.UpdatedAt, &o.Metadata)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, ErrNotFound
	}
	o.Chain, o.Asset = providers.Chain(chain), money.Asset(asset)
	if bankName != nil && bankNo != nil && bankC != nil {
		o.Settlement.DestinationBank = &Bank{AccountName: *bankName, AccountNumber: *bankNo, BankCode: *bankC}
	}
	return o, err
}

func insert(ctx context.Context, tx pgx.Tx, o Offramp) error {
	var name, no, code *string
	if b := o.Settlement.DestinationBank; b != nil {
		name, no, code = &b.AccountName, &b.AccountNumber, &b.BankCode
	}
	var price *int64
	if o.Settlement.Price > 0 {
		price = &o.Settlement.Price
	}
	_, err := tx.Exec(ctx, `insert into offramps (id, merchant_id, environment, type, status, customer_id, chain, asset,
		deposit_address, settlement_mode, rate_id, price, bank_account_name, bank_account_number, bank_code, expires_at,
		created_at, updated_at, metadata) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17, $18)`,
		o.ID, o.Tenant.MerchantID, o.Tenant.Environment, o.Type, o.Status, o.CustomerID, string(o.Chain), string(o.Asset),
		o.DepositAddress, o.Settlement.Mode, o.Settlement.RateID, price, name, no, code, o.ExpiresAt, o.CreatedAt, o.Metadata.OrEmpty())
	if err != nil {
		return fmt.Errorf("offramps: insert: %w", err)
	}
	return nil
}

func load(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, now time.Time, lock bool) (Offramp, error) {
	sql := `select ` + cols("$4") + ` from offramps where id = $1 and merchant_id = $2 and environment = $3`
	if lock {
		sql += ` for update`
	}
	o, err := scan(q.QueryRow(ctx, sql, id, t.MerchantID, t.Environment, now))
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("offramps: load: %w", err)
	}
	return o, err
}

func list(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter, now time.Time) ([]Offramp, int64, error) {
	where := `merchant_id = $1 and environment = $2 and ($3 = '' or type = $3) and ($4 = '' or chain = $4)
		and ($5 = '' or asset = $5) and ($6 = '' or settlement_mode = $6)
		and ($7 = '' or (case when status = 'ACTIVE' and expires_at is not null and expires_at <= $8 then 'EXPIRED' else status end) = $7)`
	args := []any{t.MerchantID, t.Environment, f.Type, f.Chain, f.Asset, f.Mode, f.Status, now}
	if f.Metadata != nil { // containment, served by offramps_metadata (GIN)
		where, args = where+` and metadata @> $9::jsonb`, append(args, f.Metadata.JSON())
	}
	return postgres.Page(ctx, q, "offramps", `select count(*) from offramps where `+where,
		`select `+cols("$8")+` from offramps where `+where+` order by created_at desc, id desc`, args, f.Limit, (f.Page-1)*f.Limit, scan)
}

const payoutCols = `id, merchant_id, environment, source_id, deposit_id, customer_id, amount, status, bank_code, account_number,
	account_name, coalesce(provider_reference, ''), coalesce(failure_reason, ''), created_at, settled_at`

func scanPayout(row pgx.Row) (Payout, error) {
	var (
		p      Payout
		amount int64
	)
	err := row.Scan(&p.ID, &p.Tenant.MerchantID, &p.Tenant.Environment, &p.OfframpID, &p.DepositID, &p.CustomerID, &amount,
		&p.Status, &p.Bank.BankCode, &p.Bank.AccountNumber, &p.Bank.AccountName, &p.ProviderReference, &p.FailureReason,
		&p.CreatedAt, &p.SettledAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, ErrNotFound
	}
	p.Amount = money.New(money.NGN, amount)
	return p, err
}
