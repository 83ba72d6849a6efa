package ws

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// The byte level of reading a client (RFC 6455 sections 5 and 7): frames parsed, control
// frames answered, fragmented messages assembled, text checked as UTF-8, close codes
// validated. What a whole message means is messages.go's (message, then Server.handle).

// received parses the bytes the poller read and handles each complete message.
func (c *conn) received(data []byte) {
	c.lastRead.Store(c.srv.clock.Load())
	c.rmu.Lock()
	defer c.rmu.Unlock()
	buf := data
	if len(c.rbuf) > 0 {
		c.rbuf = append(c.rbuf, data...)
		buf = c.rbuf
	}
	max := c.srv.cfg.MaxMessage
	for len(buf) > 0 {
		f, n, err := parseFrame(buf, max)
		if err != nil {
			c.rbuf = nil
			if errors.Is(err, errTooBig) {
				c.fail(CloseMessageTooBig, "message too big")
			} else {
				c.fail(CloseProtocolError, "protocol error")
			}
			return
		}
		if n == 0 {
			break
		}
		buf = buf[n:]
		if !c.frame(f) {
			c.rbuf = nil
			return
		}
	}
	if len(buf) == 0 {
		c.rbuf = nil
	} else if len(c.rbuf) == 0 || &buf[0] != &c.rbuf[0] {
		c.rbuf = append([]byte(nil), buf...) // the rest of a frame: keep a copy (data is the poller's)
	} else {
		c.rbuf = append(c.rbuf[:0], buf...)
	}
	if len(c.rbuf) > max+16 {
		c.rbuf = nil
		c.fail(CloseMessageTooBig, "message too big")
	}
}

// frame handles one client frame (under rmu); false ends reading. Control frames may come
// between the fragments of a message (RFC 6455 5.4) and leave it as it is; a data frame
// while a fragmented message is open, or a continuation without one, is a protocol error.
// Text is checked as UTF-8 as it arrives, so an invalid fragment fails at once (1007).
func (c *conn) frame(f inFrame) bool {
	switch f.opcode {
	case opPing:
		c.send(controlFrame(opPong, f.payload))
		return true
	case opPong:
		return true
	case opClose:
		code, why := closeReply(f.payload)
		c.fail(code, why)
		return false
	case opText, opBinary:
		if c.msgOp != 0 {
			c.fail(CloseProtocolError, "protocol error: a new message before the last one's final fragment")
			return false
		}
		if !f.fin {
			if f.opcode == opText && !utf8Prefix(f.payload) {
				c.fail(CloseInvalidPayload, "text is not UTF-8")
				return false
			}
			c.msgOp = f.opcode
			c.msg = append(c.msg[:0], f.payload...)
			return true
		}
		if f.opcode == opText && !utf8.Valid(f.payload) {
			c.fail(CloseInvalidPayload, "text is not UTF-8")
			return false
		}
		c.message(f.opcode, f.payload)
		return true
	case opContinuation:
		if c.msgOp == 0 {
			c.fail(CloseProtocolError, "protocol error: a continuation without a message")
			return false
		}
		if len(c.msg)+len(f.payload) > c.srv.cfg.MaxMessage {
			c.fail(CloseMessageTooBig, "message too big")
			return false
		}
		// Only the tail can be cut mid-character: check from the last 3 bytes held on.
		from := max(0, len(c.msg)-3)
		for from > 0 && !utf8.RuneStart(c.msg[from]) {
			from--
		}
		c.msg = append(c.msg, f.payload...)
		if c.msgOp == opText && !(f.fin && utf8.Valid(c.msg[from:]) || !f.fin && utf8Prefix(c.msg[from:])) {
			c.fail(CloseInvalidPayload, "text is not UTF-8")
			return false
		}
		if f.fin {
			op, m := c.msgOp, c.msg
			c.msgOp, c.msg = 0, nil
			c.message(op, m)
		}
		return true
	}
	c.fail(CloseProtocolError, "protocol error: reserved opcode")
	return false
}

// utf8Prefix reports whether b is valid UTF-8 or valid UTF-8 followed by the first bytes
// of a character that more bytes could complete: a fragment of text may end mid-character.
func utf8Prefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	// Find where the last character starts (at most 3 bytes back) and check that what is
	// before it is valid and that it is a valid beginning.
	for k := 1; k <= 3 && k <= len(b); k++ {
		i := len(b) - k
		if !utf8.RuneStart(b[i]) {
			continue
		}
		return utf8.Valid(b[:i]) && incompleteRune(b[i:])
	}
	return false
}

// incompleteRune reports whether b (1-3 bytes) is the start of a valid UTF-8 encoding that
// is not yet complete: the lead byte says more bytes follow, and the continuation bytes so
// far are in the ranges that lead byte allows (no overlong form, no surrogate, nothing
// past U+10FFFF).
func incompleteRune(b []byte) bool {
	var need int
	lo, hi := byte(0x80), byte(0xBF) // the allowed range of the second byte
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 2
	case c == 0xE0:
		need, lo = 3, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 3
	case c == 0xED:
		need, hi = 3, 0x9F
	case c == 0xF0:
		need, lo = 4, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 4
	case c == 0xF4:
		need, hi = 4, 0x8F
	default:
		return false
	}
	if len(b) >= need {
		return false
	}
	for i := 1; i < len(b); i++ {
		l, h := byte(0x80), byte(0xBF)
		if i == 1 {
			l, h = lo, hi
		}
		if b[i] < l || b[i] > h {
			return false
		}
	}
	return true
}

// closeReply is the close the server answers a client's close with (RFC 6455 5.5.1, 7.4):
// no code for an empty close is answered 1000; a code a client may send is echoed; a
// one-byte payload, a code that must not appear on the wire (1005, 1006, 1015), an
// unassigned one, or a reason that is not UTF-8 is answered as the protocol error it is.
func closeReply(p []byte) (code int, why string) {
	switch {
	case len(p) == 0:
		return CloseNormal, ""
	case len(p) == 1:
		return CloseProtocolError, "protocol error: a close payload of one byte"
	}
	c := int(binary.BigEndian.Uint16(p))
	if !validCloseCode(c) {
		return CloseProtocolError, "protocol error: invalid close code"
	}
	if !utf8.Valid(p[2:]) {
		return CloseInvalidPayload, "close reason is not UTF-8"
	}
	return c, ""
}

// validCloseCode reports whether a client may send code in a close frame: the codes RFC
// 6455 7.4.1 defines for use on the wire, the IANA-registered 1012-1014, and the ranges
// for libraries and applications (3000-4999).
func validCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}
