package auth

import "time"

// Time is a timestamp as the API writes it: UTC, ISO 8601 with milliseconds and Z.
type Time time.Time

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes "2006-01-02T15:04:05.000Z".
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(timeLayout)+2)
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, timeLayout)
	return append(b, '"'), nil
}

func ptrTime(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	v := Time(*t)
	return &v
}
