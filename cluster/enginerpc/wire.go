package enginerpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"svc/engine"
)

// wireVersion is the first byte of every message; a peer of another version is refused
// rather than misread. Version 2 adds an order's metadata to the place command and the
// order view; version 3 a cancel's reason (a remote engine recorded cancel-on-disconnect's
// cancels as the user's).
const wireVersion = 3

// message is what the codec carries. Its fields method lists its fields once, in wire
// order, for both directions (see coder), so encoding and decoding cannot drift apart.
type message interface {
	fields(c *coder)
}

// codec is the gRPC codec of this service (forced on both ends, never registered globally).
type codec struct{}

func (codec) Name() string { return "svc-enginerpc" }

func (codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(message)
	if !ok {
		return nil, fmt.Errorf("enginerpc: cannot marshal %T", v)
	}
	c := coder{w: writer{b: make([]byte, 0, 128)}}
	c.w.u8(wireVersion)
	m.fields(&c)
	return c.w.b, nil
}

func (codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(message)
	if !ok {
		return fmt.Errorf("enginerpc: cannot unmarshal into %T", v)
	}
	c := coder{decoding: true, r: reader{b: data}}
	if ver := c.r.u8(); c.r.err == nil && ver != wireVersion {
		return fmt.Errorf("enginerpc: wire version %d, want %d", ver, wireVersion)
	}
	m.fields(&c)
	if c.r.err == nil && len(c.r.b) != 0 {
		c.r.err = errors.New("enginerpc: trailing bytes")
	}
	return c.r.err
}

// coder is one pass over a message's fields: encoding, it appends each field to w;
// decoding, it reads each field from r into the message. The field functions below take a
// pointer to the field and do whichever the pass is for.
type coder struct {
	decoding bool
	w        writer
	r        reader
}

// u8 codes a one-byte value (the engine's enums).
func u8[T ~uint8](c *coder, p *T) {
	if c.decoding {
		*p = T(c.r.u8())
	} else {
		c.w.u8(uint8(*p))
	}
}

// i64 codes a signed integer (prices, quantities, amounts, times, counts) as 8 bytes.
func i64[T ~int64 | ~int](c *coder, p *T) {
	if c.decoding {
		*p = T(c.r.i64())
	} else {
		c.w.i64(int64(*p))
	}
}

func u64(c *coder, p *uint64) {
	if c.decoding {
		*p = c.r.u64()
	} else {
		c.w.u64(*p)
	}
}

// id codes a 16-byte id (accounts, orders, transfers).
func id[T ~[16]byte](c *coder, p *T) {
	if c.decoding {
		*p = c.r.id()
	} else {
		c.w.id(*p)
	}
}

func boolean(c *coder, p *bool) {
	if c.decoding {
		*p = c.r.bool()
	} else {
		c.w.bool(*p)
	}
}

func str(c *coder, p *string) {
	if c.decoding {
		*p = c.r.str()
	} else {
		c.w.str(*p)
	}
}

// length codes the length n of what follows; decoding, it returns the length read, checked
// against the bytes left at min bytes per element.
func length(c *coder, n, min int) int {
	if c.decoding {
		return c.r.count(min)
	}
	c.w.uvarint(uint64(n))
	return n
}

