package api

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// PathUUID reads the UUID path parameter name. Anything but a UUID cannot name a record, so
// it answers notFound (the resource's 404 error) and false.
func PathUUID(ctx *fasthttp.RequestCtx, name string, notFound error) (uuid.UUID, bool) {
	s, _ := ctx.UserValue(name).(string)
	id, err := uuid.Parse(s)
	if err != nil {
		Fail(ctx, notFound)
		return uuid.Nil, false
	}
	return id, true
}
