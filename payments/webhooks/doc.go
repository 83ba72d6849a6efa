// Package webhooks owns the merchant's webhook endpoints and their delivery: registering and
// listing endpoints (secrets encrypted at rest, Cipher), the signed HTTP delivery of recorded
// events (Sender: HMAC signature, SSRF-guarded dialer, timeouts), the river worker that
// delivers each event with retries and backoff (Worker), the delivery log, and test sends.
// Events themselves are recorded by payments/events inside the domain's transaction.
package webhooks