// list codes a slice as its length and its elements, each at least min bytes on the wire;
// decoding, it allocates the slice.
func list[T any](c *coder, s *[]T, min int, elem func(*coder, *T)) {
	n := length(c, len(*s), min)
	if c.decoding {
		*s = make([]T, n)
	}
	for i := range *s {
		elem(c, &(*s)[i])
	}
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

func (s *status) fields(c *coder) {
	u8(c, &s.kind)
	str(c, &s.msg)
	boolean(c, &s.failed)
	u64(c, &s.offset)
}

// encode appends the status alone (tests build raw replies with it).
func (s *status) encode(w *writer) {
	c := coder{w: *w}
	s.fields(&c)
	*w = c.w
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

func (*empty) fields(*coder) {}

type commandMsg struct{ c engine.Command }

func (m *commandMsg) fields(c *coder) {
	x := &m.c
	u8(c, &x.Kind)
	i64(c, &x.Time)
	id(c, &x.Account)
	str(c, &x.Symbol)
	id(c, &x.OrderID)
	str(c, &x.ClientOrderID)
	u8(c, &x.Side)
	u8(c, &x.Type)
	u8(c, &x.TIF)
	u8(c, &x.STP)
	boolean(c, &x.PostOnly)
	i64(c, &x.Price)
	i64(c, &x.Qty)
	i64(c, &x.QuoteQty)
	u8(c, &x.Asset)
	i64(c, &x.Amount)
	id(c, &x.TransferID)
	str(c, &x.Metadata)
	u8(c, &x.Reason)
}

type submitReply struct {
	st  status
	res engine.Result
}

func (m *submitReply) fields(c *coder) {
	m.st.fields(c)
	res := &m.res
	u8(c, &res.Code)
	id(c, &res.OrderID)
	u8(c, &res.State)
	u8(c, &res.Reason)
	i64(c, &res.Filled)
	u64(c, &res.Seq)
	u64(c, &res.Offset)
	i64(c, &res.Cancelled)
}

// orderReq names an order by id, or by client order id when byClient is set.
type orderReq struct {
	acct     engine.AccountID
	byClient bool
	id       engine.OrderID
	clientID string
}

func (m *orderReq) fields(c *coder) {
	id(c, &m.acct)
	boolean(c, &m.byClient)
	id(c, &m.id)
	str(c, &m.clientID)
}

type orderReply struct {
	st   status
	ok   bool
	view engine.OrderView
}

func (m *orderReply) fields(c *coder) {
	m.st.fields(c)
	boolean(c, &m.ok)
	v := &m.view
	id(c, &v.ID)
	str(c, &v.ClientOrderID)
	id(c, &v.Account)
	str(c, &v.Symbol)
	u8(c, &v.Side)
	u8(c, &v.Type)
	u8(c, &v.TIF)
	boolean(c, &v.PostOnly)
	i64(c, &v.Price)
	i64(c, &v.Qty)
	i64(c, &v.QuoteQty)
	i64(c, &v.Filled)
	u8(c, &v.State)
	u8(c, &v.Reason)
	i64(c, &v.Time)
	str(c, &v.Metadata)
}

type accountReq struct{ acct engine.AccountID }

func (m *accountReq) fields(c *coder) { id(c, &m.acct) }

type balancesReply struct {
	st  status
	bal engine.Balances
}

func (m *balancesReply) fields(c *coder) {
	m.st.fields(c)
	n := length(c, len(m.bal), 16)
	if c.decoding && c.r.err == nil && n != len(m.bal) {
		c.r.err = fmt.Errorf("enginerpc: %d assets on the wire, %d here (mismatched versions)", n, len(m.bal))
		return
	}
	for i := range n {
		i64(c, &m.bal[i].Available)
		i64(c, &m.bal[i].Locked)
	}
}

type pairsReply struct {
	st    status
	pairs []engine.PairConfig
}

func (m *pairsReply) fields(c *coder) {
	m.st.fields(c)
	list(c, &m.pairs, 66, func(c *coder, p *engine.PairConfig) {
		str(c, &p.Symbol)
		u8(c, &p.Base)
		u8(c, &p.Quote)
		i64(c, &p.PriceDecimals)
		i64(c, &p.QtyDecimals)
		i64(c, &p.TickSize)
		i64(c, &p.StepSize)
		i64(c, &p.MinQty)
		i64(c, &p.MinNotional)
		i64(c, &p.MaxPrice)
		i64(c, &p.MaxQty)
	})
}

// statusReply answers Status: the status alone (failed flag and offset).
type statusReply struct{ st status }

func (m *statusReply) fields(c *coder) { m.st.fields(c) }

type depthReq struct {
	symbol string
	n      int
}

func (m *depthReq) fields(c *coder) {
	str(c, &m.symbol)
	if c.decoding {
		m.n = int(min(c.r.uvarint(), maxDepth))
	} else {
		c.w.uvarint(uint64(m.n))
	}
}

// maxDepth bounds the levels a Depth call asks for.
const maxDepth = 10000

type depthReply struct {
	st status
	d  engine.Depth
}

func (m *depthReply) fields(c *coder) {
	m.st.fields(c)
	str(c, &m.d.Symbol)
	u64(c, &m.d.Seq)
	for _, side := range []*[]engine.Level{&m.d.Bids, &m.d.Asks} {
		list(c, side, 24, func(c *coder, l *engine.Level) {
			i64(c, &l.Price)
			i64(c, &l.Qty)
			i64(c, &l.Count)
		})
	}
}
