package openapi

// sharedSchemas are the components every document has: the error envelope, a field error and
// the page meta of the list shapes.
func sharedSchemas() map[string]any {
	fieldError := Obj(map[string]Schema{
		"field":   Str("the request field (a JSON path such as items[0].quantity, or a query or header name)"),
		"message": Str("what is wrong with it"),
	}, "field", "message")
	return map[string]any{
		"FieldError": fieldError,
		"Error": Schema{
			"type":        "object",
			"description": "the error envelope: message is the machine-readable code",
			"properties": map[string]Schema{
				"success": Bool("always false"),
				"message": Str("machine-readable error code, e.g. VALIDATION_ERROR, NOT_FOUND, RATE_LIMITED"),
				"detail":  Str("a sentence for people"),
				"errors":  Arr(Ref("FieldError")),
			},
			"required": []string{"success", "message"},
			"example": map[string]any{
				"success": false, "message": "VALIDATION_ERROR", "detail": "request validation failed",
				"errors": []any{map[string]any{"field": "quantity", "message": "must be a positive decimal string"}},
			},
		},
		"PageMeta": Schema{
			"type":        "object",
			"description": "paging of a list: the page (1-indexed), its size, the total number of items and of pages",
			"properties": map[string]Schema{
				"total": Int("items in all pages"), "page": Int("this page, from 1"),
				"limit": Int("items per page"), "total_pages": Int("pages in all"),
			},
			"example": map[string]any{"total": 42, "page": 1, "limit": 20, "total_pages": 3},
		},
	}
}

// sharedParameters are the header parameters operations refer to.
func sharedParameters() map[string]any {
	return map[string]any{
		"IdempotencyKey": map[string]any{
			"name": "X-Idempotency-Key", "in": "header", "required": false,
			"description": "1 to 255 printable ASCII characters making a retry safe: the same key, method, path and body " +
				"within 24 hours replays the stored response (header Idempotent-Replayed: true); the same key with another " +
				"body is 422 IDEMPOTENCY_KEY_REUSED; while the first request runs, 409 IDEMPOTENCY_KEY_IN_USE. Scoped by " +
				"merchant and environment.",
			"schema":  Schema{"type": "string", "minLength": 1, "maxLength": 255},
			"example": "order-2026-01-02-0001",
		},
		"IdempotencyKeyAlso": map[string]any{
			"name": "Idempotency-Key", "in": "header", "required": false,
			"description": "the same as X-Idempotency-Key, in the spelling this route also accepts",
			"schema":      Schema{"type": "string", "minLength": 1, "maxLength": 255},
		},
		"Environment": map[string]any{
			"name": "X-Svc-Environment", "in": "header", "required": false,
			"description": "bearer tokens only: live to act on live data (default sandbox); an API key's environment is its own",
			"schema":      Enum("sandbox", "live"),
		},
	}
}

// sharedHeaders are the response headers operations refer to.
func sharedHeaders() map[string]any {
	h := func(description string, schema Schema) map[string]any {
		return map[string]any{"description": description, "schema": schema}
	}
	return map[string]any{
		"X-RateLimit-Limit":     h("requests allowed per minute for this merchant (or client address on /v1/auth)", Int("")),
		"X-RateLimit-Remaining": h("requests left in the current window", Int("")),
		"X-RateLimit-Reset":     h("seconds until the bucket is full again", Int("")),
		"Retry-After":           h("seconds to wait before retrying (429, and 503 from a busy or absent dependency)", Int("")),
		"Idempotent-Replayed":   h("true when the response is the stored answer to an earlier request with the same key", Enum("true")),
		"X-Request-Id":          h("the request's id (yours if you sent one, else generated): quote it when reporting a problem", Str("")),
	}
}
