package checkout

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// DeleteInvoiceLinks deletes the links of invoice id in tx (their pages stop at once):
// payments/invoices deletes an unpaid invoice through it, as this package is the only
// writer of checkout_links (issue 32).
func (s InvoiceLinks) DeleteInvoiceLinks(ctx context.Context, tx pgx.Tx, id uuid.UUID, at time.Time) error {
	if _, err := tx.Exec(ctx, `update checkout_links set deleted_at = $2, status = 'inactive', updated_at = $2
		where invoice_id = $1 and deleted_at is null`, id, at); err != nil {
		return fmt.Errorf("delete the invoice's links: %w", err)
	}
	return nil
}
