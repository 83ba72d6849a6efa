package webhooks

import (
	"encoding/json"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments/events"
	wh "svc/payments/webhooks"
)

type logJSON struct {
	ID          string          `json:"id"`
	EndpointID  string          `json:"endpoint_id"`
	EndpointURL string          `json:"endpoint_url"`
	EventID     *string         `json:"event_id"`
	Event       string          `json:"event"`
	Payload     json.RawMessage `json:"payload"`
	StatusCode  *int            `json:"status_code"`
	Success     bool            `json:"success"`
	Error       *string         `json:"error"`
	DurationMS  int64           `json:"duration_ms"`
	Attempt     int             `json:"attempt"`
	Test        bool            `json:"test"`
	CreatedAt   string          `json:"created_at"`
}

func (rs *Routes) logs(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	p, err := api.Paging(ctx, "limit", 50, 100)
	var v api.Validator
	f := wh.LogFilter{Offset: p.Offset(), Limit: p.Limit}
	q := ctx.QueryArgs()
	if ev := string(q.Peek("event")); ev != "" {
		if v.Check(events.Known(ev), "event", "is not an event name") {
			f.Event = ev
		}
	}
	if s := string(q.Peek("endpoint_id")); s != "" {
		id, perr := uuid.Parse(s)
		if v.Check(perr == nil, "endpoint_id", "must be a UUID") {
			f.EndpointID = &id
		}
	}
	if s := string(q.Peek("success")); s != "" {
		if v.Check(s == "true" || s == "false", "success", "must be true or false") {
			b := s == "true"
			f.Success = &b
		}
	}
	if err != nil {
		api.Fail(ctx, mergeFields(err, v.Err()))
		return
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := endpoint.Context(ctx)
	defer cancel()
	entries, total, err := rs.svc.Logs(c, t, f)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := make([]logJSON, len(entries))
	for i, l := range entries {
		out[i] = logJSON{ID: l.ID.String(), EndpointID: l.EndpointID.String(), EndpointURL: l.EndpointURL,
			Event: l.Event, Payload: l.Payload, StatusCode: l.StatusCode, Success: l.Success, Error: l.Error,
			DurationMS: l.Duration.Milliseconds(), Attempt: l.Attempt, Test: l.Test, CreatedAt: api.Time(l.CreatedAt)}
		if l.EventID != nil {
			s := l.EventID.String()
			out[i].EventID = &s
		}
	}
	api.Page(ctx, out, p.Meta(total))
}

// mergeFields joins the field errors of two VALIDATION_ERRORs (either may be nil).
func mergeFields(a, b error) error {
	ae := api.From(a)
	if b == nil {
		return ae
	}
	be := api.From(b)
	return &api.Error{Code: api.CodeValidation, Detail: ae.Detail, Fields: append(append([]api.FieldError{}, ae.Fields...), be.Fields...)}
}
