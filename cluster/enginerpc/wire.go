package enginerpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"svc/engine"
)

// wireVersion is the first byte of every message; a peer of another version is refused
// rather than misread.
const wireVersion = 1

// message is what the codec carries: a value that appends its encoding and decodes itself.
type message interface {
	encode(w *writer)
	decode(r *reader)
}

// codec is the gRPC codec of this service (forced on both ends, never registered globally).
type codec struct{}

func (codec) Name() string { return "svc-enginerpc" }

func (codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(message)
	if !ok {
		return nil, fmt.Errorf("enginerpc: cannot marshal %T", v)
	}
	w := writer{b: make([]byte, 0, 128)}
	w.u8(wireVersion)
	m.encode(&w)
	return w.b, nil
}

func (codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(message)
	if !ok {
		return fmt.Errorf("enginerpc: cannot unmarshal into %T", v)
	}
	r := reader{b: data}
	if ver := r.u8(); r.err == nil && ver != wireVersion {
		return fmt.Errorf("enginerpc: wire version %d, want %d", ver, wireVersion)
	}
	m.decode(&r)
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("enginerpc: trailing bytes")
	}
	return r.err
}

// writer appends fixed-width integers and length-prefixed strings.
type writer struct{ b []byte }

func (w *writer) u8(v uint8)       { w.b = append(w.b, v) }
func (w *writer) u64(v uint64)     { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *writer) i64(v int64)      { w.u64(uint64(v)) }
func (w *writer) id(v [16]byte)    { w.b = append(w.b, v[:]...) }
func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) bool(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}
func (w *writer) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// reader reads what writer wrote; the first short read sets err and later reads give zero.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("enginerpc: message too short")

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = errShort
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *reader) i64() int64 { return int64(r.u64()) }
func (r *reader) bool() bool { return r.u8() != 0 }

func (r *reader) id() (v [16]byte) {
	if p := r.take(16); p != nil {
		copy(v[:], p)
	}
	return v
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length and checks that at least min bytes per element remain, so a
// corrupt length cannot make the reader allocate without bound.
func (r *reader) count(min int) int {
	n := r.uvarint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b)/max(min, 1)) || n > math.MaxInt32 {
		r.err = errShort
		return 0
	}
	return int(n)
}

func (r *reader) str() string {
	n := r.count(1)
	if p := r.take(n); p != nil {
		return string(p)
	}
	return ""
}

// errKind is how a reply says which engine error stopped the call.
type errKind uint8

const (
	errNone errKind = iota
	errBusy
	errUnavailable
	errStopped
	errOther // a message in status.msg (e.g. an unknown symbol for Depth)
)

func kindOf(err error) errKind {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, engine.ErrBusy):
		return errBusy
	case errors.Is(err, engine.ErrUnavailable):
		return errUnavailable
	case errors.Is(err, engine.ErrStopped):
		return errStopped
	}
	return errOther
}

// status opens every reply: the engine error of the call (if any), whether the engine has
// fail-stopped, and its acknowledged journal offset when it answered.
type status struct {
	kind   errKind
	msg    string
	failed bool
	offset uint64
}

func (s *status) encode(w *writer) {
	w.u8(uint8(s.kind))
	w.str(s.msg)
	w.bool(s.failed)
	w.u64(s.offset)
}

func (s *status) decode(r *reader) {
	s.kind = errKind(r.u8())
	s.msg = r.str()
	s.failed = r.bool()
	s.offset = r.u64()
}

// err turns a reply's status back into the engine's error.
func (s *status) err() error {
	switch s.kind {
	case errNone:
		return nil
	case errBusy:
		return engine.ErrBusy
	case errUnavailable:
		return engine.ErrUnavailable
	case errStopped:
		return engine.ErrStopped
	}
	return errors.New(s.msg)
}

// empty is the request of calls without arguments.
type empty struct{}

func (*empty) encode(*writer) {}
func (*empty) decode(*reader) {}

type commandMsg struct{ c engine.Command }

