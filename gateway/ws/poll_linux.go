package ws

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// iovec is the kernel's struct iovec.
type iovec = syscall.Iovec

// poller waits for readable sockets with one epoll set and reads them on its own
// goroutine: an idle connection costs no goroutine and no read buffer, only its entry in
// the set. Events carry the connection id, never the descriptor, so a descriptor the
// kernel reuses after a close is never mistaken for the old connection; reads and writes
// go through the socket's RawConn, which holds the descriptor open for the call.
//
// The epoll set itself waits in Go's netpoller (its descriptor is non-blocking and wrapped
// in an os.File): the poller goroutine parks like any network read and the runtime wakes
// it when the set has events. A goroutine blocked in epoll_wait instead holds a thread in
// a system call, and what it starts (an order op's worker) may wait in its P's run queue
// until sysmon takes that P back, and each wake-up must find a P again.
type poller struct {
	srv  *Server
	epfd int
	ep   *os.File        // epfd, registered with the runtime's netpoller
	raw  syscall.RawConn // ep's
	buf  []byte
	wake [2]int // a pipe that wakes EpollWait to stop
	once sync.Once
}

func newPoller(srv *Server) (*poller, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	p := &poller{srv: srv, epfd: fd, ep: os.NewFile(uintptr(fd), "epoll"), buf: make([]byte, 64<<10)}
	raw, err := p.ep.SyscallConn()
	if err != nil {
		_ = p.ep.Close()
		return nil, err
	}
	p.raw = raw
	if err := syscall.Pipe2(p.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		_ = p.ep.Close()
		return nil, err
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: -1, Pad: -1}
	if err := syscall.EpollCtl(fd, syscall.EPOLL_CTL_ADD, p.wake[0], &ev); err != nil {
		p.release()
		return nil, err
	}
	return p, nil
}

func (p *poller) release() {
	_ = p.ep.Close()
	_ = syscall.Close(p.wake[0])
	_ = syscall.Close(p.wake[1])
}

// add registers c's socket for reading.
func (p *poller) add(c *conn) error {
	var err error
	cerr := c.rc.Control(func(fd uintptr) {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(uint32(c.id)), Pad: int32(uint32(c.id >> 32))}
		err = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	return errors.Join(cerr, err)
}

// remove takes c's socket out of the set (before it is closed).
func (p *poller) remove(c *conn) {
	_ = c.rc.Control(func(fd uintptr) {
		_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
	})
}

// run reads ready sockets until stop.
func (p *poller) run() {
	events := make([]syscall.EpollEvent, 256)
	for {
		var n int
		var err error
		rerr := p.raw.Read(func(fd uintptr) bool {
			n, err = syscall.EpollWait(int(fd), events, 0)
			return n != 0 || err != nil && !errors.Is(err, syscall.EINTR)
		})
		if err == nil {
			err = rerr
		}
		if err != nil {
			p.srv.cfg.Log.Error("websocket poller", "error", err)
			return
		}
		for i := 0; i < n; i++ {
			ev := &events[i]
			if ev.Fd == -1 && ev.Pad == -1 {
				return // stop
			}
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			c := p.srv.lookup(id)
			if c == nil {
				continue
			}
			p.read(c)
		}
	}
}

func (p *poller) read(c *conn) {
	var n int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), p.buf)
		return true
	})
	switch {
	case err != nil:
		p.srv.shutdown(c)
	case rerr == syscall.EAGAIN || rerr == syscall.EINTR:
	case rerr != nil || n <= 0:
		p.srv.shutdown(c) // reset or end of stream
	default:
		c.received(p.buf[:n])
	}
}

func (p *poller) stop() {
	p.once.Do(func() {
		_, _ = syscall.Write(p.wake[1], []byte{1})
	})
}

// writev writes w.bufs to c's socket without blocking: n bytes went out; wouldBlock
// when the socket's buffer is full.
func (s *Server) writev(c *conn, w *writerScratch) (n int, wouldBlock bool, err error) {
	if len(w.bufs) == 0 {
		return 0, false, nil
	}
	w.iov = w.iov[:0]
	for _, b := range w.bufs {
		if len(b) == 0 {
			continue
		}
		v := iovec{Base: &b[0]}
		v.SetLen(len(b))
		w.iov = append(w.iov, v)
	}
	if len(w.iov) == 0 {
		return 0, false, nil
	}
	var errno syscall.Errno
	cerr := c.rc.Write(func(fd uintptr) bool {
		r, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&w.iov[0])), uintptr(len(w.iov)))
		n, errno = int(r), e
		return true
	})
	clear(w.iov)
	switch {
	case cerr != nil:
		return 0, false, cerr
	case errno == syscall.EAGAIN:
		return 0, true, nil
	case errno == syscall.EINTR:
		return 0, false, nil
	case errno != 0:
		return 0, false, errno
	}
	return n, false, nil
}
