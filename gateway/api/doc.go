// Package api is the HTTP edge's vocabulary, shared by every handler of the gateway: the
// response envelope, the one table of error codes and their statuses, strict JSON decoding
// with per-field errors, validation, pagination, and the authenticated principal of a request.
//
// Success: {"success": true, "data": ..., "message"?: "..."}.
// Failure: {"success": false, "message": "CODE", "detail"?: "sentence", "errors"?: [{field, message}]}.
package api
