package openapi

// The schema pieces below are shared by the resources' documentation: exact decimals written
// as JSON numbers, the inline paging block and parameters of page-based lists, and the note
// on idempotency keys.

// Number is an exact decimal written as a JSON number.
func Number(description string) Schema {
	return Schema{"type": "number", "description": description}
}

func pageMetaProps() map[string]Schema {
	return map[string]Schema{"total": Int(""), "page": Int(""), "limit": Int(""), "total_pages": Int("")}
}

// PageMeta is the paging block of page-based lists, inline.
var PageMeta = Obj(pageMetaProps())

// PageMetaRequired is PageMeta with every field required.
var PageMetaRequired = Obj(pageMetaProps(), "total", "page", "limit", "total_pages")

// PagingParams are page and limit (default 20, at most max).
func PagingParams(max string) []Param {
	return []Param{{Name: "page", Schema: Int("1-indexed, default 1")}, {Name: "limit", Schema: Int("default 20, at most " + max)}}
}

// PageOf is the {items, meta} page of a list of item.
func PageOf(item Schema) Schema {
	return Obj(map[string]Schema{"items": Arr(item), "meta": PageMeta})
}

// IdempotencyNote is appended to the description of POSTs that take keys.
const IdempotencyNote = " Send `X-Idempotency-Key` (1 to 255 printable ASCII characters) to make retries safe: the same key and body " +
	"within 24 hours replays the stored response (header `Idempotent-Replayed: true`); the same key with another body is 422 " +
	"IDEMPOTENCY_KEY_REUSED; while the first request runs, 409 IDEMPOTENCY_KEY_IN_USE."
