package recipients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/customers"
	"svc/payments/idempotency"
	"svc/persistence/postgres"
)

// Service stores recipients. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// New returns the service; now nil means time.Now.
func New(pool *pgxpool.Pool, now func() time.Time) *Service {
	return &Service{pool: pool, now: payments.OrNow(now)}
}

// CheckCustomer returns ErrCustomerNotFound unless id is a customer of the tenant, read
// through q (the caller's transaction). Transfers use it for on_behalf_of.customer_id.
func CheckCustomer(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) error {
	_, err := customers.Load(ctx, q, t, id, false)
	if errors.Is(err, customers.ErrNotFound) {
		return ErrCustomerNotFound
	}
	return err
}

// Create stores a recipient validated with CreateInput.Validate.
// Errors: ErrCustomerNotFound, the database's.
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Recipient, error) {
	r := Recipient{ID: uuid.Must(uuid.NewV7()), Tenant: t, Type: in.Type, CustomerID: in.CustomerID, Details: in.Details,
		Metadata: in.Metadata.OrEmpty(), CreatedAt: payments.Stamp(s.now())}
	if err := r.Metadata.Validate(); err != nil {
		return Recipient{}, err
	}
	details, err := json.Marshal(r.Details)
	if err != nil {
		return Recipient{}, err
	}
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if r.CustomerID != nil {
			if err := CheckCustomer(ctx, tx, t, *r.CustomerID); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `insert into recipients (id, merchant_id, environment, type, customer_id, details, created_at, metadata)
			values ($1, $2, $3, $4, $5, $6, $7, $8)`, r.ID, t.MerchantID, t.Environment, r.Type, r.CustomerID, details, r.CreatedAt, r.Metadata)
		if err != nil {
			return fmt.Errorf("recipients: insert: %w", err)
		}
		return nil
	})
	return r, err
}

// Get returns one recipient of the tenant. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Recipient, error) {
	return Load(ctx, s.pool, t, id)
}

// Delete removes a recipient from reads and new transfers. Errors: ErrNotFound.
func (s *Service) Delete(ctx context.Context, t payments.Tenant, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `update recipients set deleted_at = $4
		where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null`, id, t.MerchantID, t.Environment, s.now().UTC())
	if err != nil {
		return fmt.Errorf("recipients: delete: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// List returns a page of the tenant's recipients, newest first, and the total.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Recipient, int64, error) {
	if f.Page < 1 {
		f.Page = 1
	}
	if f.Limit < 1 {
		f.Limit = 20
	}
	where := `merchant_id = $1 and environment = $2 and deleted_at is null and ($3 = '' or type = $3)
		and ($4::uuid is null or customer_id = $4)`
	args := []any{t.MerchantID, t.Environment, f.Type, f.CustomerID}
	if f.Metadata != nil { // containment, served by recipients_metadata (GIN)
		args = append(args, f.Metadata.JSON())
		where += ` and metadata @> $5::jsonb`
	}
	return postgres.Page(ctx, s.pool, "recipients", `select count(*) from recipients where `+where,
		`select `+cols+` from recipients where `+where+` order by created_at desc, id desc`, args, f.Limit, (f.Page-1)*f.Limit, scan)
}

const cols = `id, merchant_id, environment, type, customer_id, details, created_at, metadata`

func scan(row pgx.Row) (Recipient, error) {
	var (
		r       Recipient
		details []byte
	)
	err := row.Scan(&r.ID, &r.Tenant.MerchantID, &r.Tenant.Environment, &r.Type, &r.CustomerID, &details, &r.CreatedAt, &r.Metadata)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(details, &r.Details)
}

// Load reads one live (not deleted) recipient of the tenant through q (a transfer reads its
// recipient in its own transaction). Errors: ErrNotFound.
func Load(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Recipient, error) {
	r, err := scan(q.QueryRow(ctx, `select `+cols+` from recipients
		where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null`, id, t.MerchantID, t.Environment))
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("recipients: load: %w", err)
	}
	return r, err
}
