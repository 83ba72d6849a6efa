package webhooks_test

import (
	"fmt"
	"time"

	"svc/payments/webhooks"
)

// A merchant's receiver checks each delivery with the raw body, before parsing it.
func ExampleVerify() {
	secret := "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG" // from create or rotate-secret
	// What arrived: the exact bytes of the body and the X-Svc-Signature header.
	body := []byte(`{"id":"0190a0f4-0000-7000-8000-000000000001","event":"deposit.settled","data":{"id":"dep_1"},"timestamp":"2025-01-02T03:04:05.000Z","created_at":"2025-01-02T03:04:00.000Z"}`)
	header := webhooks.Sign(body, secret) // computed by svc when it sent the delivery

	now := time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC) // 55 s after it was sent
	fmt.Println(webhooks.Verify(body, header, secret, 5*time.Minute, now))

	tampered := append([]byte(nil), body...)
	tampered[len(tampered)-3] = '1'
	fmt.Println(webhooks.Verify(tampered, header, secret, 5*time.Minute, now))

	later := now.Add(time.Hour) // the same delivery replayed an hour later
	fmt.Println(webhooks.Verify(body, header, secret, 5*time.Minute, later) != nil)
	// Output:
	// <nil>
	// webhook: signature does not match the body
	// true
}
