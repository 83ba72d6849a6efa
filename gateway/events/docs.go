package events

import (
	"svc/gateway/api"
	"svc/gateway/openapi"
	pe "svc/payments/events"
)

func eventNames() []string {
	all := pe.All()
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = string(e)
	}
	return out
}

// EventSchema is an event as GET /v1/events answers it.
var EventSchema = openapi.Named("Event", openapi.Obj(map[string]openapi.Schema{
	"id":         openapi.UUID("the event's id, as X-Svc-Event-Id and id in its deliveries"),
	"event":      openapi.Enum(eventNames()...),
	"data":       openapi.Schema{"type": "object", "description": "the same data its webhook deliveries carry (docs/events.md)"},
	"created_at": openapi.Time("when it happened"),
}, "id", "event", "data", "created_at"))

// Docs documents every route of Register.
func (rs *Routes) Docs() []openapi.Op {
	const tag = "events"
	return []openapi.Op{
		{Method: "GET", Path: "/v1/events", Tag: tag, Summary: "List events (newest first, cursor paging)",
			Description: "Every event of the caller's merchant and environment, kept at least 30 days, with the data its webhooks carried.",
			Query: []openapi.Param{
				{Name: "type", Description: "event name, or several separated by commas", Schema: openapi.Str("")},
				{Name: "from", Description: "created at or after: " + api.TimeDoc, Schema: openapi.Time("")},
				{Name: "to", Description: "created before: " + api.TimeDoc, Schema: openapi.Time("")},
				{Name: "limit", Schema: openapi.Int("default 20, at most 100")},
				{Name: "cursor", Description: "next_cursor of the previous page", Schema: openapi.Str("")},
			},
			Responses: map[int]openapi.Response{200: {Description: "a page", Data: openapi.Obj(map[string]openapi.Schema{
				"items": openapi.Arr(EventSchema), "next_cursor": openapi.Nullable(openapi.Str("null on the last page")),
			}, "items", "next_cursor")}},
			Errors: []string{api.CodeValidation}},
		{Method: "GET", Path: "/v1/events/{id}", Tag: tag, Summary: "Get an event",
			Responses: map[int]openapi.Response{200: {Description: "the event", Data: EventSchema}},
			Errors:    []string{api.CodeNotFound}},
		{Method: "POST", Path: "/v1/events/{id}/resend", Tag: tag, Summary: "Deliver an event again",
			Description: "Queues a new delivery of the event to the endpoint endpoint_id (active, subscribed or not), or without it " +
				"to every active endpoint subscribed to the event now. Each delivery is retried and logged (GET /v1/webhooks/logs) " +
				"like any other. At most 60 resends per minute per merchant and environment. Accepts X-Idempotency-Key. The body is optional.",
			Body:       openapi.Obj(map[string]openapi.Schema{"endpoint_id": openapi.UUID("one endpoint; omit for every subscribed one")}),
			Idempotent: true,
			Responses: map[int]openapi.Response{200: {Description: "the endpoints a delivery was queued for", Data: openapi.Obj(map[string]openapi.Schema{
				"event_id": openapi.UUID(""), "endpoint_ids": openapi.Arr(openapi.UUID("")),
			}, "event_id", "endpoint_ids")}},
			Errors: []string{api.CodeNotFound, api.CodeValidation, api.CodeInvalidJSON, api.CodeInvalidState, api.CodeRateLimited}},
	}
}
