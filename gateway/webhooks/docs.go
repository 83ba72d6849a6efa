package webhooks

import (
	"svc/gateway/api"
	"svc/gateway/openapi"
	"svc/payments/events"
)

func eventNames() []string {
	all := events.All()
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = string(e)
	}
	return out
}

func endpointSchema(withSecret bool) openapi.Schema {
	props := map[string]openapi.Schema{
		"id":              openapi.UUID(""),
		"url":             openapi.Str("HTTPS URL deliveries are POSTed to"),
		"events":          openapi.Arr(openapi.Enum(eventNames()...)),
		"is_active":       openapi.Bool("false when disabled by the merchant or by a 410 Gone answer"),
		"disabled_reason": openapi.Nullable(openapi.Str("why the service disabled it")),
		"created_at":      openapi.Time(""),
		"updated_at":      openapi.Time(""),
	}
	if withSecret {
		props["secret"] = openapi.Str("whsec_ secret for X-Svc-Signature; shown only now")
	}
	name := "WebhookEndpoint"
	if withSecret {
		name = "WebhookEndpointWithSecret"
	}
	return openapi.Named(name, openapi.Obj(props, "id", "url", "events", "is_active", "created_at"))
}

// Docs documents every route of Register.
func (rs *Routes) Docs() []openapi.Op {
	const tag = "webhooks"
	idErr := []string{api.CodeNotFound}
	logEntry := openapi.Named("WebhookLog", openapi.Obj(map[string]openapi.Schema{
		"id":           openapi.UUID(""),
		"endpoint_id":  openapi.UUID(""),
		"endpoint_url": openapi.Str(""),
		"event_id":     openapi.Nullable(openapi.UUID("null for test sends")),
		"event":        openapi.Str(""),
		"payload":      openapi.Schema{"type": "object", "description": "the exact body sent"},
		"status_code":  openapi.Nullable(openapi.Int("null when no HTTP answer came back")),
		"success":      openapi.Bool("a 2xx answer"),
		"error":        openapi.Nullable(openapi.Str("")),
		"duration_ms":  openapi.Int(""),
		"attempt":      openapi.Int("1 for the first attempt"),
		"test":         openapi.Bool("sent by the test operation"),
		"created_at":   openapi.Time(""),
	}))
	return []openapi.Op{
		{Method: "POST", Path: "/v1/webhooks/endpoints", Tag: tag, Summary: "Register a webhook endpoint",
			Description: "The secret is returned only here and on rotate-secret. An empty events list subscribes to every event. Accepts X-Idempotency-Key.",
			Idempotent:  true,
			Body: openapi.Obj(map[string]openapi.Schema{
				"url":    openapi.Str("HTTPS URL"),
				"events": openapi.Arr(openapi.Enum(eventNames()...)),
			}, "url"),
			Responses: map[int]openapi.Response{201: {Description: "created", Data: endpointSchema(true)}},
			Errors:    []string{api.CodeValidation, api.CodeInvalidJSON, api.CodeUnsupportedMedia, api.CodeProviderUnavailable}},
		{Method: "GET", Path: "/v1/webhooks/endpoints", Tag: tag, Summary: "List webhook endpoints",
			Responses: map[int]openapi.Response{200: {Description: "the endpoints (data is the array, paging in meta)", Data: openapi.Arr(endpointSchema(false))}}},
		{Method: "GET", Path: "/v1/webhooks/endpoints/{id}", Tag: tag, Summary: "Get a webhook endpoint",
			Responses: map[int]openapi.Response{200: {Description: "the endpoint", Data: endpointSchema(false)}}, Errors: idErr},
		{Method: "PATCH", Path: "/v1/webhooks/endpoints/{id}", Tag: tag, Summary: "Change url, events or is_active",
			Description: "Disabling stops the endpoint's pending deliveries.",
			Body: openapi.Obj(map[string]openapi.Schema{
				"url":       openapi.Str(""),
				"events":    openapi.Arr(openapi.Enum(eventNames()...)),
				"is_active": openapi.Bool(""),
			}),
			Responses: map[int]openapi.Response{200: {Description: "the endpoint", Data: endpointSchema(false)}},
			Errors:    []string{api.CodeNotFound, api.CodeValidation, api.CodeInvalidJSON, api.CodeUnsupportedMedia}},
		{Method: "DELETE", Path: "/v1/webhooks/endpoints/{id}", Tag: tag, Summary: "Delete a webhook endpoint; its pending deliveries stop",
			Responses: map[int]openapi.Response{200: {Description: "deleted", Data: openapi.Obj(map[string]openapi.Schema{"id": openapi.UUID("")})}}, Errors: idErr},
		{Method: "POST", Path: "/v1/webhooks/endpoints/{id}/rotate-secret", Tag: tag, Summary: "Replace the signing secret, keeping the old one valid for a while",
			Description: "Until previous_secret_expires_at every delivery carries two signatures in X-Svc-Signature, separated by a space " +
				"(the new secret's, then the old one's), so a receiver with either secret accepts it. expires_in is in seconds: default " +
				"86400 (24 h), at most 604800 (7 days), 0 retires the old secret at once. A secret kept by an earlier rotation is dropped. " +
				"The body is optional. Accepts X-Idempotency-Key.",
			Body:       openapi.Obj(map[string]openapi.Schema{"expires_in": openapi.Int("seconds the old secret stays valid (0 to 604800, default 86400)")}),
			Idempotent: true,
			Responses: map[int]openapi.Response{200: {Description: "the new secret", Data: openapi.Obj(map[string]openapi.Schema{
				"id": openapi.UUID(""), "secret": openapi.Str("whsec_..."),
				"previous_secret_expires_at": openapi.Nullable(openapi.Time("until when the old secret still signs; null when it stopped at once")),
			}, "id", "secret", "previous_secret_expires_at")}},
			Errors: []string{api.CodeNotFound, api.CodeValidation, api.CodeInvalidJSON}},
		{Method: "POST", Path: "/v1/webhooks/endpoints/{id}/test", Tag: tag, Summary: "Send a test delivery now",
			Description: "Sends the named event (default test.webhook) with sample data and X-Svc-Test-Mode: true, synchronously. The body is optional.",
			Body:        openapi.Obj(map[string]openapi.Schema{"event": openapi.Enum(eventNames()...)}),
			Responses: map[int]openapi.Response{200: {Description: "the outcome", Data: openapi.Obj(map[string]openapi.Schema{
				"success":     openapi.Bool("the endpoint answered 2xx"),
				"event":       openapi.Str(""),
				"status_code": openapi.Nullable(openapi.Int("")),
				"error":       openapi.Nullable(openapi.Str("")),
				"duration_ms": openapi.Int(""),
				"log_id":      openapi.UUID(""),
			}, "success")}},
			Errors: []string{api.CodeNotFound, api.CodeValidation, api.CodeInvalidJSON}},
		{Method: "GET", Path: "/v1/webhooks/logs", Tag: tag, Summary: "Delivery attempts, newest first",
			Query: []openapi.Param{
				{Name: "event", Description: "event name", Schema: openapi.Enum(eventNames()...)},
				{Name: "endpoint_id", Schema: openapi.UUID("")},
				{Name: "success", Schema: openapi.Bool("")},
				{Name: "page", Schema: openapi.Int("1-indexed, default 1")},
				{Name: "limit", Schema: openapi.Int("default 50, at most 100")},
			},
			Responses: map[int]openapi.Response{200: {Description: "a page of log entries", Data: openapi.Obj(map[string]openapi.Schema{
				"items": openapi.Arr(logEntry),
				"meta": openapi.Obj(map[string]openapi.Schema{
					"total": openapi.Int(""), "page": openapi.Int(""), "limit": openapi.Int(""), "total_pages": openapi.Int(""),
				}),
			})}},
			Errors: []string{api.CodeValidation}},
	}
}
