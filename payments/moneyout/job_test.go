package moneyout_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/offramps"
	"svc/payments/transfers"
	"svc/payments/withdrawals"
)

// TestJobsKeepTheirStoredShape: the three money-out jobs keep the kind and JSON they had
// before they shared moneyout.Job, so jobs queued by an older build are still worked.
func TestJobsKeepTheirStoredShape(t *testing.T) {
	id := uuid.MustParse("0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")
	for _, c := range []struct {
		args  river.JobArgs
		kind  string
		json  string
		queue string
	}{
		{withdrawals.ProcessArgs{ID: id}, "withdrawal_process", `{"withdrawal_id":"` + id.String() + `"}`, "money_out"},
		{transfers.PayoutArgs{ID: id}, "transfer_payout", `{"transfer_id":"` + id.String() + `"}`, "money_out"},
		{offramps.PayoutArgs{ID: id}, "offramp_payout", `{"payout_id":"` + id.String() + `"}`, "money_out"},
	} {
		read := func(b []byte) (uuid.UUID, error) { // into a new value of the job's own type
			v := reflect.New(reflect.TypeOf(c.args))
			err := json.Unmarshal(b, v.Interface())
			return v.Elem().FieldByName("ID").Interface().(uuid.UUID), err
		}
		b, err := json.Marshal(c.args)
		if err != nil || string(b) != c.json || c.args.Kind() != c.kind {
			t.Errorf("%s: %s %v, kind %s; want %s", c.kind, b, err, c.args.Kind(), c.json)
		}
		if got, err := read([]byte(c.json)); err != nil || got != id {
			t.Errorf("%s: read %v %v", c.kind, got, err)
		}
		if _, err := read([]byte(`{"other_id":"` + id.String() + `"}`)); err == nil {
			t.Errorf("%s: a job without its id field was read", c.kind)
		}
		if o, ok := c.args.(interface{ InsertOpts() river.InsertOpts }); !ok || o.InsertOpts().Queue != c.queue || o.InsertOpts().MaxAttempts != 25 {
			t.Errorf("%s: insert options", c.kind)
		}
	}
}
