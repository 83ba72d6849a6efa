package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// bareBroadcaster is the anchor of `svcbench ws`: the least a server can do to deliver the
// hub's order-book diffs. It accepts on a goroutine of its own and does each handshake
// (HTTP upgrade, the subscribe, an empty snapshot) on a goroutine per new connection, off
// the write path; after that a connection is a socket in a list: no goroutine, buffer,
// book, queue, conflation or auth. Every interval it frames one diff (its levels taken in
// turn from diffs the hub really sent on the same channel, so the frames are the same
// sizes) once, on time, into a log; its writers (one per core) visit their connections
// over and over and give each what it has not taken of the log in one non-blocking
// writev, as the hub's writers do, so a connection that fell behind takes its pending
// frames in one call. Like the hub, a reader 8 diffs behind gets one snapshot in their
// place (a snapshot message the size of a diff; the subscribers count diffs only), so
// neither server can buy messages per CPU-second with unbounded delay.
type bareBroadcaster struct {
	ln      net.Listener
	every   time.Duration
	channel string

	mu        sync.Mutex
	cond      sync.Cond // a frame or a connection arrived (writers wait on it, under mu)
	conns     []*bareConn
	log       [][]byte // every diff frame of the run, in order: frame i has sequence i+1
	seq       uint64
	on        atomic.Bool // sending (a measured round)
	stop      chan struct{}
	done      chan struct{}
	hs        sync.WaitGroup // handshakes in progress
	sent      atomic.Int64   // frames written whole
	conflated atomic.Int64   // snapshots written in place of a lagging reader's diffs
	slow      atomic.Int64   // connections dropped with too much pending
	hsErr     atomic.Int64   // failed handshakes

	levels [][]byte // `"bids":[...],"asks":[...]` of captured hub diffs
}

// bareConn is one subscriber of the bare broadcaster: its socket and how far into the log
// it has been written; only the writer that owns its shard touches it after the handshake.
type bareConn struct {
	nc   net.Conn
	rc   syscall.RawConn
	head [][]byte // written before log[next:]: a snapshot standing for conflated diffs (after the rest of a frame half written)
	next int      // the first frame of the log not written whole
	off  int      // bytes of head[0], or else of log[next], already written
	dead bool
}

// bareConflateAt is the hub's default ConflateAt: a connection this many diffs behind
// gets one snapshot in their place, as the hub's lagging readers do (so the anchor, too,
// bounds what a slow reader's delay can grow to, and delivers no diff the hub would not).
const bareConflateAt = 8

