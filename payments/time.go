package payments

import "time"

// TimeLayout is the API's time format: UTC milliseconds, e.g. 2026-01-02T15:04:05.000Z. Event
// payloads and webhook bodies use it, and gateway/api formats every response time with it.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// OrNow is a service's clock: now, or time.Now when now is nil (the constructors' "now nil
// means time.Now").
func OrNow(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// Stamp is t as the tables keep it: UTC at microseconds (timestamptz's precision), so a
// time written and read back compares equal to the one the service answered with.
func Stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
