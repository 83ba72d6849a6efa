package engine

import (
	"encoding/binary"
	"errors"
)

// Event wire format, used by the journal: one event per record, little-endian, fixed
// order of fields, so encoding is a few appends and decoding a few loads with no
// allocation but the two strings. The first byte is the format version; a reader refuses
// versions it does not know rather than guessing.
//
//	version u8 | seq u64 | time i64 | kind u8 | side u8 | type u8 | tif u8 | stp u8 |
//	post_only u8 | reason u8 | asset u8 | price i64 | qty i64 | quote_qty i64 | amount i64 |
//	account [16] | order [16] | maker_order [16] | maker_account [16] | transfer [16] |
//	symbol_len u8 | symbol | client_order_id_len u8 | client_order_id |
//	n_deltas u8 | n x (account [16] | asset u8 | available i64 | locked i64)
//
// An event with Metadata (an EventAccepted whose place carried some) is written as version
// 4 instead: the same layout followed by metadata_len u16 | metadata. Every other event
// stays version 1 byte for byte, so orders without metadata cost nothing and journals
// written before version 4 read as they did.
const (
	eventCodecVersion     byte = 1
	eventMetaCodecVersion byte = 4
)

const eventFixedSize = 1 + 8 + 8 + 8 + 4*8 + 5*16

// ErrBadEvent means a record is not an event this version can read.
var ErrBadEvent = errors.New("engine: bad event record")

// AppendEvent appends the wire form of e to dst.
func AppendEvent(dst []byte, e *Event) []byte {
	if e.Metadata != "" {
		dst = append(dst, eventMetaCodecVersion)
	} else {
		dst = append(dst, eventCodecVersion)
	}
	dst = binary.LittleEndian.AppendUint64(dst, e.Seq)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Time))
	dst = append(dst, byte(e.Kind), byte(e.Side), byte(e.Type), byte(e.TIF), byte(e.STP), b2u(e.PostOnly), byte(e.Reason), byte(e.Asset))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Price))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Qty))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(e.QuoteQty))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Amount))
	dst = append(dst, e.Account[:]...)
	dst = append(dst, e.OrderID[:]...)
	dst = append(dst, e.MakerOrderID[:]...)
	dst = append(dst, e.MakerAccount[:]...)
	dst = append(dst, e.TransferID[:]...)
	dst = appendShortString(dst, e.Symbol)
	dst = appendShortString(dst, e.ClientOrderID)
	n := int(e.NDeltas)
	if n > len(e.Deltas) {
		n = len(e.Deltas)
	}
	dst = append(dst, byte(n))
	for i := 0; i < n; i++ {
		d := &e.Deltas[i]
		dst = append(dst, d.Account[:]...)
		dst = append(dst, byte(d.Asset))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(d.Available))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(d.Locked))
	}
	if e.Metadata != "" {
		m := e.Metadata
		if len(m) > MaxMetadata {
			m = m[:MaxMetadata] // the engine refuses longer at the place
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(m)))
		dst = append(dst, m...)
	}
	return dst
}

