package api

import (
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// ParseTime reads an ISO 8601 time with a timezone offset. A '+' of the offset decoded as a
// space (a query string sent without escaping it) is taken back.
func ParseTime(s string) (time.Time, bool) {
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		s = s[:i] + "+" + s[i+1:]
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// TimeRange reads a list's `from` and `to` query parameters (ISO 8601 with an offset; either
// may be absent), recording a malformed one, or a `to` before `from`, in v.
func TimeRange(ctx *fasthttp.RequestCtx, v *Validator) (from, to *time.Time) {
	args := ctx.QueryArgs()
	for _, name := range []string{"from", "to"} {
		s := string(args.Peek(name))
		if s == "" {
			continue
		}
		tm, ok := ParseTime(s)
		if !v.Check(ok, name, "must be an ISO 8601 time with a timezone offset, e.g. 2025-03-01T00:00:00+01:00 or ...Z") {
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
