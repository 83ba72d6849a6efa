package deposits

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/money"
	"svc/persistence/postgres"
)

const columns = `d.id, d.merchant_id, d.environment, d.type, d.status, d.onramp_id, d.offramp_id, d.customer_id,
	d.amount, d.currency, d.flag, d.settlement_mode, d.asset, d.chain, d.destination_address, d.price,
	d.settled_amount, d.tx_hash, d.payment_reference, d.failure_reason, d.created_at, d.updated_at, d.settled_at,
	coalesce(o.account_number, ''), coalesce(o.bank_name, '')`

const from = ` from deposits d left join onramps o on o.id = d.onramp_id`

// storedAmounts are the deposit's nullable columns price (NULL when unpriced) and
// settled_amount (NULL until settled).
func (d Deposit) storedAmounts() (price, settled *int64) {
	if d.Price > 0 {
		price = &d.Price
	}
	if d.SettledAmount != nil {
		settled = &d.SettledAmount.Minor
	}
	return price, settled
}

// insert writes d's row with every column update writes too: write inserts a deposit
// converted on receipt in whatever state its step leaves.
func insert(ctx context.Context, tx pgx.Tx, d Deposit) error {
	price, settled := d.storedAmounts()
	_, err := tx.Exec(ctx, `insert into deposits (id, merchant_id, environment, type, status, onramp_id, offramp_id,
		customer_id, amount, currency, flag, settlement_mode, asset, chain, destination_address, payment_reference,
		price, settled_amount, tx_hash, failure_reason, created_at, updated_at, settled_at)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
		d.ID, d.Tenant.MerchantID, d.Tenant.Environment, d.Type, d.Status, d.OnrampID, d.OfframpID, d.CustomerID,
		d.Amount.Minor, string(d.Amount.Asset), d.Flag, d.Settlement.Mode, string(d.Settlement.Asset),
		postgres.NullIfEmpty(d.Settlement.Chain), postgres.NullIfEmpty(d.Settlement.DestinationAddress), d.PaymentReference,
		price, settled, postgres.NullIfEmpty(d.TxHash), postgres.NullIfEmpty(d.FailureReason), d.CreatedAt, d.UpdatedAt, d.SettledAt)
	if err != nil {
		return fmt.Errorf("insert deposit: %w", err)
	}
	return nil
}

// update writes the fields a step changes.
func update(ctx context.Context, tx pgx.Tx, d Deposit) error {
	price, settled := d.storedAmounts()
	_, err := tx.Exec(ctx, `update deposits set status = $2, flag = $3, price = $4, settled_amount = $5, tx_hash = $6,
		failure_reason = $7, updated_at = $8, settled_at = $9 where id = $1`,
		d.ID, d.Status, d.Flag, price, settled, postgres.NullIfEmpty(d.TxHash), postgres.NullIfEmpty(d.FailureReason), d.UpdatedAt, d.SettledAt)
	if err != nil {
		return fmt.Errorf("update deposit: %w", err)
	}
	return nil
}

func scan(row pgx.Row) (Deposit, error) {
	var (
		d                        Deposit
		amount                   int64
		currency, asset          string
		chain, dest, txh, reason *string
		price, settled           *int64
	)
	err := row.Scan(&d.ID, &d.Tenant.MerchantID, &d.Tenant.Environment, &d.Type, &d.Status, &d.OnrampID, &d.OfframpID,
		&d.CustomerID, &amount, &currency, &d.Flag, &d.Settlement.Mode, &asset, &chain, &dest, &price, &settled, &txh,
		&d.PaymentReference, &reason, &d.CreatedAt, &d.UpdatedAt, &d.SettledAt, &d.AccountNumber, &d.BankName)
	if errors.Is(err, pgx.ErrNoRows) {
		return Deposit{}, ErrNotFound
	}
	if err != nil {
		return Deposit{}, fmt.Errorf("read deposit: %w", err)
	}
	d.Amount = money.New(money.Asset(currency), amount)
	d.Settlement.Asset = money.Asset(asset)
	d.Settlement.Chain, d.Settlement.DestinationAddress, d.Price = postgres.OrZero(chain), postgres.OrZero(dest), postgres.OrZero(price)
	if settled != nil {
		a := money.New(d.Settlement.Asset, *settled)
		d.SettledAmount = &a
	}
	d.TxHash, d.FailureReason = postgres.OrZero(txh), postgres.OrZero(reason)
	return d, nil
}

// getByID reads a deposit FOR UPDATE (the lifecycle steps; the id comes from our own job).
func getByID(ctx context.Context, tx pgx.Tx, id uuid.UUID) (Deposit, error) {
	return scan(tx.QueryRow(ctx, `select `+columns+from+` where d.id = $1 for update of d`, id))
}

func get(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Deposit, error) {
	return scan(q.QueryRow(ctx, `select `+columns+from+` where d.id = $1 and d.merchant_id = $2 and d.environment = $3`,
		id, t.MerchantID, t.Environment))
}

func list(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter) ([]Deposit, int64, error) {
	args := []any{t.MerchantID, t.Environment}
	where := ` where d.merchant_id = $1 and d.environment = $2`
	add := func(clause string, v any) {
		args = append(args, v)
		where += fmt.Sprintf(clause, len(args))
	}
	if f.Type != "" {
		add(` and d.type = $%d`, f.Type)
	}
	if f.Statuses != nil {
		add(` and d.status = any($%d)`, f.Statuses)
	}
	if f.OnrampID != nil {
		add(` and d.onramp_id = $%d`, *f.OnrampID)
	}
	if f.OfframpID != nil {
		add(` and d.offramp_id = $%d`, *f.OfframpID)
	}
	if f.From != nil {
		add(` and d.created_at >= $%d`, *f.From)
	}
	if f.To != nil {
		add(` and d.created_at <= $%d`, *f.To)
	}
	return postgres.Page(ctx, q, "deposits", `select count(*) from deposits d`+where,
		`select `+columns+from+where+` order by d.created_at desc, d.id desc`, args, f.PerPage, (f.Page-1)*f.PerPage, scan)
}
