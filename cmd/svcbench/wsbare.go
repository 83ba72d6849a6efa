package main

import (
	"bytes"
	"encoding/binary"
	"net"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"
)

// bareBroadcaster is the anchor of `svcbench ws`: the least a server can do to deliver the
// hub's order-book diffs. It upgrades with the same library, answers a subscribe with an
// empty snapshot, and then, every flush interval, frames one diff (its levels taken in turn
// from diffs the hub really sent, so the frames are the same sizes) once and writes it to
// every subscriber with one write each, from one writer per core. No engine, book, queue,
// conflation, auth or per-connection state beyond the socket. A tick that takes longer than
// the interval delays the next (no diff is skipped, so no subscriber sees a gap).
type bareBroadcaster struct {
	ln    net.Listener
	srv   *fasthttp.Server
	every time.Duration

	mu    sync.Mutex
	conns []net.Conn
	seq   uint64
	on    atomic.Bool // sending (a measured round)
	stop  chan struct{}
	done  chan struct{}
	sent  atomic.Int64 // frames written

	levels [][]byte // `"bids":[...],"asks":[...]` of captured hub diffs
}

const bareChannel = "orderbook:" + wsSymbol

func startBareBroadcaster(every time.Duration, levels [][]byte) (*bareBroadcaster, error) {
	if len(levels) == 0 {
		levels = [][]byte{[]byte(`"bids":[["1499.99","1.00"]],"asks":[]`)}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &bareBroadcaster{ln: ln, every: every, levels: levels, stop: make(chan struct{}), done: make(chan struct{})}
	up := websocket.FastHTTPUpgrader{ReadBufferSize: 256, WriteBufferSize: 256, CheckOrigin: func(*fasthttp.RequestCtx) bool { return true }}
	b.srv = &fasthttp.Server{Concurrency: 1 << 20, Handler: func(ctx *fasthttp.RequestCtx) {
		_ = up.Upgrade(ctx, func(c *websocket.Conn) {
			defer c.Close()
			if _, _, err := c.ReadMessage(); err != nil { // the subscribe
				return
			}
			b.mu.Lock()
			snap := b.message(b.seq, nil)
			err := c.WriteMessage(websocket.TextMessage, snap)
			if err == nil {
				b.conns = append(b.conns, c.NetConn())
			}
			b.mu.Unlock()
			for err == nil { // hold the connection; the subscriber sends nothing more
				_, _, err = c.ReadMessage()
			}
			b.mu.Lock()
			if i := slices.Index(b.conns, c.NetConn()); i >= 0 {
				b.conns = slices.Delete(slices.Clone(b.conns), i, i+1) // a tick may be writing the old slice
			}
			b.mu.Unlock()
		})
	}}
	go func() { _ = b.srv.Serve(ln) }()
	go b.run()
	return b, nil
}

func (b *bareBroadcaster) URL() string { return "ws://" + b.ln.Addr().String() + "/v1/ws" }

// message is a snapshot at seq (levels nil) or the diff seq..seq with levels.
func (b *bareBroadcaster) message(seq uint64, levels []byte) []byte {
	m := make([]byte, 0, 64+len(levels))
	if levels == nil {
		m = append(m, `{"type":"snapshot","channel":"`+bareChannel+`","sequence":`...)
		m = strconv.AppendUint(m, seq, 10)
		m = append(m, `,"bids":[],"asks":[]`...)
	} else {
		m = append(m, `{"type":"diff","channel":"`+bareChannel+`","first_sequence":`...)
		m = strconv.AppendUint(m, seq, 10)
		m = append(m, `,"last_sequence":`...)
		m = strconv.AppendUint(m, seq, 10)
		m = append(m, ',')
		m = append(m, levels...)
	}
	m = append(m, `,"timestamp":`...)
	m = strconv.AppendInt(m, time.Now().UnixMilli(), 10)
	return append(m, '}')
}

func (b *bareBroadcaster) run() {
	defer close(b.done)
	t := time.NewTicker(b.every)
	defer t.Stop()
	workers := runtime.GOMAXPROCS(0)
	var k int
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		if !b.on.Load() {
			continue
		}
		b.mu.Lock()
		b.seq++
		msg := b.message(b.seq, b.levels[k%len(b.levels)])
		k++
		conns := b.conns
		b.mu.Unlock()
		f := make([]byte, 0, len(msg)+10)
		f = append(f, 0x81)
		switch n := len(msg); {
		case n < 126:
			f = append(f, byte(n))
		case n <= 0xFFFF:
			f = binary.BigEndian.AppendUint16(append(f, 126), uint16(n))
		default:
			f = binary.BigEndian.AppendUint64(append(f, 127), uint64(n))
		}
		f = append(f, msg...)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var n int64
				for i := w; i < len(conns); i += workers {
					if _, err := conns[i].Write(f); err == nil {
						n++
					}
				}
				b.sent.Add(n)
			}()
		}
		wg.Wait()
	}
}

func (b *bareBroadcaster) Close() {
	close(b.stop)
	<-b.done
	_ = b.srv.Shutdown()
	b.mu.Lock()
	for _, c := range b.conns {
		_ = c.Close()
	}
	b.conns = nil
	b.mu.Unlock()
}

// diffLevels is the `"bids":...,"asks":...` part of a hub diff message (nil if it is not one).
func diffLevels(m []byte) []byte {
	if !bytes.HasPrefix(m, []byte(`{"type":"diff"`)) {
		return nil
	}
	i := bytes.Index(m, []byte(`"bids":`))
	j := bytes.LastIndex(m, []byte(`,"timestamp":`))
	if i < 0 || j < i {
		return nil
	}
	return bytes.Clone(m[i:j])
}

func avgLen(v [][]byte) int {
	if len(v) == 0 {
		return 0
	}
	n := 0
	for _, b := range v {
		n += len(b)
	}
	return n / len(v)
}

// medianOfRatios is the median over rounds of a[i]/b[i] (same-round ratios).
func medianOfRatios(a, b []float64) float64 {
	var rs []float64
	for i := range a {
		if i < len(b) && b[i] > 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	return median(rs)
}
