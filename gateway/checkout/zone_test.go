package checkout

import (
	"strings"
	"testing"
	"time"
)

func TestPayerTimeIsLagosWithTheZoneShown(t *testing.T) {
	cases := map[time.Time]string{
		time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC):   "13:00 WAT (Lagos time)",
		time.Date(2026, 7, 2, 23, 30, 0, 0, time.UTC):  "00:30 WAT (Lagos time)", // no summer time
		time.Date(2026, 7, 2, 23, 30, 0, 0, payerZone): "23:30 WAT (Lagos time)",
	}
	for in, want := range cases {
		if got := payerTime(in); got != want {
			t.Errorf("payerTime(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestPageHasACopyButtonForTheAccountNumber(t *testing.T) {
	raw, err := templateFiles.ReadFile("templates/page.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `id="copy-account"`) || !strings.Contains(string(raw), `data-copy="{{.Payment.AccountNumber}}"`) {
		t.Fatal("the transfer box has no copy button for the account number")
	}
	js, err := assetFiles.ReadFile("assets/pay.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), "navigator.clipboard.writeText") {
		t.Fatal("pay.js does not copy")
	}
}
