package engine

import "encoding/binary"

// Decoding journal records straight into a slice of events, for replay. DecodeRecord
// decodes a batch record's events twice (a pass that checks them all before fn sees one,
// then a pass for fn) and its callers copy each event (about 400 bytes) out of the one
// it reuses; AppendRecord decodes each event once, into the slot it will be applied
// from, and takes back what it appended if the record turns out malformed.

// AppendRecord appends the events of a journal record (as DecodeRecord reads it) to dst.
// A malformed record is ErrBadEvent and dst comes back as it was given.
func AppendRecord(dst []Event, src []byte) ([]Event, error) {
	if len(src) == 0 {
		return dst, ErrBadEvent
	}
	switch src[0] {
	case eventCodecVersion, eventMetaCodecVersion:
		dst, e := grow(dst)
		if err := DecodeEvent(src, e); err != nil {
			return dst[:len(dst)-1], err
		}
		return dst, nil
	case batchPartCodecVersion:
		if len(src) < 5 {
			return dst, ErrBadEvent
		}
		return appendBatch(dst, src[4:]) // the version-2 layout behind a stand-in version byte
	case batchCodecVersion:
		return appendBatch(dst, src)
	}
	return dst, ErrBadEvent
}

// grow extends dst by one event and returns it, its Symbol the previous event's:
// DecodeEvent overwrites every field and keeps that string when the bytes are the same
// (all the events of a batch are of one symbol), so the symbol is not allocated again.
func grow(dst []Event) ([]Event, *Event) {
	if len(dst) < cap(dst) {
		dst = dst[:len(dst)+1]
	} else {
		dst = append(dst, Event{})
	}
	e := &dst[len(dst)-1]
	if len(dst) > 1 {
		e.Symbol = dst[len(dst)-2].Symbol
	}
	return dst, e
}

// appendBatch appends the events of a version-2 layout (src[0] is not read) to dst.
func appendBatch(dst []Event, src []byte) ([]Event, error) {
	if len(src) < 3 {
		return dst, ErrBadEvent
	}
	n0 := len(dst)
	n := int(binary.LittleEndian.Uint16(src[1:]))
	p := src[3:]
	for i := 0; i < n; i++ {
		if len(p) < 2 {
			return dst[:n0], ErrBadEvent
		}
		l := int(binary.LittleEndian.Uint16(p))
		if len(p) < 2+l {
			return dst[:n0], ErrBadEvent
		}
		var e *Event
		dst, e = grow(dst)
		if err := DecodeEvent(p[2:2+l], e); err != nil {
			return dst[:n0], err
		}
		p = p[2+l:]
	}
	if len(p) != 0 || n == 0 {
		return dst[:n0], ErrBadEvent
	}
	return dst, nil
}

// Append reads the record at offset off like Read, appending the events of every batch
// it completes to dst instead of calling a function with each. On an error dst comes
// back as it was given.
func (r *BatchReader) Append(dst []Event, off uint64, payload []byte) ([]Event, error) {
	if len(payload) == 0 || payload[0] != batchPartCodecVersion {
		if r.parts != 0 {
			r.drop()
		}
		dst, err := AppendRecord(dst, payload)
		if err != nil {
			return dst, err
		}
		r.through = off
		return dst, nil
	}
	if len(payload) < 5 {
		return dst, ErrBadEvent
	}
	part := int(binary.LittleEndian.Uint16(payload[1:]))
	parts := int(binary.LittleEndian.Uint16(payload[3:]))
	if parts < 2 || part >= parts {
		return dst, ErrBadEvent
	}
	if r.parts != 0 && (part != r.part || parts != r.parts) {
		r.drop()
	}
	if part != r.part { // a later part without its start: from a torn batch
		r.dropped(off, off, 1, parts)
		r.through = off
		return dst, nil
	}
	if part == 0 {
		r.first, r.parts, r.pend = off, parts, r.pend[:0]
	}
	pend, err := AppendRecord(r.pend, payload)
	if err != nil {
		return dst, err
	}
	r.pend = pend
	r.part++
	r.last = off
	if r.part < r.parts {
		return dst, nil
	}
	dst = append(dst, r.pend...)
	r.pend, r.part, r.parts = r.pend[:0], 0, 0
	r.through = off
	return dst, nil
}
