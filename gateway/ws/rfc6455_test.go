package ws_test

// The server's framing against RFC 6455, driven over a real socket with hand-built frames:
// the cases of the Autobahn test suite's categories that apply to a server that only
// receives small client messages (1 framing, 2 pings and pongs, 3 reserved bits, 4
// opcodes, 5 fragmentation, 6 UTF-8, 7 close handling, 9 limits, scaled to MaxMessage).
// Categories 10 (auto-fragmentation of what the server sends: its frames are whole), 12
// and 13 (permessage-deflate: no extension is negotiated, so RSV1 is a protocol error,
// category 3) do not apply. Each row names the Autobahn case it follows.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"svc/gateway/ws"
)

// rawConn is a WebSocket client that writes frames exactly as told.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string, header string) (*rawConn, *http.Response) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	req := "GET /v1/ws?environment=sandbox HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" + header + "\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	return &rawConn{t: t, nc: nc, br: br}, resp
}

// frame builds a masked client frame; b0 is the first byte (FIN, RSV and opcode as given).
func clientFrame(b0 byte, payload []byte) []byte {
	b := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xFFFF:
		b = binary.BigEndian.AppendUint16(append(b, 0x80|126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, 0x80|127), uint64(n))
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i&3])
	}
	return b
}

const (
	fin    = 0x80
	opCont = 0x0
	opText = 0x1
	opBin  = 0x2
	opCls  = 0x8
	opPing = 0x9
	opPong = 0xA
)

type inFrame struct {
	fin     bool
	rsv     byte
	op      byte
	payload []byte
}

// read reads one server frame; ok false on EOF or timeout.
func (c *rawConn) read(wait time.Duration) (f inFrame, ok bool) {
	_ = c.nc.SetReadDeadline(time.Now().Add(wait))
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return f, false
	}
	f.fin, f.rsv, f.op = h[0]&0x80 != 0, h[0]&0x70, h[0]&0x0F
	if h[1]&0x80 != 0 {
		c.t.Fatalf("the server sent a masked frame")
	}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var x [2]byte
		_, _ = io.ReadFull(c.br, x[:])
		n = uint64(binary.BigEndian.Uint16(x[:]))
	case 127:
		var x [8]byte
		_, _ = io.ReadFull(c.br, x[:])
		n = binary.BigEndian.Uint64(x[:])
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, f.payload); err != nil {
		return f, false
	}
	if f.rsv != 0 {
		c.t.Fatalf("the server set reserved bits %#x", f.rsv)
	}
	return f, true
}

// want is what the server answers: a pong with a payload, a text message containing a
// string, or a close with a code (after which the server closes the socket).
type want struct {
	pong  []byte
	text  string
	close int
}

func pong(p string) want   { return want{pong: []byte(p)} }
func text(s string) want   { return want{text: s} }
func closed(code int) want { return want{close: code} }

// pingOp is a text message the server answers with a pong message carrying id.
func pingOp(id string, pad int) []byte {
	m := fmt.Sprintf(`{"op":"ping","id":%q,"x":"`, id)
	return []byte(m + strings.Repeat("x", max(0, pad-len(m)-2)) + `"}`)
}

