package api

import (
	"time"

	"svc/payments"
)

// TimeLayout is the API's timestamp: ISO 8601 with milliseconds; Time writes it in UTC, so
// with a Z (2026-01-02T15:04:05.000Z). It is payments.TimeLayout, which event payloads and
// webhook bodies use: one format in responses and webhooks.
const TimeLayout = payments.TimeLayout

// Time formats t as an API timestamp.
func Time(t time.Time) string { return t.UTC().Format(TimeLayout) }

// AppendTime appends t as an API timestamp to b.
func AppendTime(b []byte, t time.Time) []byte { return t.UTC().AppendFormat(b, TimeLayout) }

// TimePtr is Time for optional timestamps (nil, a JSON null, for nil).
func TimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}
