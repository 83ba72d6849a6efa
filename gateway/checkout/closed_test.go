package checkout_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"svc/payments"
	pc "svc/payments/checkout"
)

// Issue 32 item 3: a checkout link cannot be paid twice, and money that arrives for a link
// that can no longer take it follows one rule: credited to the merchant (the deposit settles)
// with checkout.payment.failed, never completed against a closed link nor kept silently.

func (e env) settle(t *testing.T, payment string) {
	t.Helper()
	var onramp string
	if err := e.pool.QueryRow(context.Background(), `select onramp_id from checkout_payments where id=$1`, payment).Scan(&onramp); err != nil {
		t.Fatal(err)
	}
	if err := e.onramps.SimulateDeposit(context.Background(), payments.Tenant{MerchantID: e.a.ID, Environment: "sandbox"}, onramp); err != nil {
		t.Fatal(err)
	}
}

func (e env) paymentState(t *testing.T, payment string) (status, reason string, failedEvents int) {
	t.Helper()
	ctx := context.Background()
	if err := e.pool.QueryRow(ctx, `select status, coalesce(failure_reason, '') from checkout_payments where id=$1`, payment).
		Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if err := e.pool.QueryRow(ctx, `select count(*) from events e join checkout_payments p on e.data->>'id' = p.deposit_id::text
		where p.id=$1 and e.type='checkout.payment.failed' and e.data->>'failure_reason' = p.failure_reason`, payment).Scan(&failedEvents); err != nil {
		t.Fatal(err)
	}
	return status, reason, failedEvents
}

func TestPaidOneTimeLinkCannotBeReactivated(t *testing.T) {
	e := setup(t)
	key := e.a.SandboxKey
	l := e.link(t, key, `{"title":"Seat","slug":"seat","amount":15000,"currency":"NGN"}`)
	pay := paymentOf(t, e.srv.Do(t, "POST", "/pay/seat/transfer", "", nil))
	e.settle(t, pay)
	if st, _, _ := e.paymentState(t, pay); st != "completed" {
		t.Fatal(st)
	}
	r := e.srv.Do(t, "PATCH", "/v1/checkout-links/"+l.ID, key, `{"status":"active"}`)
	if r.Status != 422 || !strings.Contains(string(r.Body), "INVALID_STATE") || !strings.Contains(string(r.Body), "already paid") {
		t.Fatalf("reactivating a paid one-time link: %s", r)
	}
	var got link
	e.srv.Must(t, 200, "GET", "/v1/checkout-links/"+l.ID, key, nil).Decode(t, &got)
	if got.Status != "inactive" || got.PaymentsCount != 1 {
		t.Fatalf("%+v", got)
	}
	if r := e.srv.Do(t, "POST", "/pay/seat/transfer", "", nil); !strings.Contains(r.Header["Location"], "notice=") {
		t.Fatalf("a new payment on the paid link: %s", r)
	}
	// Other changes to the paid link still work, and an unpaid link still toggles.
	e.srv.Must(t, 200, "PATCH", "/v1/checkout-links/"+l.ID, key, `{"title":"Seat (sold)"}`)
	u := e.link(t, key, `{"title":"Other","slug":"other-seat","amount":100,"currency":"NGN"}`)
	e.srv.Must(t, 200, "PATCH", "/v1/checkout-links/"+u.ID, key, `{"status":"inactive"}`)
	e.srv.Must(t, 200, "PATCH", "/v1/checkout-links/"+u.ID, key, `{"status":"active"}`)
}

func TestMoneyForAClosedLinkIsCreditedWithAnEvent(t *testing.T) {
	for _, c := range []struct {
		name   string
		close  func(e env, id string)
		reason string
	}{
		{"deactivated after the payment started", func(e env, id string) {
			e.srv.Must(t, 200, "PATCH", "/v1/checkout-links/"+id, e.a.SandboxKey, `{"status":"inactive"}`)
		}, "deactivated before the money arrived"},
		{"deleted after the payment started", func(e env, id string) {
			e.srv.Must(t, 200, "DELETE", "/v1/checkout-links/"+id, e.a.SandboxKey, nil)
		}, "deleted before the money arrived"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t)
			l := e.link(t, e.a.SandboxKey, `{"title":"Seat","slug":"seat","amount":15000,"currency":"NGN"}`)
			pay := paymentOf(t, e.srv.Do(t, "POST", "/pay/seat/transfer", "", nil))
			c.close(e, l.ID)
			e.settle(t, pay)
			st, reason, failed := e.paymentState(t, pay)
			if st != "failed" || !strings.Contains(reason, c.reason) || failed != 1 {
				t.Fatalf("payment %s (%s), %d checkout.payment.failed", st, reason, failed)
			}
			var completed, count int
			_ = e.pool.QueryRow(context.Background(), `select count(*) from events where type='checkout.payment.completed'`).Scan(&completed)
			_ = e.pool.QueryRow(context.Background(), `select payments_count from checkout_links where id=$1`, l.ID).Scan(&count)
			if completed != 0 || count != 0 {
				t.Fatalf("completed events %d, payments_count %d", completed, count)
			}
			e.settle(t, pay) // the same settlement again changes nothing
			if _, _, failed := e.paymentState(t, pay); failed != 1 {
				t.Fatalf("%d failed events after a repeat", failed)
			}
		})
	}

	t.Run("several payers of one one-time link settle at once: one completes", func(t *testing.T) {
		e := setup(t)
		l := e.link(t, e.a.SandboxKey, `{"title":"Seat","slug":"seat","amount":15000,"currency":"NGN"}`)
		const payers = 4
		var pays []string
		for range payers {
			pays = append(pays, paymentOf(t, e.srv.Do(t, "POST", "/pay/seat/transfer", "", nil)))
		}
		var wg sync.WaitGroup
		for _, p := range pays {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.settle(t, p)
			}()
		}
		wg.Wait()
		var completed int
		for _, p := range pays {
			st, reason, failed := e.paymentState(t, p)
			switch {
			case st == "completed":
				completed++
			case st != "failed" || !strings.Contains(reason, "already paid") || failed != 1:
				t.Errorf("payment %s: %s (%s), %d checkout.payment.failed", p, st, reason, failed)
			}
		}
		var got link
		e.srv.Must(t, 200, "GET", "/v1/checkout-links/"+l.ID, e.a.SandboxKey, nil).Decode(t, &got)
		if completed != 1 || got.PaymentsCount != 1 || got.Status != "inactive" {
			t.Fatalf("%d completed, link %+v", completed, got)
		}
	})
}

// Every pair of stored checkout payment statuses: awaiting ends completed or failed, nothing else.
func TestPaymentMachine(t *testing.T) {
	all := []string{pc.PaymentAwaiting, pc.PaymentCompleted, pc.PaymentFailed}
	for _, from := range all {
		for _, to := range all {
			want := from == pc.PaymentAwaiting && to != pc.PaymentAwaiting
			if err := pc.PaymentMachine.Check(from, to); (err == nil) != want {
				t.Errorf("%s -> %s: %v", from, to, err)
			}
		}
	}
}
