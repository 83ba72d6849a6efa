// Package audit owns audit_log (migration 001): who did what, on what, why, written in the
// transaction of the change it records so the row commits or rolls back with it. It is the
// table's only writer (issue 32): payments/operator (money operations) and identity (an
// operator's actions on merchants) both write through Write, so neither reaches the other.
package audit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"svc/persistence/postgres"
)

// Entry is one audit_log row.
type Entry struct {
	Actor   string // who: "alice@ops-1" (CLI), "merchant:<id>" (a sandbox route); "" is "unknown"
	Action  string // what: "deposit.reverse", "merchant.suspend", ...
	Subject string // on what: "deposit:<id>", "merchant:<id>", "event:<id>"
	Reason  string // why, as given
	Detail  any    // JSON object; nil for {}
}

// Write writes e in tx (a transaction, so it commits or rolls back with the change it
// records).
func Write(ctx context.Context, tx postgres.Querier, e Entry) error {
	detail := []byte("{}")
	if e.Detail != nil {
		b, err := json.Marshal(e.Detail)
		if err != nil {
			return fmt.Errorf("audit detail: %w", err)
		}
		detail = b
	}
	if e.Actor == "" {
		e.Actor = "unknown"
	}
	_, err := tx.Exec(ctx, `insert into audit_log (id, actor, action, subject, reason, detail) values ($1, $2, $3, $4, $5, $6)`,
		uuid.Must(uuid.NewV7()), e.Actor, e.Action, e.Subject, e.Reason, detail)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}
