package ws

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unicode/utf8"
)

// maskFrame builds a masked client frame the way a browser does.
func maskFrame(b0 byte, payload []byte, key [4]byte, lenForm int) []byte {
	b := []byte{b0}
	n := len(payload)
	switch {
	case lenForm == 2 || (lenForm == 0 && n > 0xFFFF):
		b = binary.BigEndian.AppendUint64(append(b, 0x80|127), uint64(n))
	case lenForm == 1 || (lenForm == 0 && n >= 126):
		b = binary.BigEndian.AppendUint16(append(b, 0x80|126), uint16(n))
	default:
		b = append(b, 0x80|byte(n))
	}
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i&3])
	}
	return b
}

// FuzzParseFrame: any bytes parse without a panic into a frame inside them, or need more,
// or are refused; a frame parses the same however its bytes are cut; and a well-formed
// masked frame parses back to what was framed.
func FuzzParseFrame(f *testing.F) {
	f.Add([]byte{0x81, 0x85, 1, 2, 3, 4, 'h' ^ 1, 'e' ^ 2, 'l' ^ 3, 'l' ^ 4, 'o' ^ 1}, byte(0x81), []byte("hello"), uint32(0x01020304), uint8(0))
	f.Add([]byte{0x89, 0x80, 0, 0, 0, 0}, byte(0x89), []byte(nil), uint32(0), uint8(1))
	f.Add([]byte{0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1}, byte(0x02), make([]byte, 300), uint32(7), uint8(2))
	f.Add([]byte{0x88, 0xFE, 0, 126}, byte(0x88), []byte{3, 232}, uint32(9), uint8(0))
	f.Fuzz(func(t *testing.T, raw []byte, b0 byte, payload []byte, key uint32, lenForm uint8) {
		const max = 4096
		// 1. Arbitrary input.
		in := bytes.Clone(raw)
		fr, n, err := parseFrame(in, max)
		if n < 0 || n > len(in) {
			t.Fatalf("took %d of %d bytes", n, len(in))
		}
		if err == nil && n > 0 {
			if fr.opcode >= opClose && (len(fr.payload) > 125 || !fr.fin) {
				t.Fatalf("control frame of %d bytes, fin %v accepted", len(fr.payload), fr.fin)
			}
			if fr.opcode < opClose && len(fr.payload) > max {
				t.Fatalf("data frame of %d bytes over the limit %d", len(fr.payload), max)
			}
			if len(fr.payload) > n {
				t.Fatalf("payload of %d bytes in a frame of %d", len(fr.payload), n)
			}
			// Every prefix of a whole frame asks for more (n == 0, no error) or is refused
			// with the same error the whole frame would have had (none here).
			for i := 0; i < n; i++ {
				if _, m, perr := parseFrame(bytes.Clone(raw[:i]), max); m != 0 || perr != nil {
					t.Fatalf("a prefix of %d bytes of a good %d-byte frame: n %d, err %v", i, n, m, perr)
				}
			}
		}

		// 2. A well-formed frame round-trips.
		op := b0 & 0x0F
		if op >= opClose && len(payload) > 125 {
			payload = payload[:125]
		}
		if len(payload) > max {
			payload = payload[:max]
		}
		first := b0 & 0x8F // no reserved bits
		if op >= opClose {
			first |= 0x80 // control frames are never fragmented
		}
		var k [4]byte
		binary.BigEndian.PutUint32(k[:], key)
		form := int(lenForm % 3)
		if form == 1 && len(payload) > 0xFFFF {
			form = 2
		}
		wire := maskFrame(first, payload, k, form)
		fr, n, err = parseFrame(bytes.Clone(wire), max)
		if err != nil || n != len(wire) {
			t.Fatalf("a good frame: n %d of %d, err %v", n, len(wire), err)
		}
		if fr.fin != (first&0x80 != 0) || fr.opcode != op || !bytes.Equal(fr.payload, payload) {
			t.Fatalf("round trip: fin %v op %d %q, want fin %v op %d %q", fr.fin, fr.opcode, fr.payload, first&0x80 != 0, op, payload)
		}
		// Followed by more bytes, it takes exactly its own.
		if _, n, err := parseFrame(append(bytes.Clone(wire), raw...), max); err != nil || n != len(wire) {
			t.Fatalf("a good frame followed by %d bytes: n %d of %d, err %v", len(raw), n, len(wire), err)
		}
		// Reserved bits set are refused.
		if b0&0x70 != 0 {
			if _, _, err := parseFrame(maskFrame(first|b0&0x70, payload, k, form), max); err != errProtocol {
				t.Fatalf("reserved bits %#x: err %v", b0&0x70, err)
			}
		}
	})
}

