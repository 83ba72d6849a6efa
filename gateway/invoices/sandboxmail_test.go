package invoices_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	pi "svc/payments/invoices"
	"svc/payments/providers/mail"
)

type recorder struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (r *recorder) Send(_ context.Context, m mail.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, m)
	return nil
}

// A sandbox key cannot mail real-looking invoices to anyone: sandbox invoice mail reaches
// only the merchant's own verified address, the rest stays in the outbox. Live invoices
// go to their customer.
func TestSandboxInvoiceMailOnlyToTheMerchantsOwnAddress(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	smtp := &recorder{}
	w := pi.NewMailWorker(e.pool, smtp, nil)
	mailed := func(key, email string) {
		t.Helper()
		inv := e.create(t, key, `{"title":"Work","customer_name":"Someone","customer_email":"`+email+`","line_items":[{"description":"Hours","quantity":1,"unit_price":10}]}`)
		job := &river.Job[pi.MailArgs]{Args: pi.MailArgs{InvoiceID: uuid.MustParse(inv.ID), PayURL: "https://pay.example/pay/x"}}
		if err := w.Work(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	outbox := func(to string) int {
		var n int
		if err := e.pool.QueryRow(ctx, `select count(*) from mail_outbox where to_addr = $1`, to).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	mailed(e.a.SandboxKey, "victim@example.test")
	if len(smtp.sent) != 0 || outbox("victim@example.test") != 1 {
		t.Fatalf("sandbox invoice to a stranger: sent %v, outbox %d", smtp.sent, outbox("victim@example.test"))
	}
	mailed(e.a.SandboxKey, e.a.Email)
	if len(smtp.sent) != 1 || smtp.sent[0].To != e.a.Email {
		t.Fatalf("sandbox invoice to the merchant's own address: %v", smtp.sent)
	}
	mailed(e.a.LiveKey, "customer@example.test")
	if len(smtp.sent) != 2 || smtp.sent[1].To != "customer@example.test" {
		t.Fatalf("live invoice: %v", smtp.sent)
	}
}
