// Package api is the HTTP edge's vocabulary, shared by every handler of the gateway: the
// response envelope, the one table of error codes and their statuses, strict JSON decoding
// with per-field errors, validation, pagination, the authenticated principal of a request,
// and the generic handlers that carry a resource's glue (handlers.go: Get, Create, AddTo,
// ListPage, ListOn...).
//
// Success: {"success": true, "data": ..., "message"?: "..."}.
// Failure: {"success": false, "message": "CODE", "detail"?: "sentence", "errors"?: [{field, message}]}.
package api
