package transfers_test

import (
	"testing"

	"github.com/google/uuid"

	"svc/gateway/withdrawals/moneyouttest"
	"svc/payments/events"
)

// TestTransferMetadata (issue 30): a transfer keeps the metadata it was created with
// (transfers cannot be changed), returns it, carries it in transfer.completed and
// transfer.failed, and the list filters on it; metadata beyond the limits is a field error
// that debits nothing.
func TestTransferMetadata(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "1000")
	create := func(account, invoice string) string {
		body := map[string]any{"currency": "NGN", "amount": "16000", "reference": uuid.NewString(),
			"destination": dest("BANK_ACCOUNT", domestic(account)), "metadata": map[string]string{"invoice": invoice}}
		var tr struct {
			ID       string
			Metadata map[string]string
		}
		r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, body).Decode(t, &tr)
		if tr.Metadata["invoice"] != invoice {
			t.Fatalf("created %+v", tr)
		}
		moneyouttest.Drive(t, r.Transfers.Advance, uuid.MustParse(tr.ID))
		return tr.ID
	}
	ok := create("0123456789", "inv-1")
	bad := create(moneyouttest.FailAccount, "inv-2")

	var got struct {
		Status   string
		Metadata map[string]string
	}
	r.Srv.Must(t, 200, "GET", "/v1/payments/transfers/"+ok, r.M.SandboxKey, nil).Decode(t, &got)
	if got.Status != "SETTLED" || got.Metadata["invoice"] != "inv-1" {
		t.Fatalf("read %+v", got)
	}
	if md := r.EventMetadata(t, r.M.ID, string(events.TransferCompleted), ok); md["invoice"] != "inv-1" {
		t.Fatalf("transfer.completed carries %v", md)
	}
	if md := r.EventMetadata(t, r.M.ID, string(events.TransferFailed), bad); md["invoice"] != "inv-2" {
		t.Fatalf("transfer.failed carries %v", md)
	}
	const path = "/v1/payments/transfers"
	r.WantMetadataFilter(t, path, "metadata[invoice]=inv-2", bad, "status=SETTLED")
	moneyouttest.WantMetadataFields(t, r.Srv.Do(t, "POST", path, r.M.SandboxKey, map[string]any{"currency": "NGN", "amount": "16000",
		"reference": uuid.NewString(), "destination": dest("BANK_ACCOUNT", domestic("0123456789")),
		"metadata": map[string]any{"n": 1, moneyouttest.LongKey: "v"}}),
		"metadata.n", "metadata."+moneyouttest.LongKey)
	if ids := r.ListIDs(t, r.M.SandboxKey, path, ""); len(ids) != 2 {
		t.Fatalf("a refused create made a transfer: %v", ids)
	}
}
