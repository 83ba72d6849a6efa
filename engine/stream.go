package engine

// stream numbers and buffers the events of one symbol (or of credits and debits).
type stream struct {
	symbol string
	seq    uint64  // last sequence number used
	ev     []Event // events not yet handed to the journal
}

// event appends a new event and returns it; the pointer is valid until the next call.
func (s *stream) event(k EventKind, t int64) *Event {
	s.ev = append(s.ev, Event{})
	e := &s.ev[len(s.ev)-1]
	s.seq++
	e.Seq, e.Kind, e.Time, e.Symbol = s.seq, k, t, s.symbol
	return e
}