// unframe parses a server frame (unmasked): what a client reads.
func unframe(t *testing.T, b []byte) (fin bool, op byte, payload []byte) {
	t.Helper()
	if len(b) < 2 || b[1]&0x80 != 0 || b[0]&0x70 != 0 {
		t.Fatalf("bad server header % x", b[:min(len(b), 2)])
	}
	n, h := uint64(b[1]&0x7F), 2
	switch n {
	case 126:
		n, h = uint64(binary.BigEndian.Uint16(b[2:])), 4
		if n < 126 {
			t.Fatalf("16-bit length %d for a short payload", n)
		}
	case 127:
		n, h = binary.BigEndian.Uint64(b[2:]), 10
		if n <= 0xFFFF || n>>63 != 0 {
			t.Fatalf("64-bit length %d", n)
		}
	}
	if uint64(len(b)-h) != n {
		t.Fatalf("frame of %d bytes says %d of payload after a %d-byte header", len(b), n, h)
	}
	return b[0]&0x80 != 0, b[0] & 0x0F, b[h:]
}

// FuzzWriters: every frame the server writes (text, control, close) is one final,
// unmasked frame in the shortest length form holding exactly its payload; control
// payloads fit 125 bytes; a close's reason stays UTF-8 when it is cut.
func FuzzWriters(f *testing.F) {
	f.Add([]byte("hello"), uint16(1000), "bye")
	f.Add(make([]byte, 126), uint16(1002), string(bytes.Repeat([]byte("é"), 100)))
	f.Add(make([]byte, 70000), uint16(4000), "")
	f.Fuzz(func(t *testing.T, msg []byte, code uint16, why string) {
		fin, op, p := unframe(t, textFrame(msg).b)
		if !fin || op != opText || !bytes.Equal(p, msg) {
			t.Fatalf("text frame: fin %v op %d, %d bytes of %d", fin, op, len(p), len(msg))
		}
		for _, o := range []byte{opPing, opPong} {
			fin, op, p := unframe(t, controlFrame(o, msg).b)
			want := msg[:min(len(msg), 125)]
			if !fin || op != o || !bytes.Equal(p, want) {
				t.Fatalf("control %d: fin %v op %d %q, want %q", o, fin, op, p, want)
			}
		}
		fin, op, p = unframe(t, closeFrame(int(code), why).b)
		if !fin || op != opClose || len(p) < 2 || len(p) > 125 || binary.BigEndian.Uint16(p) != code {
			t.Fatalf("close frame: fin %v op %d %d bytes", fin, op, len(p))
		}
		r := p[2:]
		if !bytes.HasPrefix([]byte(why), r) || (len(why) <= 123 && len(r) != len(why)) {
			t.Fatalf("close reason of %d bytes from %d", len(r), len(why))
		}
		if utf8.ValidString(why) {
			if !utf8.Valid(r) {
				t.Fatalf("close reason % x cut from UTF-8 is not UTF-8", r)
			}
			if len(why) > 123 && len(r) < 120 {
				t.Fatalf("close reason cut to %d bytes, more than a character short of 123", len(r))
			}
		}
	})
}

// FuzzUTF8Prefix: utf8Prefix accepts exactly the byte strings that some continuation
// makes valid UTF-8, which is what lets a fragmented text message fail at its first bad
// fragment (RFC 6455 8.1) and not before.
func FuzzUTF8Prefix(f *testing.F) {
	for _, s := range []string{"", "κόσμε", "\xce", "\xf4\x8f", "\xf4\x90", "\xed\xa0", "\xe0\x80", "\xc0", "a\xf0\x9f\x98"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := utf8Prefix(b)
		// Some completion makes it valid iff appending the right continuation bytes does:
		// try every completion of up to 3 bytes drawn from the boundary values.
		want := utf8.Valid(b)
		if !want {
			cands := []byte{0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF}
			var try func(s []byte, depth int) bool
			try = func(s []byte, depth int) bool {
				if utf8.Valid(s) {
					return true
				}
				if depth == 0 {
					return false
				}
				for _, c := range cands {
					if try(append(s[:len(s):len(s)], c), depth-1) {
						return true
					}
				}
				return false
			}
			want = try(b, 3)
		}
		if got != want {
			t.Fatalf("utf8Prefix(% x) = %v, want %v", b, got, want)
		}
	})
}
