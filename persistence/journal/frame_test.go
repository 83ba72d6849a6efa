package journal

import (
	"bytes"
	"errors"
	"testing"
)

func TestFrame(t *testing.T) {
	t.Run("round trips offset and payload", func(t *testing.T) {
		for _, p := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte("ab"), 100)} {
			b := appendFrame(nil, 42, p)
			if len(b) != frameSize(len(p)) {
				t.Fatalf("size %d, want %d", len(b), frameSize(len(p)))
			}
			off, got, n, err := decodeFrame(append(b, 9, 9, 9), 1<<20)
			if err != nil || off != 42 || n != len(b) || !bytes.Equal(got, p) {
				t.Fatalf("decode = %d %q %d %v", off, got, n, err)
			}
		}
	})
	t.Run("reports a partial frame at every cut", func(t *testing.T) {
		b := appendFrame(nil, 7, []byte("payload"))
		for cut := range len(b) {
			if _, _, _, err := decodeFrame(b[:cut], 1<<20); !errors.Is(err, errShortFrame) {
				t.Fatalf("cut %d: err %v", cut, err)
			}
		}
	})
	t.Run("detects every flipped bit", func(t *testing.T) {
		b := appendFrame(nil, 7, []byte("payload"))
		for i := 4; i < len(b); i++ { // bytes 0-3 are the length
			for bit := range 8 {
				c := bytes.Clone(b)
				c[i] ^= 1 << bit
				if _, _, _, err := decodeFrame(c, 1<<20); !errors.Is(err, errBadCRC) {
					t.Fatalf("byte %d bit %d: err %v", i, bit, err)
				}
			}
		}
	})
	t.Run("rejects a length over the limit", func(t *testing.T) {
		b := appendFrame(nil, 1, make([]byte, 100))
		if _, _, _, err := decodeFrame(b, 99); !errors.Is(err, errFrameSize) {
			t.Fatalf("err %v", err)
		}
	})
}

func FuzzFrameDecode(f *testing.F) {
	f.Add(appendFrame(nil, 1, []byte("hello")))
	f.Add(appendFrame(appendFrame(nil, 1, nil), 2, []byte{0xff}))
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		off, payload, n, err := decodeFrame(b, 4096)
		if err != nil {
			return
		}
		if n < frameHeaderSize || n > len(b) || len(payload) != n-frameHeaderSize {
			t.Fatalf("n %d, payload %d, input %d", n, len(payload), len(b))
		}
		// A frame that decodes re-encodes to the same bytes.
		if re := appendFrame(nil, off, payload); !bytes.Equal(re, b[:n]) {
			t.Fatalf("re-encoding differs")
		}
		// And a valid stream scans to its end with the tail scanner.
		end, next, err := scanTail(b[:n], off, 4096)
		if err != nil || end != n || next != off+1 {
			t.Fatalf("scanTail = %d %d %v", end, next, err)
		}
	})
}