func TestRFC6455(t *testing.T) {
	r := newRig(t, 1, ws.Config{MaxMessage: 4096, PublicRate: 1_000_000, PublicConns: 1000})
	bin125 := bytes.Repeat([]byte{0xFE}, 125)
	ping := func(id string) []byte { return pingOp(id, 0) }
	split := func(b []byte, at ...int) [][]byte { // b cut at the given offsets
		var out [][]byte
		last := 0
		for _, a := range at {
			out = append(out, b[last:a])
			last = a
		}
		return append(out, b[last:])
	}
	frag := func(op byte, parts [][]byte) [][]byte { // one message in fragments
		var out [][]byte
		for i, p := range parts {
			b0 := byte(opCont)
			if i == 0 {
				b0 = op
			}
			if i == len(parts)-1 {
				b0 |= fin
			}
			out = append(out, clientFrame(b0, p))
		}
		return out
	}
	f := func(b0 byte, p []byte) [][]byte { return [][]byte{clientFrame(b0, p)} }
	cat := func(fs ...[][]byte) [][]byte {
		var out [][]byte
		for _, x := range fs {
			out = append(out, x...)
		}
		return out
	}
	closeP := func(code int, reason string) []byte {
		return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
	}
	kosme := "κόσμε" // Autobahn 6.2's valid text
	pingK := pingOp(kosme, 0)
	k := bytes.Index(pingK, []byte("κ")) + 1 // inside the two bytes of κ

	cases := []struct {
		name  string
		send  [][]byte
		bytes bool // write the frames' bytes one at a time (Autobahn 1.1.8, 2.6, 5.x "chopped")
		want  []want
	}{
		// 1 framing: text and binary messages of every length encoding up to the limit.
		{"1.1.1 text, empty", f(fin|opText, nil), false, []want{text("INVALID_JSON")}},
		{"1.1.2 text, 125 bytes", f(fin|opText, pingOp("a", 125)), false, []want{text(`"a"`)}},
		{"1.1.3 text, 126 bytes (16-bit length)", f(fin|opText, pingOp("b", 126)), false, []want{text(`"b"`)}},
		{"1.1.4 text, 127 bytes", f(fin|opText, pingOp("c", 127)), false, []want{text(`"c"`)}},
		{"1.1.5 text, 128 bytes", f(fin|opText, pingOp("d", 128)), false, []want{text(`"d"`)}},
		{"1.1.6 text, 4,096 bytes (the limit)", f(fin|opText, pingOp("e", 4096)), false, []want{text(`"e"`)}},
		{"1.1.8 text, 4,096 bytes written byte by byte", f(fin|opText, pingOp("f", 4096)), true, []want{text(`"f"`)}},
		{"1.1.x text, 64-bit length form", [][]byte{func() []byte {
			p := ping("g")
			b := []byte{fin | opText, 0x80 | 127}
			b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
			b = append(b, 0, 0, 0, 0) // key 0: payload as is
			return append(b, p...)
		}()}, false, []want{text(`"g"`)}},
		{"1.2.1 binary, empty", f(fin|opBin, nil), false, []want{text("INVALID_MESSAGE")}},
		{"1.2.3 binary, 126 bytes", f(fin|opBin, bytes.Repeat([]byte{0xFE}, 126)), false, []want{text("INVALID_MESSAGE")}},

		// 2 pings and pongs.
		{"2.1 ping, empty", f(fin|opPing, nil), false, []want{pong("")}},
		{"2.2 ping, text payload", f(fin|opPing, []byte("Hello, world!")), false, []want{pong("Hello, world!")}},
		{"2.3 ping, binary payload", f(fin|opPing, []byte{0, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0, 0xFF}), false, []want{pong("\x00\xff\xfe\xfd\xfc\xfb\x00\xff")}},
		{"2.4 ping, 125 bytes", f(fin|opPing, bin125), false, []want{pong(string(bin125))}},
		{"2.5 ping, 126 bytes", f(fin|opPing, append(bin125, 0xFE)), false, []want{closed(ws.CloseProtocolError)}},
		{"2.6 ping, 125 bytes written byte by byte", f(fin|opPing, bin125), true, []want{pong(string(bin125))}},
		{"2.7 unsolicited pong, empty", cat(f(fin|opPong, nil), f(fin|opText, ping("h"))), false, []want{text(`"h"`)}},
		{"2.8 unsolicited pong, payload", cat(f(fin|opPong, []byte("unsolicited")), f(fin|opText, ping("i"))), false, []want{text(`"i"`)}},
		{"2.9 pong then ping", cat(f(fin|opPong, []byte("x")), f(fin|opPing, []byte("y"))), false, []want{pong("y")}},
		{"2.10 ten pings", cat(f(fin|opPing, []byte("0")), f(fin|opPing, []byte("1")), f(fin|opPing, []byte("2")), f(fin|opPing, []byte("3")), f(fin|opPing, []byte("4")),
			f(fin|opPing, []byte("5")), f(fin|opPing, []byte("6")), f(fin|opPing, []byte("7")), f(fin|opPing, []byte("8")), f(fin|opPing, []byte("9"))), false,
			[]want{pong("0"), pong("1"), pong("2"), pong("3"), pong("4"), pong("5"), pong("6"), pong("7"), pong("8"), pong("9")}},

		// 3 reserved bits: no extension was negotiated, so any is a protocol error.
		{"3.1 RSV1 on text", f(fin|0x40|opText, ping("j")), false, []want{closed(ws.CloseProtocolError)}},
		{"3.2 RSV2 after a good message", cat(f(fin|opText, ping("k")), f(fin|0x20|opText, ping("l"))), false, []want{text(`"k"`), closed(ws.CloseProtocolError)}},
		{"3.3 RSV1+RSV2 (3) on text", f(fin|0x60|opText, ping("m")), false, []want{closed(ws.CloseProtocolError)}},
		{"3.4 RSV3 (4) on text", f(fin|0x10|opText, ping("n")), false, []want{closed(ws.CloseProtocolError)}},
		{"3.5 RSV1+RSV3 (5) on binary", f(fin|0x50|opBin, bin125), false, []want{closed(ws.CloseProtocolError)}},
		{"3.6 RSV2+RSV3 (6) on ping", f(fin|0x30|opPing, []byte("p")), false, []want{closed(ws.CloseProtocolError)}},
		{"3.7 all RSV (7) on close", f(fin|0x70|opCls, closeP(1000, "")), false, []want{closed(ws.CloseProtocolError)}},

		// 4 opcodes: the reserved ones are protocol errors.
		{"4.1.1 opcode 3", f(fin|3, nil), false, []want{closed(ws.CloseProtocolError)}},
		{"4.1.2 opcode 4 with payload", f(fin|4, []byte("reserved")), false, []want{closed(ws.CloseProtocolError)}},
		{"4.1.3 opcode 5 after a good message", cat(f(fin|opText, ping("o")), f(fin|5, nil)), false, []want{text(`"o"`), closed(ws.CloseProtocolError)}},
		{"4.1.4 opcode 6", f(fin|6, []byte("x")), false, []want{closed(ws.CloseProtocolError)}},
		{"4.1.5 opcode 7", f(fin|7, nil), false, []want{closed(ws.CloseProtocolError)}},
		{"4.2.1 opcode 11", f(fin|11, nil), false, []want{closed(ws.CloseProtocolError)}},
		{"4.2.2 opcode 12 with payload", f(fin|12, []byte("reserved")), false, []want{closed(ws.CloseProtocolError)}},
		{"4.2.3 opcode 13 after a good message", cat(f(fin|opText, ping("p")), f(fin|13, nil)), false, []want{text(`"p"`), closed(ws.CloseProtocolError)}},
		{"4.2.4 opcode 14", f(fin|14, nil), false, []want{closed(ws.CloseProtocolError)}},
		{"4.2.5 opcode 15", f(fin|15, nil), false, []want{closed(ws.CloseProtocolError)}},

		// 5 fragmentation.
		{"5.1 ping in two fragments", cat(f(opPing, []byte("a")), f(fin|opCont, []byte("b"))), false, []want{closed(ws.CloseProtocolError)}},
		{"5.2 pong in two fragments", cat(f(opPong, []byte("a")), f(fin|opCont, []byte("b"))), false, []want{closed(ws.CloseProtocolError)}},
		{"5.3 text in two fragments", frag(opText, split(ping("q"), 5)), false, []want{text(`"q"`)}},
		{"5.4 text in two fragments, byte by byte", frag(opText, split(ping("r"), 5)), true, []want{text(`"r"`)}},
		{"5.6 text in two fragments, a ping between", cat(frag(opText, split(ping("s"), 5))[:1], f(fin|opPing, []byte("mid")), frag(opText, split(ping("s"), 5))[1:]), false,
			[]want{pong("mid"), text(`"s"`)}},
		{"5.8 the same, byte by byte", cat(frag(opText, split(ping("t"), 5))[:1], f(fin|opPing, []byte("mid")), frag(opText, split(ping("t"), 5))[1:]), true,
			[]want{pong("mid"), text(`"t"`)}},
		{"5.9 a continuation without a message", cat(f(fin|opCont, []byte("x")), f(fin|opText, ping("u"))), false, []want{closed(ws.CloseProtocolError)}},
		{"5.11 an unfinished continuation without a message", f(opCont, []byte("x")), false, []want{closed(ws.CloseProtocolError)}},
		{"5.15 a continuation after the final fragment", cat(frag(opText, split(ping("v"), 5)), f(fin|opCont, []byte("x"))), false, []want{text(`"v"`), closed(ws.CloseProtocolError)}},
		{"5.17 a text frame while a message is open", cat(f(opText, []byte(`{"op":`)), f(fin|opText, ping("w"))), false, []want{closed(ws.CloseProtocolError)}},
		{"5.19 five fragments, pings between", cat(frag(opText, split(ping("x"), 2, 4, 6, 8))[:2], f(fin|opPing, []byte("1")), frag(opText, split(ping("x"), 2, 4, 6, 8))[2:4],
			f(fin|opPing, []byte("2")), frag(opText, split(ping("x"), 2, 4, 6, 8))[4:]), false, []want{pong("1"), pong("2"), text(`"x"`)}},
		{"5.20 empty fragments", frag(opText, [][]byte{nil, ping("y"), nil}), false, []want{text(`"y"`)}},

		// 6 UTF-8.
		{"6.2.1 valid text", f(fin|opText, pingK), false, []want{text(kosme)}},
		{"6.2.2 valid text, cut inside a character", frag(opText, split(pingK, k)), false, []want{text(kosme)}},
		{"6.2.4 valid text, one byte a fragment", frag(opText, split(pingK, func() []int {
			var at []int
			for i := 1; i < len(pingK); i++ {
				at = append(at, i)
			}
			return at
		}()...)), false, []want{text(kosme)}},
		{"6.3.1 invalid text", f(fin|opText, []byte("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.4.1 invalid in the first fragment fails at once", f(opText, []byte("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.4.2 invalid across fragments fails at the bad one", cat(f(opText, []byte("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4")), f(opCont, []byte("\x90"))), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.6 a character cut at the end of the message", f(fin|opText, []byte("\xce\xba\xe1\xbd")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.6 a character cut by the final fragment", frag(opText, [][]byte{[]byte("\xce\xba"), []byte("\xe1\xbd")}), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.7 U+007F and U+10FFFF", f(fin|opText, []byte(`{"op":"ping","id":"`+"\x7f\U0010FFFF"+`"}`)), false, []want{text(`"id"`)}},
		{"6.8 U+FFFE U+FFFF (noncharacters are valid UTF-8)", f(fin|opText, []byte(`{"op":"ping","id":"`+"\uFFFE\uFFFF"+`"}`)), false, []want{text(`"id"`)}},
		{"6.9 overlong slash", f(fin|opText, []byte("\xc0\xaf")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.10 overlong, three bytes", f(fin|opText, []byte("\xe0\x80\xaf")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.11 surrogate", f(fin|opText, []byte("\xed\xa0\x80")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.12 lone continuation", f(fin|opText, []byte("\x80")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.13 lone lead byte, then space", f(fin|opText, []byte("\xc0 ")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.14 0xFE, 0xFF", f(fin|opText, []byte("\xfe\xff")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.x past U+10FFFF in a fragment", f(opText, []byte("\xf4\x90")), false, []want{closed(ws.CloseInvalidPayload)}},
		{"6.x binary need not be UTF-8", f(fin|opBin, []byte("\xff\xfe")), false, []want{text("INVALID_MESSAGE")}},

		// 7 close handling.
		{"7.1.1 a message, then close", cat(f(fin|opText, ping("z")), f(fin|opCls, closeP(1000, ""))), false, []want{text(`"z"`), closed(1000)}},
		{"7.1.3 a ping after the close is not answered", cat(f(fin|opCls, closeP(1000, "")), f(fin|opPing, []byte("late"))), false, []want{closed(1000)}},
		{"7.1.5 close in the middle of a fragmented message", cat(f(opText, []byte(`{"op":`)), f(fin|opCls, closeP(1000, ""))), false, []want{closed(1000)}},
		{"7.3.1 close, empty", f(fin|opCls, nil), false, []want{closed(1000)}},
		{"7.3.2 close, one byte", f(fin|opCls, []byte{0x03}), false, []want{closed(ws.CloseProtocolError)}},
		{"7.3.3 close 1000", f(fin|opCls, closeP(1000, "")), false, []want{closed(1000)}},
		{"7.3.4 close 1000 with a reason", f(fin|opCls, closeP(1000, "Hello World!")), false, []want{closed(1000)}},
		{"7.3.5 close with a 123-byte reason", f(fin|opCls, closeP(1000, strings.Repeat("*", 123))), false, []want{closed(1000)}},
		{"7.3.6 close with a 124-byte reason (126 bytes)", f(fin|opCls, closeP(1000, strings.Repeat("*", 124))), false, []want{closed(ws.CloseProtocolError)}},
		{"7.5.1 close reason not UTF-8", f(fin|opCls, closeP(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80")), false, []want{closed(ws.CloseInvalidPayload)}},
	}
	// 7.7: codes a client may send are echoed; 7.9: the others are a protocol error.
	for _, c := range []int{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999} {
		cases = append(cases, struct {
			name  string
			send  [][]byte
			bytes bool
			want  []want
		}{fmt.Sprintf("7.7 close %d is echoed", c), f(fin|opCls, closeP(c, "")), false, []want{closed(c)}})
	}
	for _, c := range []int{0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535} {
		cases = append(cases, struct {
			name  string
			send  [][]byte
			bytes bool
			want  []want
		}{fmt.Sprintf("7.9 close %d is refused", c), f(fin|opCls, closeP(c, "")), false, []want{closed(ws.CloseProtocolError)}})
	}
	// 9 limits, scaled to MaxMessage (4,096 bytes).
	cases = append(cases, []struct {
		name  string
		send  [][]byte
		bytes bool
		want  []want
	}{
		{"9.1 text over the limit", f(fin|opText, pingOp("big", 4097)), false, []want{closed(ws.CloseMessageTooBig)}},
		{"9.1 binary over the limit", f(fin|opBin, make([]byte, 70000)), false, []want{closed(ws.CloseMessageTooBig)}},
		{"9.2 fragments adding up past the limit", frag(opText, split(pingOp("big", 5000), 2500)), false, []want{closed(ws.CloseMessageTooBig)}},
		{"9.x a 64-bit length with the top bit set", [][]byte{append([]byte{fin | opBin, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 1}, 0, 0, 0, 0)}, false, []want{closed(ws.CloseProtocolError)}},
		{"9.x a length of 2^40 bytes is refused before its payload", [][]byte{append([]byte{fin | opBin, 0x80 | 127, 0, 0, 1, 0, 0, 0, 0, 0}, 0, 0, 0, 0)}, false, []want{closed(ws.CloseMessageTooBig)}},
		{"unmasked client frame", [][]byte{append([]byte{fin | opText, byte(len(ping("u")))}, ping("u")...)}, false, []want{closed(ws.CloseProtocolError)}},
	}...)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := dialRaw(t, r.addr, "")
			var out []byte
			for _, b := range tc.send {
				out = append(out, b...)
			}
			if tc.bytes {
				for i := range out {
					if _, err := c.nc.Write(out[i : i+1]); err != nil {
						break // the server may close before the last byte
					}
				}
			} else {
				_, _ = c.nc.Write(out)
			}
			for i, w := range tc.want {
				f, ok := c.read(5 * time.Second)
				for ok && f.op == opPing && w.pong == nil { // the server's keepalive
					f, ok = c.read(5 * time.Second)
				}
				if !ok {
					t.Fatalf("answer %d: the connection ended before %+v", i, w)
				}
				if !f.fin {
					t.Fatalf("answer %d: a fragmented server frame", i)
				}
				switch {
				case w.pong != nil:
					if f.op != opPong || !bytes.Equal(f.payload, w.pong) {
						t.Fatalf("answer %d: want pong %q, got opcode %d %q", i, w.pong, f.op, f.payload)
					}
				case w.text != "":
					if f.op != opText || !strings.Contains(string(f.payload), w.text) {
						t.Fatalf("answer %d: want a text message with %q, got opcode %d %q", i, w.text, f.op, f.payload)
					}
				default:
					if f.op != opCls || len(f.payload) < 2 {
						t.Fatalf("answer %d: want close %d, got opcode %d %q", i, w.close, f.op, f.payload)
					}
					if got := int(binary.BigEndian.Uint16(f.payload)); got != w.close {
						t.Fatalf("answer %d: want close %d, got close %d %q", i, w.close, got, f.payload[2:])
					}
				}
			}
			// After a close the server closes the socket; otherwise it stays open and quiet.
			last := tc.want[len(tc.want)-1]
			f, ok := c.read(300 * time.Millisecond)
			for ok && f.op == opPing {
				f, ok = c.read(300 * time.Millisecond)
			}
			if ok {
				t.Fatalf("an unexpected frame after the answers: opcode %d %q", f.op, f.payload)
			}
			if last.close != 0 {
				_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.br.ReadByte(); err != io.EOF {
					t.Fatalf("the socket was not closed after the close: %v", err)
				}
			}
		})
	}
}

// No extension is negotiated even when the client offers permessage-deflate (Autobahn 12,
// 13 need it): the server's frames never set RSV1, and a client's RSV1 is refused (3.1).
func TestRFC6455NoExtensions(t *testing.T) {
	r := newRig(t, 1, ws.Config{})
	_, resp := dialRaw(t, r.addr, "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")
	if e := resp.Header.Get("Sec-WebSocket-Extensions"); e != "" {
		t.Fatalf("the server negotiated %q", e)
	}
}
