package api

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// ParseTime reads the union of what the lists promised: an ISO 8601 time with an offset
// (deposits, events, trades) or Unix milliseconds (trades).
func TestParseTime(t *testing.T) {
	plus1 := time.FixedZone("", 3600)
	for _, tc := range []struct {
		name, in string
		want     time.Time // the zero time: refused
	}{
		{"UTC with Z", "2025-03-01T00:00:00Z", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"an offset", "2025-03-01T00:00:00+01:00", time.Date(2025, 3, 1, 0, 0, 0, 0, plus1)},
		{"an offset's '+' decoded as a space", "2025-03-01T00:00:00 01:00", time.Date(2025, 3, 1, 0, 0, 0, 0, plus1)},
		{"a negative offset", "2025-03-01T00:00:00-05:30", time.Date(2025, 3, 1, 5, 30, 0, 0, time.UTC)},
		{"fractional seconds", "2025-03-01T00:00:00.123456789Z", time.Date(2025, 3, 1, 0, 0, 0, 123456789, time.UTC)},
		{"Unix milliseconds", "1740787200123", time.Date(2025, 3, 1, 0, 0, 0, 123e6, time.UTC)},
		{"Unix millisecond zero", "0", time.UnixMilli(0)},
		{"the last millisecond of year 9999", "253402300799999", time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)},
		{"milliseconds past year 9999", "253402300800000", time.Time{}},
		{"milliseconds that overflow int64", "99999999999999999999", time.Time{}},
		{"negative milliseconds", "-1", time.Time{}},
		{"signed milliseconds", "+1", time.Time{}},
		{"seconds with a fraction", "1740787200.5", time.Time{}},
		{"no offset", "2025-03-01T00:00:00", time.Time{}},
		{"a date alone", "2025-03-01", time.Time{}},
		{"a word", "yesterday", time.Time{}},
		{"empty", "", time.Time{}},
		{"a space inside the date", "2025-03-01 00:00:00Z", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseTime(tc.in)
			if ok != !tc.want.IsZero() || ok && !got.Equal(tc.want) {
				t.Fatalf("ParseTime(%q) = %v, %v; want %v", tc.in, got, ok, tc.want)
			}
		})
	}
}

// TimeRange reads from and to with ParseTime and names the field at fault.
func TestTimeRange(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		from, to    bool     // present in the answer
		fields      []string // in v's errors
	}{
		{"neither", "", false, false, nil},
		{"from alone", "from=0", true, false, nil},
		{"both, mixed formats", "from=1740787200000&to=2025-03-01T00:00:00.001Z", true, true, nil},
		{"equal bounds", "from=1740787200000&to=2025-03-01T00:00:00Z", true, true, nil},
		{"to before from", "from=1740787200001&to=2025-03-01T00:00:00Z", true, true, []string{"to"}},
		{"both malformed", "from=x&to=y", false, false, []string{"from", "to"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.Request.SetRequestURI("/v1/x?" + tc.query)
			var v Validator
			from, to := TimeRange(&ctx, &v)
			var fields []string
			if err := v.Err(); err != nil {
				for _, f := range err.(*Error).Fields {
					fields = append(fields, f.Field)
				}
			}
			if (from != nil) != tc.from || (to != nil) != tc.to || strings.Join(fields, ",") != strings.Join(tc.fields, ",") {
				t.Fatalf("%s: from %v, to %v, errors on %v; want from %v, to %v, errors on %v", tc.query, from, to, fields, tc.from, tc.to, tc.fields)
			}
		})
	}
}

// FuzzParseTime: any input is refused or read as one instant, never a panic. All digits
// are Unix milliseconds (up to year 9999's end); anything else is RFC 3339, whose every
// accepted time formats back to one that parses to the same instant.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2025-03-01T00:00:00Z", "2025-03-01T00:00:00 01:00", "2025-03-01T00:00:00.5-05:30", "0",
		"1740787200123", "253402300799999", "253402300800000", "-1", "", " ", "9999-12-31T23:59:59.999999999+23:59", "0000-01-01T00:00:00+01:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseTime(s)
		if !ok {
			return
		}
		if ms, err := strconv.ParseUint(s, 10, 64); err == nil && strings.Trim(s, "0123456789") == "" {
			if ms > maxUnixMilli || got.UnixMilli() != int64(ms) {
				t.Fatalf("ParseTime(%q) = %v, ok", s, got)
			}
			return
		}
		back, ok := ParseTime(got.Format(time.RFC3339Nano))
		if !ok || !back.Equal(got) {
			t.Fatalf("ParseTime(%q) = %v, which formats to %q, read back as %v, %v", s, got, got.Format(time.RFC3339Nano), back, ok)
		}
	})
}
