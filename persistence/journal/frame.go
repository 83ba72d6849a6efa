package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Frame layouts, little endian. A record written without an epoch (epoch 0,
// and every record from before epochs existed):
//
//	[length u32][crc32c u32][offset u64][payload: length bytes]
//
// A record stamped with the writer's epoch sets the top bit of the length
// word and carries the epoch after the offset:
//
//	[length|1<<31 u32][crc32c u32][offset u64][epoch u64][payload]
//
// length is the payload length (at most 1 GiB, so the top bit is free); the
// CRC (Castagnoli) covers everything after it: offset, epoch if present, and
// payload. Old frames therefore read as epoch 0.
const (
	frameHeaderSize      = 16
	epochFrameHeaderSize = 24
	epochFlag            = 1 << 31
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	errShortFrame = errors.New("partial frame")
	errBadCRC     = errors.New("crc mismatch")
	errFrameSize  = errors.New("frame length over limit")
)

// frameSize is the encoded size of a record with an n-byte payload and no epoch.
func frameSize(n int) int { return frameHeaderSize + n }

// epochFrameSize is the encoded size of a record with an n-byte payload
// written by a writer of the given epoch.
func epochFrameSize(n int, epoch uint64) int {
	if epoch == 0 {
		return frameHeaderSize + n
	}
	return epochFrameHeaderSize + n
}

// appendFrame appends the frame of one record without an epoch to dst.
func appendFrame(dst []byte, offset uint64, payload []byte) []byte {
	return appendEpochFrame(dst, offset, 0, payload)
}

// appendEpochFrame appends the frame of one record to dst, stamped with epoch
// unless it is 0 (then the frame is the original 16-byte-header layout).
func appendEpochFrame(dst []byte, offset, epoch uint64, payload []byte) []byte {
	var h [epochFrameHeaderSize]byte
	hs := frameHeaderSize
	length := uint32(len(payload))
	binary.LittleEndian.PutUint64(h[8:16], offset)
	if epoch != 0 {
		hs = epochFrameHeaderSize
		length |= epochFlag
		binary.LittleEndian.PutUint64(h[16:24], epoch)
	}
	binary.LittleEndian.PutUint32(h[0:4], length)
	crc := crc32.Update(0, castagnoli, h[8:hs])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:8], crc)
	dst = append(dst, h[:hs]...)
	return append(dst, payload...)
}

// frameNeed is the size of the frame whose header starts b, as far as its
// length word tells (frameHeaderSize while b is shorter than 4 bytes). A
// length over maxPayload returns 0: decodeFrame reports it.
func frameNeed(b []byte, maxPayload int) int {
	if len(b) < 4 {
		return frameHeaderSize
	}
	length := binary.LittleEndian.Uint32(b[0:4])
	hs := frameHeaderSize
	if length&epochFlag != 0 {
		hs = epochFrameHeaderSize
		length &^= epochFlag
	}
	if uint64(length) > uint64(maxPayload) {
		return 0
	}
	return hs + int(length)
}

// decodeFrame decodes a frame without an epoch at the start of b (the
// original layout; a frame with an epoch reports errFrameSize here, its
// length word having the top bit set). Readers use decodeEpochFrame.
func decodeFrame(b []byte, maxPayload int) (offset uint64, payload []byte, n int, err error) {
	if len(b) < frameHeaderSize {
		return 0, nil, 0, errShortFrame
	}
	length := binary.LittleEndian.Uint32(b[0:4])
	if uint64(length) > uint64(maxPayload) {
		return 0, nil, 0, errFrameSize
	}
	offset, _, payload, n, err = decodeEpochFrame(b, maxPayload)
	return offset, payload, n, err
}

// decodeEpochFrame decodes the frame at the start of b. payload aliases b.
// It returns errShortFrame if b ends inside the frame, errFrameSize if the
// length exceeds maxPayload and errBadCRC if the checksum does not match; n
// is the frame size when err is nil. A frame without an epoch has epoch 0.
func decodeEpochFrame(b []byte, maxPayload int) (offset, epoch uint64, payload []byte, n int, err error) {
	if len(b) < frameHeaderSize {
		return 0, 0, nil, 0, errShortFrame
	}
	length := binary.LittleEndian.Uint32(b[0:4])
	hs := frameHeaderSize
	if length&epochFlag != 0 {
		hs = epochFrameHeaderSize
		length &^= epochFlag
	}
	if uint64(length) > uint64(maxPayload) {
		return 0, 0, nil, 0, errFrameSize
	}
	n = hs + int(length)
	if len(b) < n {
		return 0, 0, nil, 0, errShortFrame
	}
	crc := crc32.Update(0, castagnoli, b[8:n])
	if crc != binary.LittleEndian.Uint32(b[4:8]) {
		return 0, 0, nil, 0, errBadCRC
	}
	if hs == epochFrameHeaderSize {
		epoch = binary.LittleEndian.Uint64(b[16:24])
	}
	return binary.LittleEndian.Uint64(b[8:16]), epoch, b[hs:n], n, nil
}