// DecodeEvent reads one event written by AppendEvent into e. Strings are copied (the
// record buffer may be reused). Any malformed or trailing byte is ErrBadEvent.
func DecodeEvent(src []byte, e *Event) error {
	if len(src) < eventFixedSize+3 || (src[0] != eventCodecVersion && src[0] != eventMetaCodecVersion) {
		return ErrBadEvent
	}
	withMeta := src[0] == eventMetaCodecVersion
	symbol := e.Symbol // kept if the bytes repeat, below
	*e = Event{}
	p := src[1:]
	u64 := func() uint64 { v := binary.LittleEndian.Uint64(p); p = p[8:]; return v }
	e.Seq = u64()
	e.Time = int64(u64())
	e.Kind, e.Side, e.Type, e.TIF, e.STP = EventKind(p[0]), Side(p[1]), OrderType(p[2]), TimeInForce(p[3]), STPMode(p[4])
	if p[5] > 1 {
		return ErrBadEvent
	}
	e.PostOnly, e.Reason, e.Asset = p[5] == 1, CancelReason(p[6]), Asset(p[7])
	p = p[8:]
	e.Price = Price(u64())
	e.Qty = Qty(u64())
	e.QuoteQty = int64(u64())
	e.Amount = int64(u64())
	for _, id := range []*[16]byte{(*[16]byte)(&e.Account), (*[16]byte)(&e.OrderID), (*[16]byte)(&e.MakerOrderID), (*[16]byte)(&e.MakerAccount), (*[16]byte)(&e.TransferID)} {
		copy(id[:], p[:16])
		p = p[16:]
	}
	// The symbol is one of a handful and a decoder reuses its Event: keep the string the
	// last event held when the bytes are the same (the comparison does not allocate), so a
	// replay does not allocate a symbol per event.
	if len(p) < 1 || len(p) < 1+int(p[0]) {
		return ErrBadEvent
	}
	if sym := p[1 : 1+int(p[0])]; string(sym) == symbol {
		e.Symbol = symbol
	} else {
		e.Symbol = string(sym)
	}
	p = p[1+int(p[0]):]
	var ok bool
	if e.ClientOrderID, p, ok = readShortString(p); !ok {
		return ErrBadEvent
	}
	if len(p) < 1 {
		return ErrBadEvent
	}
	n := int(p[0])
	p = p[1:]
	if n > len(e.Deltas) || len(p) < n*(16+1+16) {
		return ErrBadEvent
	}
	if tail := p[n*(16+1+16):]; withMeta {
		if len(tail) < 2 {
			return ErrBadEvent
		}
		m := tail[2:]
		if l := int(binary.LittleEndian.Uint16(tail)); l == 0 || l != len(m) {
			return ErrBadEvent
		}
		e.Metadata = string(m)
	} else if len(tail) != 0 {
		return ErrBadEvent
	}
	e.NDeltas = uint8(n)
	for i := 0; i < n; i++ {
		d := &e.Deltas[i]
		copy(d.Account[:], p[:16])
		d.Asset = Asset(p[16])
		p = p[17:]
		d.Available = int64(u64())
		d.Locked = int64(u64())
	}
	return nil
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func appendShortString(dst []byte, s string) []byte {
	if len(s) > 255 {
		s = s[:255] // client order ids are limited to 64 at the edge; symbols are short
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

func readShortString(p []byte) (string, []byte, bool) {
	if len(p) < 1 || len(p) < 1+int(p[0]) {
		return "", p, false
	}
	n := int(p[0])
	return string(p[1 : 1+n]), p[1+n:], true
}

// A journal record holds one whole batch (version 2): a torn write can then only lose whole
// batches, never leave half of a command's events behind (a half-applied IOC left resting,
// say). Layout: version u8 (2) | count u16 | count x (length u16 | event in the version-1
// layout above).
const batchCodecVersion byte = 2

// AppendBatch appends the record of a whole batch to dst.
func AppendBatch(dst []byte, batch []Event) []byte {
	dst = append(dst, batchCodecVersion)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(batch)))
	for i := range batch {
		at := len(dst)
		dst = append(dst, 0, 0)
		dst = AppendEvent(dst, &batch[i])
		binary.LittleEndian.PutUint16(dst[at:], uint16(len(dst)-at-2))
	}
	return dst
}

// A batch too large for one journal record is written as consecutive part records
// (version 3): version u8 (3) | part u16 | parts u16 | then the version-2 layout after its
// version byte (count u16 | events). Parts are numbered from 0; a batch's parts are
// consecutive in the journal. A crash may leave the first parts of a batch without the
// last: BatchReader drops such an incomplete batch, so replay applies a batch whole or
// not at all.
const batchPartCodecVersion byte = 3

// AppendBatchPart appends part (of parts) of a batch split across records.
func AppendBatchPart(dst []byte, events []Event, part, parts int) []byte {
	dst = append(dst, batchPartCodecVersion)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(part))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(parts))
	at := len(dst)
	dst = AppendBatch(dst, events)
	return append(dst[:at], dst[at+1:]...) // drop AppendBatch's version byte
}

// MaxBatchParts is the most records one batch may be split into.
const MaxBatchParts = 1<<16 - 1