func (m *commandMsg) encode(w *writer) {
	c := &m.c
	w.u8(uint8(c.Kind))
	w.i64(c.Time)
	w.id(c.Account)
	w.str(c.Symbol)
	w.id(c.OrderID)
	w.str(c.ClientOrderID)
	w.u8(uint8(c.Side))
	w.u8(uint8(c.Type))
	w.u8(uint8(c.TIF))
	w.u8(uint8(c.STP))
	w.bool(c.PostOnly)
	w.i64(int64(c.Price))
	w.i64(int64(c.Qty))
	w.i64(c.QuoteQty)
	w.u8(uint8(c.Asset))
	w.i64(c.Amount)
	w.id(c.TransferID)
}

func (m *commandMsg) decode(r *reader) {
	c := &m.c
	c.Kind = engine.CommandKind(r.u8())
	c.Time = r.i64()
	c.Account = r.id()
	c.Symbol = r.str()
	c.OrderID = r.id()
	c.ClientOrderID = r.str()
	c.Side = engine.Side(r.u8())
	c.Type = engine.OrderType(r.u8())
	c.TIF = engine.TimeInForce(r.u8())
	c.STP = engine.STPMode(r.u8())
	c.PostOnly = r.bool()
	c.Price = engine.Price(r.i64())
	c.Qty = engine.Qty(r.i64())
	c.QuoteQty = r.i64()
	c.Asset = engine.Asset(r.u8())
	c.Amount = r.i64()
	c.TransferID = r.id()
}

type submitReply struct {
	st  status
	res engine.Result
}

func (m *submitReply) encode(w *writer) {
	m.st.encode(w)
	res := &m.res
	w.u8(uint8(res.Code))
	w.id(res.OrderID)
	w.u8(uint8(res.State))
	w.u8(uint8(res.Reason))
	w.i64(int64(res.Filled))
	w.u64(res.Seq)
	w.u64(res.Offset)
	w.i64(int64(res.Cancelled))
}

func (m *submitReply) decode(r *reader) {
	m.st.decode(r)
	res := &m.res
	res.Code = engine.ResultCode(r.u8())
	res.OrderID = r.id()
	res.State = engine.OrderState(r.u8())
	res.Reason = engine.CancelReason(r.u8())
	res.Filled = engine.Qty(r.i64())
	res.Seq = r.u64()
	res.Offset = r.u64()
	res.Cancelled = int(r.i64())
}

// orderReq names an order by id, or by client order id when byClient is set.
type orderReq struct {
	acct     engine.AccountID
	byClient bool
	id       engine.OrderID
	clientID string
}

func (m *orderReq) encode(w *writer) {
	w.id(m.acct)
	w.bool(m.byClient)
	w.id(m.id)
	w.str(m.clientID)
}

func (m *orderReq) decode(r *reader) {
	m.acct = r.id()
	m.byClient = r.bool()
	m.id = r.id()
	m.clientID = r.str()
}

type orderReply struct {
	st   status
	ok   bool
	view engine.OrderView
}

func (m *orderReply) encode(w *writer) {
	m.st.encode(w)
	w.bool(m.ok)
	v := &m.view
	w.id(v.ID)
	w.str(v.ClientOrderID)
	w.id(v.Account)
	w.str(v.Symbol)
	w.u8(uint8(v.Side))
	w.u8(uint8(v.Type))
	w.u8(uint8(v.TIF))
	w.bool(v.PostOnly)
	w.i64(int64(v.Price))
	w.i64(int64(v.Qty))
	w.i64(v.QuoteQty)
	w.i64(int64(v.Filled))
	w.u8(uint8(v.State))
	w.u8(uint8(v.Reason))
	w.i64(v.Time)
}

func (m *orderReply) decode(r *reader) {
	m.st.decode(r)
	m.ok = r.bool()
	v := &m.view
	v.ID = r.id()
	v.ClientOrderID = r.str()
	v.Account = r.id()
	v.Symbol = r.str()
	v.Side = engine.Side(r.u8())
	v.Type = engine.OrderType(r.u8())
	v.TIF = engine.TimeInForce(r.u8())
	v.PostOnly = r.bool()
	v.Price = engine.Price(r.i64())
	v.Qty = engine.Qty(r.i64())
	v.QuoteQty = r.i64()
	v.Filled = engine.Qty(r.i64())
	v.State = engine.OrderState(r.u8())
	v.Reason = engine.CancelReason(r.u8())
	v.Time = r.i64()
}

