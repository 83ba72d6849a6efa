package trading

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// decodePlaceOrder reads the body of POST /v1/trading/orders. The usual body (a flat object
// of the known fields with plain strings, booleans and nulls, application/json) is parsed
// here without reflection or allocations beyond the strings it keeps: placing orders is the
// hottest route. Anything else (escapes, non-ASCII, numbers, nesting, other keys, another
// Content-Type, malformed JSON) goes to api.Decode, so its answers and errors are exactly
// api.Decode's. TestDecodePlaceOrder checks both paths agree.
func decodePlaceOrder(ctx *fasthttp.RequestCtx, req *placeOrderRequest) error {
	if ct := ctx.Request.Header.ContentType(); bytes.Equal(ct, jsonType) && fastPlaceOrder(ctx.PostBody(), req) {
		return nil
	}
	*req = placeOrderRequest{}
	return api.Decode(ctx, req)
}

var jsonType = []byte("application/json")

// fastPlaceOrder parses body into req and reports whether it could; on false req is
// partly filled and must be decoded again.
func fastPlaceOrder(body []byte, req *placeOrderRequest) bool {
	p := skipSpace(body, 0)
	if p >= len(body) || body[p] != '{' {
		return false
	}
	p = skipSpace(body, p+1)
	if p < len(body) && body[p] == '}' {
		return len(skipTail(body, p+1)) == 0
	}
	for {
		key, q, ok := plainString(body, p)
		if !ok {
			return false
		}
		p = skipSpace(body, q)
		if p >= len(body) || body[p] != ':' {
			return false
		}
		p = skipSpace(body, p+1)
		if p >= len(body) {
			return false
		}
		var (
			str    []byte
			isStr  bool
			isNull bool
			isBool bool
			bval   bool
		)
		switch {
		case body[p] == '"':
			if str, q, ok = plainString(body, p); !ok {
				return false
			}
			isStr, p = true, q
		case bytes.HasPrefix(body[p:], []byte("null")):
			isNull, p = true, p+4
		case bytes.HasPrefix(body[p:], []byte("true")):
			isBool, bval, p = true, true, p+4
		case bytes.HasPrefix(body[p:], []byte("false")):
			isBool, p = true, p+5
		default:
			return false
		}
		if !setField(req, key, str, isStr, isNull, isBool, bval) {
			return false
		}
		p = skipSpace(body, p)
		if p >= len(body) {
			return false
		}
		if body[p] == '}' {
			return len(skipTail(body, p+1)) == 0
		}
		if body[p] != ',' {
			return false
		}
		p = skipSpace(body, p+1)
	}
}

// setField stores one value; false when the key is not a field or the value's type is not
// the field's (api.Decode then reports it).
func setField(req *placeOrderRequest, key, str []byte, isStr, isNull, isBool, bval bool) bool {
	var s *string
	var ptr **string
	switch string(key) { // no allocation: the compiler compares in place
	case "symbol":
		s = &req.Symbol
	case "side":
		s = &req.Side
	case "type":
		s = &req.Type
	case "time_in_force":
		s = &req.TimeInForce
	case "client_order_id":
		s = &req.ClientOrderID
	case "self_trade_prevention":
		s = &req.SelfTradePrevention
	case "quantity":
		ptr = &req.Quantity
	case "price":
		ptr = &req.Price
	case "quote_quantity":
		ptr = &req.QuoteQuantity
	case "post_only":
		switch {
		case isBool:
			req.PostOnly = bval
		case !isNull:
			return false
		}
		return true
	default:
		return false
	}
	switch {
	case isNull: // encoding/json: null leaves a string as it is and sets a pointer to nil
		if ptr != nil {
			*ptr = nil
		}
		return true
	case !isStr:
		return false
	case s != nil:
		*s = intern(str)
	default:
		v := string(str)
		*ptr = &v
	}
	return true
}

// plainString reads the string starting at body[p] ('"'): printable ASCII without escapes.
func plainString(body []byte, p int) ([]byte, int, bool) {
	if p >= len(body) || body[p] != '"' {
		return nil, p, false
	}
	for i := p + 1; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			return body[p+1 : i], i + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, p, false
		}
	}
	return nil, p, false
}

func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r') {
		p++
	}
	return p
}

func skipTail(b []byte, p int) []byte { return b[skipSpace(b, p):] }

// intern returns the enum values of the order body as constants, so the usual body
// allocates only its client order id, quantity and price.
func intern(b []byte) string {
	switch string(b) {
	case "USDT-NGN":
		return "USDT-NGN"
	case "USDC-NGN":
		return "USDC-NGN"
	case "USD-NGN":
		return "USD-NGN"
	case "buy":
		return "buy"
	case "sell":
		return "sell"
	case "limit":
		return "limit"
	case "market":
		return "market"
	case "GTC":
		return "GTC"
	case "IOC":
		return "IOC"
	case "FOK":
		return "FOK"
	case "cancel_resting":
		return "cancel_resting"
	case "cancel_taker":
		return "cancel_taker"
	case "cancel_both":
		return "cancel_both"
	}
	return string(b)
}