// DecodeRecord calls fn with each event of a journal record, in order: a batch record, or
// a single event of version 1. e is reused between calls. A malformed record is ErrBadEvent
// before fn sees any of its events, so a consumer never applies part of a bad record. A
// part record (version 3) is decoded like a batch record; use BatchReader to apply only
// whole batches.
func DecodeRecord(src []byte, e *Event, fn func(*Event) error) error {
	if len(src) == 0 {
		return ErrBadEvent
	}
	if src[0] == eventCodecVersion || src[0] == eventMetaCodecVersion {
		if err := DecodeEvent(src, e); err != nil {
			return err
		}
		return fn(e)
	}
	if src[0] == batchPartCodecVersion {
		if len(src) < 5 {
			return ErrBadEvent
		}
		src = src[4:] // the version-2 layout from its count on, behind a stand-in version byte
		return decodeBatch(src, e, fn)
	}
	if src[0] != batchCodecVersion {
		return ErrBadEvent
	}
	return decodeBatch(src, e, fn)
}

// decodeBatch decodes a version-2 layout; src[0] is not read.
func decodeBatch(src []byte, e *Event, fn func(*Event) error) error {
	if len(src) < 3 {
		return ErrBadEvent
	}
	n := int(binary.LittleEndian.Uint16(src[1:]))
	// Check the framing of the whole record first.
	p := src[3:]
	for i := 0; i < n; i++ {
		if len(p) < 2 {
			return ErrBadEvent
		}
		l := int(binary.LittleEndian.Uint16(p))
		if len(p) < 2+l {
			return ErrBadEvent
		}
		if err := DecodeEvent(p[2:2+l], e); err != nil {
			return err
		}
		p = p[2+l:]
	}
	if len(p) != 0 || n == 0 {
		return ErrBadEvent
	}
	p = src[3:]
	for i := 0; i < n; i++ {
		l := int(binary.LittleEndian.Uint16(p))
		if err := DecodeEvent(p[2:2+l], e); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
		p = p[2+l:]
	}
	return nil
}

// EventSize is the length of AppendEvent's encoding of e.
func EventSize(e *Event) int {
	n := int(e.NDeltas)
	if n > len(e.Deltas) {
		n = len(e.Deltas)
	}
	sym, coid := len(e.Symbol), len(e.ClientOrderID)
	if sym > 255 {
		sym = 255
	}
	if coid > 255 {
		coid = 255
	}
	size := eventFixedSize + 1 + sym + 1 + coid + 1 + n*(16+1+16)
	if e.Metadata != "" {
		size += 2 + min(len(e.Metadata), MaxMetadata)
	}
	return size
}

// MaxBatchRecordEvents is the most events one batch record can hold (its count is a u16).
const MaxBatchRecordEvents = 1<<16 - 1

// BatchReader reads journal records as whole engine batches: a batch split into part
// records reaches fn only once its last part was read, and a batch whose parts stop short
// (a crash between the records of one batch; the records after it belong to batches
// written after the restart) is dropped and reported to Dropped. Feed it the records in
// journal order, from a batch boundary (a snapshot's offset, 0, or where a previous
// reader's Complete left off).
type BatchReader struct {
	// Dropped, if set, is told of each incomplete batch dropped: the offsets of its first
	// and last part read, how many parts were read and how many it had.
	Dropped func(first, last uint64, read, parts int)

	out     []Event // Read's events of a record
	pend    []Event
	part    int // parts read of the pending batch
	parts   int
	first   uint64
	last    uint64
	through uint64 // the last offset after which no batch is pending
}

// Read decodes the record at offset off and calls fn with each event of every batch it
// completes.
func (r *BatchReader) Read(off uint64, payload []byte, fn func(*Event) error) error {
	ev, err := r.Append(r.out[:0], off, payload)
	r.out = ev[:0]
	if err != nil {
		return err
	}
	for i := range ev {
		if err := fn(&ev[i]); err != nil {
			return err
		}
	}
	return nil
}

// Complete is the last offset read after which no batch is pending: a reader that stops
// and resumes later must resume after it.
func (r *BatchReader) Complete() uint64 { return r.through }

func (r *BatchReader) drop() {
	r.dropped(r.first, r.last, r.part, r.parts)
	r.through = r.last
	r.pend, r.part, r.parts = r.pend[:0], 0, 0
}

func (r *BatchReader) dropped(first, last uint64, read, parts int) {
	if r.Dropped != nil {
		r.Dropped(first, last, read, parts)
	}
}