func startBareBroadcaster(every time.Duration, channel string, levels [][]byte) (*bareBroadcaster, error) {
	if len(levels) == 0 {
		levels = [][]byte{[]byte(`"bids":[["1499.99","1.00"]],"asks":[]`)}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &bareBroadcaster{ln: ln, every: every, channel: channel, levels: levels, stop: make(chan struct{}), done: make(chan struct{})}
	b.cond.L = &b.mu
	go b.accept()
	go b.run()
	return b, nil
}

func (b *bareBroadcaster) accept() {
	for {
		nc, err := b.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil { // EMFILE and the like: the backlog waits
			b.hsErr.Add(1)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		b.hs.Add(1)
		go func() {
			defer b.hs.Done()
			if err := b.handshake(nc); err != nil {
				b.hsErr.Add(1)
				_ = nc.Close()
			}
		}()
	}
}

// handshake upgrades nc (RFC 6455 section 4.2), reads the subscribe and sends an empty
// snapshot at the current sequence; the connection then gets every diff after it.
func (b *bareBroadcaster) handshake(nc net.Conn) error {
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(nc, 1024)
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	key := req.Header.Get("Sec-WebSocket-Key")
	if key == "" {
		return errors.New("not a websocket upgrade")
	}
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(h[:]) + "\r\n\r\n"
	if _, err := io.WriteString(nc, resp); err != nil {
		return err
	}
	// the subscribe: one small masked text frame (its content does not matter here)
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return err
	}
	n := int(hdr[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return err
		}
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		return errors.New("subscribe too big")
	}
	if hdr[1]&0x80 != 0 {
		n += 4
	}
	if _, err := br.Discard(n); err != nil {
		return err
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return errors.New("not TCP")
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	_ = nc.SetDeadline(time.Time{})
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := nc.Write(wsFrame(b.message(b.seq, nil))); err != nil {
		return err
	}
	b.conns = append(b.conns, &bareConn{nc: nc, rc: rc, next: len(b.log)})
	b.cond.Broadcast()
	return nil
}

func (b *bareBroadcaster) URL() string { return "ws://" + b.ln.Addr().String() + "/v1/ws" }

// message is a snapshot of the empty book at seq (levels nil) or the diff seq..seq with levels.
func (b *bareBroadcaster) message(seq uint64, levels []byte) []byte {
	if levels == nil {
		return b.snapshot(seq, []byte(`"bids":[],"asks":[]`))
	}
	m := make([]byte, 0, 64+len(levels))
	m = append(m, `{"type":"diff","channel":"`...)
	m = append(m, b.channel...)
	m = append(m, `","first_sequence":`...)
	m = strconv.AppendUint(m, seq, 10)
	m = append(m, `,"last_sequence":`...)
	m = strconv.AppendUint(m, seq, 10)
	m = append(m, ',')
	m = append(m, levels...)
	return stamped(m)
}

// snapshot is a snapshot message at seq with levels (the size of a diff: the bare
// broadcaster keeps no book).
func (b *bareBroadcaster) snapshot(seq uint64, levels []byte) []byte {
	m := make([]byte, 0, 64+len(levels))
	m = append(m, `{"type":"snapshot","channel":"`...)
	m = append(m, b.channel...)
	m = append(m, `","sequence":`...)
	m = strconv.AppendUint(m, seq, 10)
	m = append(m, ',')
	m = append(m, levels...)
	return stamped(m)
}

// stamped ends a message with its timestamp, as the hub's messages end.
func stamped(m []byte) []byte {
	m = append(m, `,"timestamp":`...)
	m = strconv.AppendInt(m, time.Now().UnixMilli(), 10)
	return append(m, '}')
}

// wsFrame frames msg as one unmasked text frame.
func wsFrame(msg []byte) []byte {
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
	return append(f, msg...)
}

// run makes one frame per interval while on, on time whatever the writers are doing,
// and appends it to the log every connection reads from.
func (b *bareBroadcaster) run() {
	defer close(b.done)
	t := time.NewTicker(b.every)
	defer t.Stop()
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.write(w, workers)
		}()
	}
	defer wg.Wait()
	var k int
	for {
		select {
		case <-b.stop:
			b.mu.Lock()
			b.cond.Broadcast()
			b.mu.Unlock()
			return
		case <-t.C:
		}
		if !b.on.Load() {
			continue
		}
		b.mu.Lock()
		b.seq++
		b.log = append(b.log, wsFrame(b.message(b.seq, b.levels[k%len(b.levels)])))
		k++
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

// write is writer w of n: it visits its share of the connections over and over, giving
// each what it has not taken of the log in one non-blocking writev, and sleeps when a
// whole pass found nothing to write.
func (b *bareBroadcaster) write(w, n int) {
	sc := &bareScratch{}
	for {
		b.mu.Lock()
		log, conns := b.log, b.conns
		b.mu.Unlock()
		var whole int64
		pending, wrote := false, false
		var snap []byte // a snapshot at the log's end, made once per pass if a reader lags
		for i := w; i < len(conns); i += n {
			c := conns[i]
			if c.dead || (c.next >= len(log) && len(c.head) == 0) {
				continue
			}
			pending = true
			if len(log)-c.next >= bareConflateAt {
				if snap == nil {
					snap = wsFrame(b.snapshot(uint64(len(log)), b.levels[len(log)%len(b.levels)]))
				}
				switch {
				case len(c.head) == 0 && c.off > 0: // a frame half written must be finished, or the stream is corrupt
					c.head = append(c.head, log[c.next][c.off:], snap)
					c.off = 0
				case len(c.head) == 0, len(c.head) == 1 && c.off > 0: // (a snapshot being written stays)
					c.head = append(c.head, snap)
				default: // the last is a snapshot not started yet: the newer one replaces it
					c.head[len(c.head)-1] = snap
				}
				c.next = len(log)
				b.conflated.Add(1)
			}
			k, progressed := sc.give(c, log, &b.slow)
			whole += k
			wrote = wrote || progressed
		}
		b.sent.Add(whole)
		select {
		case <-b.stop:
			return
		default:
		}
		if wrote {
			continue
		}
		if pending { // every socket with frames pending is full: let the readers read
			time.Sleep(time.Millisecond)
			continue
		}
		b.mu.Lock()
		for len(b.log) == len(log) && len(b.conns) == len(conns) {
			select {
			case <-b.stop:
				b.mu.Unlock()
				return
			default:
			}
			b.cond.Wait()
		}
		b.mu.Unlock()
	}
}

// bareScratch is one writer's reusable iovec list.
type bareScratch struct {
	bufs [][]byte
	iov  []iovec
}

// give writes the frames of log that c has not taken, from c.next, in one writev without
// blocking; it returns how many frames went out whole and whether any byte did.
func (sc *bareScratch) give(c *bareConn, log [][]byte, slow *atomic.Int64) (int64, bool) {
	if len(log)-c.next > 256 {
		c.dead = true
		slow.Add(1)
		_ = c.nc.Close()
		return 0, false
	}
	sc.bufs = sc.bufs[:0]
	for i, p := range c.head {
		if i == 0 {
			p = p[c.off:]
		}
		sc.bufs = append(sc.bufs, p)
	}
	for i, p := range log[c.next:] {
		if i == 0 && len(c.head) == 0 {
			p = p[c.off:]
		}
		sc.bufs = append(sc.bufs, p)
	}
	n, err := writevNonBlocking(c.rc, sc.bufs, &sc.iov)
	clear(sc.bufs)
	if err != nil {
		c.dead = true
		_ = c.nc.Close()
		return 0, false
	}
	progressed := n > 0
	var whole int64
	for len(c.head) > 0 {
		rest := len(c.head[0]) - c.off
		if n < rest {
			c.off += n
			return 0, progressed
		}
		n -= rest
		c.head[0] = nil
		c.head, c.off = c.head[1:], 0
	}
	c.head = nil
	for c.next < len(log) {
		rest := len(log[c.next]) - c.off
		if n < rest {
			c.off += n
			break
		}
		n -= rest
		c.off = 0
		c.next++
		whole++
	}
	return whole, progressed
}

func (b *bareBroadcaster) Close() {
	_ = b.ln.Close()
	close(b.stop)
	<-b.done
	b.mu.Lock()
	for _, c := range b.conns {
		_ = c.nc.Close()
	}
	b.conns = nil
	b.mu.Unlock()
	b.hs.Wait()
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

func init() {
	commands["ws-bare"] = command{summary: "(internal) the bare broadcaster process of `svcbench ws`", run: runWSBare}
}

// bareStats is what the bare broadcaster process reports after each round.
type bareStats struct {
	Sent, Slow, Conflated, HandshakeErrors int64
}

// runWSBare is the bare broadcaster in a process of its own (its CPU is measured from
// outside, and its sockets do not share the hub's descriptor limit): it prints its URL,
// then sends while "on" and, at "off", prints its counters as one JSON line.
func runWSBare(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ws-bare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	every := fs.Duration("every", 20*time.Millisecond, "interval between diffs")
	channel := fs.String("channel", "orderbook:"+wsSymbol, "the channel its messages name")
	levelsFile := fs.String("levels", "", "JSON array of the diffs' level parts to send in turn")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raiseNoFile()
	var levels [][]byte
	if *levelsFile != "" {
		raw, err := os.ReadFile(*levelsFile)
		if err != nil {
			return err
		}
		var ls []string
		if err := json.Unmarshal(raw, &ls); err != nil {
			return err
		}
		for _, l := range ls {
			levels = append(levels, []byte(l))
		}
	}
	b, err := startBareBroadcaster(*every, *channel, levels)
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Fprintln(stdout, b.URL())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "on":
			b.on.Store(true)
		case "off":
			b.on.Store(false)
			out, _ := json.Marshal(bareStats{Sent: b.sent.Load(), Slow: b.slow.Load(), Conflated: b.conflated.Load(), HandshakeErrors: b.hsErr.Load()})
			fmt.Fprintln(stdout, string(out))
		}
	}
	return nil
}

// bareProcess is the parent's handle on a ws-bare child.
type bareProcess struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	url  string
	last bareStats
}

