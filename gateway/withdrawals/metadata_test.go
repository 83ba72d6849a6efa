package withdrawals_test

import (
	"testing"

	"github.com/google/uuid"

	"svc/gateway/withdrawals/moneyouttest"
	"svc/payments/events"
)

// TestWithdrawalMetadata (issue 30): a withdrawal keeps the metadata it was created with
// (withdrawals cannot be changed), returns it, carries it in withdrawal.completed and
// withdrawal.failed, and the list filters on it; metadata beyond the limits is a field error
// that debits nothing.
func TestWithdrawalMetadata(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	create := func(addr, md string) string {
		b := `{"amount_usd":"10","token":"USDT","chain":"BASE","destination_address":"` + addr + `","metadata":` + md + `}`
		var w struct {
			ID       string
			Metadata map[string]string
		}
		r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, b).Decode(t, &w)
		if len(w.Metadata) == 0 {
			t.Fatalf("created without its metadata: %+v", w)
		}
		return w.ID
	}
	ok := create(evm, `{"payout_id":"p-1"}`)
	bad := create(moneyouttest.FailAddress, `{"payout_id":"p-2"}`)
	moneyouttest.Drive(t, r.Withdrawals.Advance, uuid.MustParse(ok))
	moneyouttest.Drive(t, r.Withdrawals.Advance, uuid.MustParse(bad))

	var got struct{ Metadata map[string]string }
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals/"+ok, r.M.SandboxKey, nil).Decode(t, &got)
	if got.Metadata["payout_id"] != "p-1" {
		t.Fatalf("read %+v", got)
	}
	if md := r.EventMetadata(t, r.M.ID, string(events.WithdrawalCompleted), ok); md["payout_id"] != "p-1" {
		t.Fatalf("withdrawal.completed carries %v", md)
	}
	if md := r.EventMetadata(t, r.M.ID, string(events.WithdrawalFailed), bad); md["payout_id"] != "p-2" {
		t.Fatalf("withdrawal.failed carries %v", md)
	}
	const path = "/v1/payments/withdrawals"
	r.WantMetadataFilter(t, path, "metadata[payout_id]=p-2", bad, "status=SETTLED")
	moneyouttest.WantMetadataFields(t, r.Srv.Do(t, "POST", path, r.M.SandboxKey,
		`{"amount_usd":"10","token":"USDT","chain":"BASE","destination_address":"`+evm+`","metadata":{"n":1,"`+moneyouttest.LongKey+`":"v"}}`),
		"metadata.n", "metadata."+moneyouttest.LongKey)
	if ids := r.ListIDs(t, r.M.SandboxKey, path, ""); len(ids) != 2 {
		t.Fatalf("a refused create made a withdrawal: %v", ids)
	}
}
