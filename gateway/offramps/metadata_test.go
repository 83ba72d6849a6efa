package offramps_test

import (
	"testing"

	"github.com/google/uuid"

	"svc/gateway/withdrawals/moneyouttest"
	"svc/payments/events"
	"svc/payments/money"
)

// TestOfframpMetadata (issue 30): an offramp keeps the metadata it was created with
// (offramps cannot be changed), returns it, carries it in offramp.completed on both
// settlement paths (credited to the customer's balance; paid out in NGN), and the list
// filters on it; metadata beyond the limits is a field error that creates nothing.
func TestOfframpMetadata(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := map[string]any{"customer_id": r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()}
	create := func(body map[string]any, md map[string]any) string {
		body["metadata"] = md
		var o struct {
			ID       string
			Metadata map[string]string
		}
		r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, body).Decode(t, &o)
		if o.Metadata["order"] != md["order"] {
			t.Fatalf("created %+v", o)
		}
		return o.ID
	}
	in := create(internal(cust, "TRON", "USDT"), map[string]any{"order": "o-1"})
	out := create(payout("TEMPORARY", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bank), map[string]any{"order": "o-2"})

	r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": in, "amount": "1"})
	var d deposit
	r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": out, "amount": "2"}).Decode(t, &d)
	moneyouttest.Drive(t, r.Offramps.AdvancePayout, uuid.MustParse(d.Payout.ID))
	if md := r.EventMetadata(t, r.M.ID, string(events.OfframpCompleted), in); md["order"] != "o-1" {
		t.Fatalf("offramp.completed (balance) carries %v", md)
	}
	if md := r.EventMetadata(t, r.M.ID, string(events.OfframpCompleted), out); md["order"] != "o-2" {
		t.Fatalf("offramp.completed (payout) carries %v", md)
	}

	var got struct{ Metadata map[string]string }
	r.Srv.Must(t, 200, "GET", "/v1/payments/offramps/"+in, r.M.SandboxKey, nil).Decode(t, &got)
	if got.Metadata["order"] != "o-1" {
		t.Fatalf("read %+v", got)
	}
	const path = "/v1/payments/offramps"
	r.WantMetadataFilter(t, path, "metadata[order]=o-2", out, "settlement_mode=INTERNAL_BALANCE&limit=1")
	body := internal(cust, "TRON", "USDT")
	body["metadata"] = map[string]any{"n": 1, moneyouttest.LongKey: "v"}
	moneyouttest.WantMetadataFields(t, r.Srv.Do(t, "POST", path, r.M.SandboxKey, body), "metadata.n", "metadata."+moneyouttest.LongKey)
	if ids := r.ListIDs(t, r.M.SandboxKey, path, ""); len(ids) != 2 {
		t.Fatalf("a refused create made an offramp: %v", ids)
	}
}
