package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Frame layout, little endian:
//
//	[length u32][crc32c u32][offset u64][payload: length bytes]
//
// length is the payload length; the CRC (Castagnoli) covers the 8 offset
// bytes and the payload.
const frameHeaderSize = 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	errShortFrame = errors.New("partial frame")
	errBadCRC     = errors.New("crc mismatch")
	errFrameSize  = errors.New("frame length over limit")
)

// frameSize is the encoded size of a record with an n-byte payload.
func frameSize(n int) int { return frameHeaderSize + n }

// appendFrame appends the frame of one record to dst.
func appendFrame(dst []byte, offset uint64, payload []byte) []byte {
	var h [frameHeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:16], offset)
	crc := crc32.Update(0, castagnoli, h[8:16])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:8], crc)
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// decodeFrame decodes the frame at the start of b. payload aliases b. It
// returns errShortFrame if b ends inside the frame, errFrameSize if the length
// exceeds maxPayload and errBadCRC if the checksum does not match; n is the
// frame size when err is nil.
func decodeFrame(b []byte, maxPayload int) (offset uint64, payload []byte, n int, err error) {
	if len(b) < frameHeaderSize {
		return 0, nil, 0, errShortFrame
	}
	length := binary.LittleEndian.Uint32(b[0:4])
	if uint64(length) > uint64(maxPayload) {
		return 0, nil, 0, errFrameSize
	}
	n = frameHeaderSize + int(length)
	if len(b) < n {
		return 0, nil, 0, errShortFrame
	}
	crc := crc32.Update(0, castagnoli, b[8:n])
	if crc != binary.LittleEndian.Uint32(b[4:8]) {
		return 0, nil, 0, errBadCRC
	}
	return binary.LittleEndian.Uint64(b[8:16]), b[frameHeaderSize:n], n, nil
}