type accountReq struct{ acct engine.AccountID }

func (m *accountReq) encode(w *writer) { w.id(m.acct) }
func (m *accountReq) decode(r *reader) { m.acct = r.id() }

type balancesReply struct {
	st  status
	bal engine.Balances
}

func (m *balancesReply) encode(w *writer) {
	m.st.encode(w)
	w.uvarint(uint64(len(m.bal)))
	for _, b := range m.bal {
		w.i64(b.Available)
		w.i64(b.Locked)
	}
}

func (m *balancesReply) decode(r *reader) {
	m.st.decode(r)
	n := r.count(16)
	if r.err == nil && n != len(m.bal) {
		r.err = fmt.Errorf("enginerpc: %d assets on the wire, %d here (mismatched versions)", n, len(m.bal))
		return
	}
	for i := 0; i < n; i++ {
		m.bal[i].Available = r.i64()
		m.bal[i].Locked = r.i64()
	}
}

type pairsReply struct {
	st    status
	pairs []engine.PairConfig
}

func (m *pairsReply) encode(w *writer) {
	m.st.encode(w)
	w.uvarint(uint64(len(m.pairs)))
	for i := range m.pairs {
		p := &m.pairs[i]
		w.str(p.Symbol)
		w.u8(uint8(p.Base))
		w.u8(uint8(p.Quote))
		w.i64(int64(p.PriceDecimals))
		w.i64(int64(p.QtyDecimals))
		w.i64(int64(p.TickSize))
		w.i64(int64(p.StepSize))
		w.i64(int64(p.MinQty))
		w.i64(p.MinNotional)
		w.i64(int64(p.MaxPrice))
		w.i64(int64(p.MaxQty))
	}
}

func (m *pairsReply) decode(r *reader) {
	m.st.decode(r)
	n := r.count(66)
	m.pairs = make([]engine.PairConfig, n)
	for i := range m.pairs {
		p := &m.pairs[i]
		p.Symbol = r.str()
		p.Base = engine.Asset(r.u8())
		p.Quote = engine.Asset(r.u8())
		p.PriceDecimals = int(r.i64())
		p.QtyDecimals = int(r.i64())
		p.TickSize = engine.Price(r.i64())
		p.StepSize = engine.Qty(r.i64())
		p.MinQty = engine.Qty(r.i64())
		p.MinNotional = r.i64()
		p.MaxPrice = engine.Price(r.i64())
		p.MaxQty = engine.Qty(r.i64())
	}
}

// statusReply answers Status: the status alone (failed flag and offset).
type statusReply struct{ st status }

func (m *statusReply) encode(w *writer) { m.st.encode(w) }
func (m *statusReply) decode(r *reader) { m.st.decode(r) }

type depthReq struct {
	symbol string
	n      int
}

func (m *depthReq) encode(w *writer) {
	w.str(m.symbol)
	w.uvarint(uint64(m.n))
}

func (m *depthReq) decode(r *reader) {
	m.symbol = r.str()
	m.n = int(min(r.uvarint(), maxDepth))
}

// maxDepth bounds the levels a Depth call asks for.
const maxDepth = 10000

type depthReply struct {
	st status
	d  engine.Depth
}

func (m *depthReply) encode(w *writer) {
	m.st.encode(w)
	w.str(m.d.Symbol)
	w.u64(m.d.Seq)
	for _, side := range [][]engine.Level{m.d.Bids, m.d.Asks} {
		w.uvarint(uint64(len(side)))
		for _, l := range side {
			w.i64(int64(l.Price))
			w.i64(int64(l.Qty))
			w.i64(int64(l.Count))
		}
	}
}

func (m *depthReply) decode(r *reader) {
	m.st.decode(r)
	m.d.Symbol = r.str()
	m.d.Seq = r.u64()
	for _, side := range []*[]engine.Level{&m.d.Bids, &m.d.Asks} {
		n := r.count(24)
		levels := make([]engine.Level, n)
		for i := range levels {
			levels[i] = engine.Level{Price: engine.Price(r.i64()), Qty: engine.Qty(r.i64()), Count: int(r.i64())}
		}
		*side = levels
	}
}
