package api

import (
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// maxUnixMilli is the last millisecond RFC 3339 can write (9999-12-31T23:59:59.999Z), so
// both formats reach the same times; far beyond it (from about 9.2e15) the database
// driver's microseconds would overflow.
const maxUnixMilli = 253402300799999

// TimeDoc says what ParseTime accepts, for the OpenAPI description of a list's from and to.
const TimeDoc = "ISO 8601 (RFC 3339) with a timezone offset (escape + as %2B; an unescaped + is taken back), or Unix milliseconds"

// ParseTime reads a query parameter's time: an ISO 8601 (RFC 3339) time with a timezone
// offset, or Unix milliseconds (digits only, up to the end of year 9999). A '+' of the
// offset decoded as a space (a query string sent without escaping it) is taken back. Every
// list's from and to (trades, deposits, events) reads its times here.
func ParseTime(s string) (time.Time, bool) {
	if ms, ok := unixMilli(s); ok {
		return time.UnixMilli(ms).UTC(), true
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		s = s[:i] + "+" + s[i+1:]
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// unixMilli reads s as Unix milliseconds: digits only (ParseUint takes no sign), at most
// maxUnixMilli.
func unixMilli(s string) (int64, bool) {
	ms, err := strconv.ParseUint(s, 10, 64)
	return int64(ms), err == nil && ms <= maxUnixMilli
}

// TimeRange reads a list's `from` and `to` query parameters (ParseTime's times; either may
// be absent), recording a malformed one, or a `to` before `from`, in v.
func TimeRange(ctx *fasthttp.RequestCtx, v *Validator) (from, to *time.Time) {
	args := ctx.QueryArgs()
	for _, name := range []string{"from", "to"} {
		s := string(args.Peek(name))
		if s == "" {
			continue
		}
		tm, ok := ParseTime(s)
		if !v.Check(ok, name, "must be an ISO 8601 time with a timezone offset (e.g. 2025-03-01T00:00:00+01:00 or ...Z) or Unix milliseconds") {
			continue
		}
		if name == "from" {
			from = &tm
		} else {
			to = &tm
		}
	}
	if from != nil && to != nil {
		v.Check(!to.Before(*from), "to", "must not be before from")
	}
	return from, to
}