func startBareProcess(every time.Duration, channel string, levels [][]byte, stderr io.Writer) (*bareProcess, error) {
	ls := make([]string, len(levels))
	for i, l := range levels {
		ls[i] = string(l)
	}
	f, err := os.CreateTemp("", "svcbench-levels-*.json")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if err := json.NewEncoder(f).Encode(ls); err != nil {
		_ = f.Close()
		return nil, err
	}
	_ = f.Close()
	p := &bareProcess{cmd: exec.Command(os.Args[0], "ws-bare", "--every", every.String(), "--channel", channel, "--levels", f.Name())}
	p.cmd.Stderr = stderr
	p.in, _ = p.cmd.StdinPipe()
	out, _ := p.cmd.StdoutPipe()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	p.out = bufio.NewScanner(out)
	if !p.out.Scan() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		return nil, errors.New("ws-bare ended: " + fmt.Sprint(p.out.Err()))
	}
	p.url = p.out.Text()
	return p, nil
}

func (p *bareProcess) URL() string { return p.url }
func (p *bareProcess) Pid() int    { return p.cmd.Process.Pid }

func (p *bareProcess) On() { fmt.Fprintln(p.in, "on") }

// Off stops sending and returns the counters' growth since the last Off.
func (p *bareProcess) Off() (bareStats, error) {
	fmt.Fprintln(p.in, "off")
	if !p.out.Scan() {
		return bareStats{}, errors.New("ws-bare ended: " + fmt.Sprint(p.out.Err()))
	}
	var st bareStats
	if err := json.Unmarshal(p.out.Bytes(), &st); err != nil {
		return st, err
	}
	d := bareStats{Sent: st.Sent - p.last.Sent, Slow: st.Slow - p.last.Slow, Conflated: st.Conflated - p.last.Conflated, HandshakeErrors: st.HandshakeErrors}
	p.last = st
	return d, nil
}

func (p *bareProcess) Close() {
	_ = p.in.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}
