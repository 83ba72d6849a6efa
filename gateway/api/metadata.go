package api

import (
	"encoding/json"
	"errors"

	"github.com/valyala/fasthttp"

	"svc/payments"
	"svc/payments/metadata"
)

// MetadataFilter reads a list's metadata[KEY]=VALUE query parameters (payments/metadata
// checks them); nil when there are none.
func MetadataFilter(ctx *fasthttp.RequestCtx) (metadata.Filter, error) {
	return metadata.ParseFilter(func(f func(name, value string)) {
		ctx.QueryArgs().VisitAll(func(k, v []byte) { f(string(k), string(v)) })
	})
}

// Metadata checks a request's metadata field with payments/metadata (the one place its
// limits live) and adds every problem to v; patch reads it as an update (see
// metadata.Parse). It returns the metadata and whether the field was given.
func (v *Validator) Metadata(raw json.RawMessage, patch bool) (metadata.Metadata, bool) {
	m, present, err := metadata.Parse(raw, patch)
	v.addProblems(err)
	return m, present
}

// MetadataFilter is MetadataFilter for a handler with a Validator: every problem with the
// filter is added to v (nil filter then).
func (v *Validator) MetadataFilter(ctx *fasthttp.RequestCtx) metadata.Filter {
	f, err := MetadataFilter(ctx)
	v.addProblems(err)
	return f
}

// addProblems adds the field errors of a payments.ValidationError to v.
func (v *Validator) addProblems(err error) {
	var ve *payments.ValidationError
	if errors.As(err, &ve) {
		for _, f := range ve.Fields {
			v.Add(f.Field, f.Message)
		}
	}
}
