package api

import (
	"github.com/valyala/fasthttp"

	"svc/payments/metadata"
)

// MetadataFilter reads a list's metadata[KEY]=VALUE query parameters (payments/metadata
// checks them); nil when there are none.
func MetadataFilter(ctx *fasthttp.RequestCtx) (metadata.Filter, error) {
	return metadata.ParseFilter(func(f func(name, value string)) {
		ctx.QueryArgs().VisitAll(func(k, v []byte) { f(string(k), string(v)) })
	})
}
