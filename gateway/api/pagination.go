package api

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"
)

// PageMeta is the paging block of a page-based list.
type PageMeta struct {
	Total      int64 `json:"total"`
	Page       int   `json:"page"`
	Limit      int   `json:"limit"`
	TotalPages int64 `json:"total_pages"`
}

// PageParams is page-based paging read from the query string.
type PageParams struct {
	Page  int
	Limit int
}

// Offset is the number of rows before this page.
func (p PageParams) Offset() int { return (p.Page - 1) * p.Limit }

// Meta builds the paging block for a total count.
func (p PageParams) Meta(total int64) PageMeta {
	pages := int64(0)
	if total > 0 {
		pages = (total + int64(p.Limit) - 1) / int64(p.Limit)
	}
	return PageMeta{Total: total, Page: p.Page, Limit: p.Limit, TotalPages: pages}
}

// Paging reads page (1-indexed, default 1) and the limit parameter limitName (default def,
// at most max) from the query string; out-of-range values are field errors, not clamped.
func Paging(ctx *fasthttp.RequestCtx, limitName string, def, max int) (PageParams, error) {
	var v Validator
	p := PageParams{Page: 1, Limit: def}
	args := ctx.QueryArgs()
	if raw := args.Peek("page"); len(raw) > 0 {
		n, err := strconv.Atoi(string(raw))
		if v.Check(err == nil && n >= 1 && n <= 1_000_000, "page", "must be an integer of at least 1") {
			p.Page = n
		}
	}
	if raw := args.Peek(limitName); len(raw) > 0 {
		n, err := strconv.Atoi(string(raw))
		if v.Check(err == nil && n >= 1 && n <= max, limitName, fmt.Sprintf("must be an integer from 1 to %d", max)) {
			p.Limit = n
		}
	}
	return p, v.Err()
}

// CursorParams is cursor-based paging: an opaque position and a limit.
type CursorParams struct {
	After string // decoded cursor; empty for the first page
	Limit int
}

// Cursor reads `cursor` and `limit` (default def, at most max) from the query string.
func Cursor(ctx *fasthttp.RequestCtx, def, max int) (CursorParams, error) {
	var v Validator
	c := CursorParams{Limit: def}
	args := ctx.QueryArgs()
	if raw := args.Peek("limit"); len(raw) > 0 {
		n, err := strconv.Atoi(string(raw))
		if v.Check(err == nil && n >= 1 && n <= max, "limit", fmt.Sprintf("must be an integer from 1 to %d", max)) {
			c.Limit = n
		}
	}
	if raw := args.Peek("cursor"); len(raw) > 0 {
		b, err := base64.RawURLEncoding.DecodeString(string(raw))
		if v.Check(err == nil && len(b) > 0, "cursor", "is not a cursor returned by this API") {
			c.After = string(b)
		}
	}
	return c, v.Err()
}

// EncodeCursor makes the opaque next_cursor for a position.
func EncodeCursor(position string) string {
	if position == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(position))
}
