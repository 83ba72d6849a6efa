package ws

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// frame is one server-to-client WebSocket frame, header and payload together (RFC 6455
// section 5.2; server frames are never masked). A frame is built once and shared,
// read-only, by every connection it is queued on: a broadcast costs one encoding however
// many subscribers there are, and a connection's pending frames go out in one writev.
type frame struct {
	b    []byte
	book *bookFeed // the order book channel a diff or snapshot is of: a lagging reader's unsent ones give way to a later snapshot
}

const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// Close codes (RFC 6455 section 7.4.1) the server sends.
const (
	CloseNormal          = 1000
	CloseGoingAway       = 1001
	CloseProtocolError   = 1002
	CloseInvalidPayload  = 1007 // a text message that is not UTF-8
	ClosePolicyViolation = 1008
	CloseMessageTooBig   = 1009
	CloseInternalError   = 1011
	CloseTryAgainLater   = 1013
)

// appendHeader appends a final, unmasked frame header for opcode and n payload bytes.
func appendHeader(b []byte, opcode byte, n int) []byte {
	b = append(b, 0x80|opcode)
	switch {
	case n < 126:
		return append(b, byte(n))
	case n <= 0xFFFF:
		return binary.BigEndian.AppendUint16(append(b, 126), uint16(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
	}
}

// textFrame frames msg as one text message.
func textFrame(msg []byte) *frame {
	b := make([]byte, 0, len(msg)+10)
	b = appendHeader(b, opText, len(msg))
	return &frame{b: append(b, msg...)}
}

// controlFrame frames a control message (payload at most 125 bytes).
func controlFrame(opcode byte, payload []byte) *frame {
	if len(payload) > 125 {
		payload = payload[:125]
	}
	b := appendHeader(make([]byte, 0, len(payload)+2), opcode, len(payload))
	return &frame{b: append(b, payload...)}
}

// closeFrame frames a close with code and reason. A reason longer than the 123 bytes a
// close frame holds is cut at a character boundary: the client checks it as UTF-8.
func closeFrame(code int, why string) *frame {
	if len(why) > 123 {
		n := 123
		for n > 0 && !utf8.RuneStart(why[n]) {
			n--
		}
		why = why[:n]
	}
	p := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(why)), uint16(code))
	p = append(p, why...)
	return controlFrame(opClose, p)
}

var pingFrame = controlFrame(opPing, nil)

// Errors of reading client frames; each closes the connection with its code.
var (
	errProtocol = errors.New("protocol error")
	errTooBig   = errors.New("message too big")
)

// inFrame is one parsed client frame.
type inFrame struct {
	fin     bool
	opcode  byte
	payload []byte // unmasked in place; valid until the next read
}

// parseFrame parses one client frame at the start of b. It returns the frame and the
// bytes it took, or n == 0 when b does not hold a whole frame yet. Client frames must be
// masked; payloads over max (and control payloads over 125 bytes) are errors.
func parseFrame(b []byte, max int) (f inFrame, n int, err error) {
	if len(b) < 2 {
		return f, 0, nil
	}
	if b[0]&0x70 != 0 {
		return f, 0, errProtocol // no extensions were negotiated
	}
	f.fin, f.opcode = b[0]&0x80 != 0, b[0]&0x0F
	masked := b[1]&0x80 != 0
	if !masked {
		return f, 0, errProtocol
	}
	size := int64(b[1] & 0x7F)
	h := 2
	switch size {
	case 126:
		if len(b) < 4 {
			return f, 0, nil
		}
		size, h = int64(binary.BigEndian.Uint16(b[2:])), 4
	case 127:
		if len(b) < 10 {
			return f, 0, nil
		}
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return f, 0, errProtocol // the most significant bit must be 0 (RFC 6455 5.2)
		}
		if u > 1<<40 {
			return f, 0, errTooBig
		}
		size, h = int64(u), 10
	}
	if f.opcode >= opClose {
		if size > 125 || !f.fin {
			return f, 0, errProtocol
		}
	} else if size > int64(max) {
		return f, 0, errTooBig
	}
	if int64(len(b)) < int64(h)+4+size {
		return f, 0, nil
	}
	key := b[h : h+4]
	p := b[h+4 : h+4+int(size)]
	for i := range p {
		p[i] ^= key[i&3]
	}
	f.payload = p
	return f, h + 4 + int(size), nil
}
